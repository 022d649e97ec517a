// The queue-based baselines of Quincy §3: the fair shares of §3.3 on worked
// examples, GF's sticky slots and GFH removing them (§3.5), and GFP killing
// the most recently scheduled over-quota tasks (§3.4).
#include "scheduler/queue_policy.h"

#include <gtest/gtest.h>

#include "scheduler/fair_share.h"
#include "scheduler/testing/scenario.h"

namespace copse::scheduler {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

using testing::kKill;
using testing::kStart;

std::vector<int> Shares(int m, const std::vector<int>& demand) {
  std::vector<JobDemand> jobs;
  for (int n : demand) jobs.push_back({n, 0, JobDemand{}.cap});
  return QuincyFairShares(m, jobs);
}

TEST(FairShareTest, QuincySection33Examples) {
  // M = 10, K = 3: A* = min(3, N_j) = (2, 3, 3); the 2 left over go equally
  // to the jobs with more workers.
  EXPECT_EQ(Shares(10, {2, 10, 10}), (std::vector<int>{2, 4, 4}));
  // M = 10, K = 4: A* = (1, 1, 2, 2); 4 left for the two big jobs.
  EXPECT_EQ(Shares(10, {1, 1, 10, 20}), (std::vector<int>{1, 1, 4, 4}));
  // A leftover slot that does not divide goes to the earlier job.
  EXPECT_EQ(Shares(11, {10, 10, 10}), (std::vector<int>{4, 4, 3}));
  // Repeated division: job 2 is capped at 4 and its excess flows on.
  EXPECT_EQ(Shares(12, {1, 4, 30}), (std::vector<int>{1, 4, 7}));
  // Sum A_j = min(M, sum N_j).
  EXPECT_EQ(Shares(10, {1, 2, 3}), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(Shares(0, {5, 5}), (std::vector<int>{0, 0}));
}

TEST(FairShareTest, BoundsNarrowShares) {
  std::vector<JobDemand> jobs = {{10, 0, 2}, {10, 6, JobDemand{}.cap}, {10, 0, JobDemand{}.cap}};
  EXPECT_EQ(QuincyFairShares(12, jobs), (std::vector<int>{2, 6, 4}));
}

TEST(FairShareTest, NonPreemptiveSharesKeepWhatRuns) {
  // Job 0 runs 6 > its share 3: it keeps 6; the others shrink in proportion.
  EXPECT_EQ(NonPreemptiveShares(10, {3, 3, 4}, {6, 0, 1}), (std::vector<int>{6, 2, 2}));
  EXPECT_EQ(NonPreemptiveShares(10, {5, 5}, {2, 3}), (std::vector<int>{5, 5}));
}

TEST(FairShareTest, WeightedPoolsGetMinSharesThenWeights) {
  std::vector<double> s = WeightedFairShares(10, {{1, 0, 10}, {3, 0, 10}});
  EXPECT_NEAR(s[0], 2.5, 1e-6);
  EXPECT_NEAR(s[1], 7.5, 1e-6);
  s = WeightedFairShares(10, {{1, 6, 10}, {3, 0, 10}, {1, 0, 1}});
  EXPECT_NEAR(s[0], 6, 1e-6);
  EXPECT_NEAR(s[2], 1, 1e-6);
  EXPECT_NEAR(s[1], 3, 1e-6);
}

// One rack, c0..c3, one slot each. Job 1: a1 (10 s, data on c0), a2 (c1),
// a3, a4 (c3). Job 2: b1, b3 (c2), b2 (c3). Shares are (2, 2): a1→c0,
// a2→c1, b1→c2, b2→c3. When a1 ends at 10 s job 1 is the only unblocked
// job, so under GF c0 sticks to it (a3, whose data is on c3).
void StickyScenario(Driver& d) {
  d.AddJob(MakeJob(1, 0,
                   {MakeTask(21, 10, DataOn(0, 0, 1)), MakeTask(22, 100, DataOn(1, 0, 1)),
                    MakeTask(23, 100, DataOn(3, 0, 1)), MakeTask(24, 100, DataOn(3, 0, 1))}));
  d.AddJob(MakeJob(2, 0,
                   {MakeTask(31, 100, DataOn(2, 0, 1)), MakeTask(32, 100, DataOn(3, 0, 1)),
                    MakeTask(33, 100, DataOn(2, 0, 1))}));
}

TEST(QueuePolicyTest, GFHasStickySlots) {
  auto s = MakeScheduler("GF", Topology::Uniform(1, 4));
  Driver d(*s);
  StickyScenario(d);
  d.AddJob(MakeJob(3, 11, {MakeTask(41, 100, DataOn(0, 0, 1))}));
  ASSERT_TRUE(d.RunUntil(Sec(20)).ok());
  EXPECT_EQ(Acts(d, 0, 0),
            (std::vector<Act>{
                {0, kStart, 21, 0}, {0, kStart, 22, 1}, {0, kStart, 31, 2}, {0, kStart, 32, 3}}));
  EXPECT_EQ(Acts(d, 1, 20), (std::vector<Act>{{10, kStart, 23, 0}}));
}

// GFH (M_H = 1, Δ_H = 5 s): job 1 stays blocked at 10 s, so when job 3
// arrives at 11 s with data on c0 it takes c0.
TEST(QueuePolicyTest, GFHLetsAnotherJobStealTheSlot) {
  auto s = MakeScheduler("GFH", Topology::Uniform(1, 4),
                         {{"hysteresis_margin", 1}, {"hysteresis_delay", 5}});
  Driver d(*s);
  StickyScenario(d);
  d.AddJob(MakeJob(3, 11, {MakeTask(41, 100, DataOn(0, 0, 1))}));
  ASSERT_TRUE(d.RunUntil(Sec(20)).ok());
  EXPECT_EQ(Acts(d, 1, 20), (std::vector<Act>{{11, kStart, 41, 0}}));
}

// Without a thief, job 1 is unblocked Δ_H after it fell below its share.
TEST(QueuePolicyTest, GFHUnblocksAfterTheDelay) {
  auto s = MakeScheduler("GFH", Topology::Uniform(1, 4),
                         {{"hysteresis_margin", 1}, {"hysteresis_delay", 5}});
  Driver d(*s);
  StickyScenario(d);
  ASSERT_TRUE(d.RunUntil(Sec(20)).ok());
  EXPECT_EQ(Acts(d, 1, 20), (std::vector<Act>{{15, kStart, 23, 0}}));
}

// Job 1 fills c0..c3 with a1..a4, started at 0, 1, 2, 3 s. Job 2 arrives at
// 5 s with two tasks: shares become (2, 2) and GFP kills a4 then a3, the most
// recently scheduled; b1, b2 take their computers.
void HogScenario(Driver& d) {
  std::vector<TaskPlan> a;
  for (int i = 0; i < 4; ++i) a.push_back(MakeTask(21 + i, 100, {}, i));
  d.AddJob(MakeJob(1, 0, a));
  d.AddJob(MakeJob(2, 5, {MakeTask(31, 100), MakeTask(32, 100)}));
}

TEST(QueuePolicyTest, GFPKillsMostRecentlyScheduledOverQuotaTasks) {
  auto s = MakeScheduler("GFP", Topology::Uniform(1, 4));
  Driver d(*s);
  HogScenario(d);
  ASSERT_TRUE(d.RunUntil(Sec(10)).ok());
  EXPECT_EQ(Acts(d, 4, 10),
            (std::vector<Act>{
                {5, kKill, 24, 3}, {5, kKill, 23, 2}, {5, kStart, 31, 2}, {5, kStart, 32, 3}}));
  auto& q = dynamic_cast<QueuePolicy&>(s->policy());
  EXPECT_EQ(q.share(1), 2);
  EXPECT_EQ(q.share(2), 2);
}

TEST(QueuePolicyTest, GFDoesNotKill) {
  auto s = MakeScheduler("GF", Topology::Uniform(1, 4));
  Driver d(*s);
  HogScenario(d);
  ASSERT_TRUE(d.RunUntil(Sec(10)).ok());
  EXPECT_TRUE(Acts(d, 4, 10).empty());
  EXPECT_EQ(dynamic_cast<QueuePolicy&>(s->policy()).share(1), 2);
}

// G takes the computer's queue, then the rack's, then the cluster's.
TEST(QueuePolicyTest, GPrefersComputerThenRackQueue) {
  auto s = MakeScheduler("G", Topology::Uniform(2, 2));
  Driver d(*s);
  d.AddJob(MakeJob(1, 0,
                   {MakeTask(1, 10, {}), MakeTask(2, 10, DataOn(2, 1, 1)),
                    MakeTask(3, 10, DataOn(1, 0, 1)), MakeTask(4, 10, DataOn(1, 0, 1))}));
  ASSERT_TRUE(d.RunUntil(Sec(1)).ok());
  // c0: its queue is empty, its rack's holds 3 then 4; c1: 4 (3 is gone);
  // c2: 2; c3: rack 1's queue is empty, so X gives 1.
  EXPECT_EQ(Acts(d, 0, 0),
            (std::vector<Act>{
                {0, kStart, 3, 0}, {0, kStart, 4, 1}, {0, kStart, 2, 2}, {0, kStart, 1, 3}}));
}

}  // namespace
}  // namespace copse::scheduler

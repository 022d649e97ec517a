// Delay scheduling (delay-scheduling-eurosys10 Algorithm 3) in the Hadoop
// Fair Scheduler policy.
#include "scheduler/hfs_policy.h"

#include <gtest/gtest.h>

#include "scheduler/testing/scenario.h"

namespace copse::scheduler {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

using testing::kStart;

// Racks r0 = {c0, c1}, r1 = {c2, c3}; W1 = 5 s, W2 = 10 s. Job 1's task
// (no locality, 20 s) takes c0 at 0 s. Job 2 arrives at 1 s, at the head of
// the queue, with five tasks whose data is on c0: a1 (runs 24 s) and a2..a5.
//   1 s   only c1 (rack-local) and c2, c3 (off-rack) are free: skipped.
//   6 s   waited W1: a1 rack-local on c1 (level 1).
//   16 s  level 1 and waited W2 since: a2 off-rack on c2, then (level 2) a3
//         on c3.
//   20 s  job 1 ends, c0 frees: a4 node-local, back to level 0.
//   30 s  a1 ends, c1 frees: at level 0 a rack-local launch needs W1 again.
//   35 s  a5 rack-local on c1.
TEST(HfsPolicyTest, DelaySchedulingWaitsW1ThenW2AndResetsOnNodeLocalLaunch) {
  auto s = MakeScheduler("HFS", Topology::Uniform(2, 2),
                         {{"node_locality_wait", 5}, {"rack_locality_wait", 10}});
  auto& hfs = dynamic_cast<HfsPolicy&>(s->policy());
  Driver d(*s);
  d.AddJob(MakeJob(1, 0, {MakeTask(10, 20)}));
  std::vector<TaskPlan> a = {MakeTask(21, 24, DataOn(0, 0, 1))};
  for (TaskId t = 22; t <= 25; ++t) a.push_back(MakeTask(t, 1000, DataOn(0, 0, 1)));
  d.AddJob(MakeJob(2, 1, a));
  ASSERT_TRUE(d.RunUntil(Sec(15.9)).ok());
  EXPECT_EQ(hfs.level(2), 1);
  ASSERT_TRUE(d.RunUntil(Sec(19.9)).ok());
  EXPECT_EQ(hfs.level(2), 2);
  ASSERT_TRUE(d.RunUntil(Sec(20)).ok());
  EXPECT_EQ(hfs.level(2), 0);
  EXPECT_EQ(hfs.wait(2), Duration{0});
  ASSERT_TRUE(d.RunUntil(Sec(40)).ok());
  EXPECT_EQ(Acts(d, 0.5, 40), (std::vector<Act>{{6, kStart, 21, 1},
                                                {16, kStart, 22, 2},
                                                {16, kStart, 23, 3},
                                                {20, kStart, 25 - 1, 0},
                                                {35, kStart, 25, 1}}));
}

// A node-local task launches at once, whatever the waits.
TEST(HfsPolicyTest, NodeLocalLaunchesImmediately) {
  auto s = MakeScheduler("HFS", Topology::Uniform(2, 2),
                         {{"node_locality_wait", 100}, {"rack_locality_wait", 100}});
  Driver d(*s);
  d.AddJob(MakeJob(1, 0, {MakeTask(1, 5, DataOn(3, 1, 1)), MakeTask(2, 5, DataOn(2, 1, 1))}));
  ASSERT_TRUE(d.RunUntil(Sec(1)).ok());
  EXPECT_EQ(Acts(d, 0, 1), (std::vector<Act>{{0, kStart, 2, 2}, {0, kStart, 1, 3}}));
}

// Pools: weights split the cluster; a pool below its minimum share for its
// timeout gets tasks killed for it, most recently launched first, from
// pools above their fair share.
TEST(HfsPolicyTest, MinSharePreemptionKillsNewestTasksOfPoolsAboveShare) {
  auto s = MakeScheduler("HFS", Topology::Uniform(1, 4),
                         {{"node_locality_wait", 0}, {"rack_locality_wait", 0}});
  Driver d(*s);
  JobPlan hog = MakeJob(1, 0, {});
  for (int i = 0; i < 4; ++i) hog.tasks.push_back(MakeTask(10 + i, 1000, {}, i));
  hog.attributes.pool = {"batch", 1.0, 0, false, kNever};
  d.AddJob(hog);
  JobPlan urgent = MakeJob(2, 10, {MakeTask(20, 100), MakeTask(21, 100)});
  urgent.attributes.pool = {"prod", 1.0, 2, false, Sec(3)};
  d.AddJob(urgent);
  ASSERT_TRUE(d.RunUntil(Sec(20)).ok());
  // Below its minimum share of 2 from 10 s; at 13 s the two newest hog
  // tasks are killed and the prod tasks start in their slots.
  EXPECT_EQ(Acts(d, 5, 20), (std::vector<Act>{{13, Decision::Kind::kKillTask, 13, 3},
                                              {13, Decision::Kind::kKillTask, 12, 2},
                                              {13, kStart, 20, 2},
                                              {13, kStart, 21, 3}}));
}

// Fair-share preemption: a pool below half its fair share for
// fair_share_timeout gets up to its fair share back, taken from the newest
// tasks of pools above theirs, never pushing those below their share.
TEST(HfsPolicyTest, FairSharePreemptionAfterTimeout) {
  auto s = MakeScheduler("HFS", Topology::Uniform(1, 4),
                         {{"node_locality_wait", 0},
                          {"rack_locality_wait", 0},
                          {"fair_share_timeout", 5},
                          {"fair_share_threshold", 0.5}});
  Driver d(*s);
  JobPlan hog = MakeJob(1, 0, {});
  for (int i = 0; i < 4; ++i) hog.tasks.push_back(MakeTask(10 + i, 1000, {}, i));
  hog.attributes.pool = {"batch", 1.0, 0, false, kNever};
  d.AddJob(hog);
  JobPlan late = MakeJob(2, 10, {MakeTask(20, 100), MakeTask(21, 100), MakeTask(22, 100)});
  late.attributes.pool = {"adhoc", 1.0, 0, false, kNever};
  d.AddJob(late);
  ASSERT_TRUE(d.RunUntil(Sec(30)).ok());
  auto& hfs = dynamic_cast<HfsPolicy&>(s->policy());
  EXPECT_NEAR(hfs.fair_share("adhoc"), 2, 1e-6);
  EXPECT_EQ(Acts(d, 5, 30), (std::vector<Act>{{15, Decision::Kind::kKillTask, 13, 3},
                                              {15, Decision::Kind::kKillTask, 12, 2},
                                              {15, kStart, 20, 2},
                                              {15, kStart, 21, 3}}));
}

}  // namespace
}  // namespace copse::scheduler

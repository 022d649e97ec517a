// Cluster Fair Queueing (cluster-fair-queueing §IV) and its baselines.
#include "scheduler/job_order_policy.h"

#include <gtest/gtest.h>

#include <map>

#include "scheduler/testing/scenario.h"

namespace copse::scheduler {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

JobPlan Profiled(JobId id, double arrival, int tasks, double run, TaskId first) {
  JobPlan p = MakeJob(id, arrival, {});
  for (int i = 0; i < tasks; ++i) p.tasks.push_back(MakeTask(first + i, run));
  p.attributes.slot_time = Sec(tasks * run);
  return p;
}

// The paper's Fig. 2/3 example: 3 slots; job 1 has one 9 s task, job 2 four
// 4 s tasks; job 3 arrives at 4 s with two 4 s tasks. V(4) = 4 · 3/2 = 6, so
// F = (9, 16, 14): job 3 overtakes job 2 (Fig. 3b).
TEST(JobOrderPolicyTest, CfqReproducesFigure3b) {
  auto s = MakeScheduler("CFQ", Topology::Uniform(1, 3));
  Driver d(*s);
  d.AddJob(Profiled(1, 0, 1, 9, 10));
  d.AddJob(Profiled(2, 0, 4, 4, 20));
  d.AddJob(Profiled(3, 4, 2, 4, 30));
  ASSERT_TRUE(d.Run().ok());
  std::map<TaskId, std::pair<double, double>> span;
  for (const auto& sp : d.spans()) {
    ASSERT_TRUE(sp.completed);
    span[sp.task] = {ToSeconds(sp.start), ToSeconds(sp.end)};
  }
  using P = std::pair<double, double>;
  EXPECT_EQ(span[10], P(0, 9));
  EXPECT_EQ(span[20], P(0, 4));
  EXPECT_EQ(span[21], P(0, 4));
  EXPECT_EQ(span[30], P(4, 8));
  EXPECT_EQ(span[31], P(4, 8));
  EXPECT_EQ(span[22], P(8, 12));
  EXPECT_EQ(span[23], P(8, 12));
  EXPECT_EQ(ToSeconds(*d.finished(1)), 9);
  EXPECT_EQ(ToSeconds(*d.finished(2)), 12);
  EXPECT_EQ(ToSeconds(*d.finished(3)), 8);
}

// The same arrivals under FAIR (max-min): at 4 s jobs 2 and 3 both run
// nothing, so each gets one of the two free slots.
TEST(JobOrderPolicyTest, FairSplitsFreedSlots) {
  auto s = MakeScheduler("FAIR", Topology::Uniform(1, 3));
  Driver d(*s);
  d.AddJob(Profiled(1, 0, 1, 9, 10));
  d.AddJob(Profiled(2, 0, 4, 4, 20));
  d.AddJob(Profiled(3, 4, 2, 4, 30));
  ASSERT_TRUE(d.Run().ok());
  EXPECT_EQ(ToSeconds(*d.finished(3)), 12);
}

// The paper's Fig. 9 micro-benchmark, scaled: 10 slots; an elephant (20
// tasks of 2 s) arrives at 0.5 s while mice (10 tasks of 1 s each) arrive
// every second. SRPT keeps preferring mice, so the elephant's completion
// grows with the number of mice; CFQ's does not.
double ElephantFinish(const std::string& policy, int mice) {
  auto s = MakeScheduler(policy, Topology::Uniform(1, 10));
  Driver d(*s);
  d.AddJob(Profiled(1, 0.5, 20, 2, 1000));
  for (int m = 0; m < mice; ++m) d.AddJob(Profiled(10 + m, m, 10, 1, 2000 + 100 * m));
  Status st = d.Run();
  EXPECT_TRUE(st.ok()) << st.ToString();
  return d.finished(1) ? ToSeconds(*d.finished(1)) : 1e9;
}

TEST(JobOrderPolicyTest, CfqDoesNotStarveTheElephantButSrptDoes) {
  // With mice saturating the cluster, CFQ's elephant finishes at the same
  // time however many mice follow (once their virtual finish times pass its
  // own); SRPT's waits for every mouse.
  double cfq20 = ElephantFinish("CFQ", 20), cfq60 = ElephantFinish("CFQ", 60);
  double srpt20 = ElephantFinish("SRPT", 20), srpt60 = ElephantFinish("SRPT", 60);
  EXPECT_EQ(cfq20, cfq60);
  EXPECT_GE(srpt60, srpt20 + 30);
  EXPECT_GE(srpt60, 60);
  EXPECT_LT(cfq60, 30);
}

// FIFO serves jobs in admission order.
TEST(JobOrderPolicyTest, FifoServesInAdmissionOrder) {
  auto s = MakeScheduler("FIFO", Topology::Uniform(1, 2));
  Driver d(*s);
  d.AddJob(Profiled(1, 0, 4, 1, 10));
  d.AddJob(Profiled(2, 0, 1, 1, 20));
  ASSERT_TRUE(d.Run().ok());
  EXPECT_EQ(ToSeconds(*d.finished(1)), 2);
  EXPECT_EQ(ToSeconds(*d.finished(2)), 3);
}

// Without a profile, L_j is the naive estimate: expected tasks × the mean
// run time of the tasks completed so far (or the default before any).
TEST(JobOrderPolicyTest, NaiveEstimatorUsesCompletedTaskTimes) {
  auto s = MakeScheduler("CFQ", Topology::Uniform(1, 1), {{"default_task_seconds", 7}});
  Driver d(*s);
  JobPlan a = MakeJob(1, 0, {MakeTask(10, 3)});
  a.attributes.expected_tasks = 2;
  d.AddJob(a);
  JobPlan b = MakeJob(2, 5, {MakeTask(20, 3)});
  b.attributes.expected_tasks = 4;
  d.AddJob(b);
  auto& cfq = dynamic_cast<JobOrderPolicy&>(s->policy());
  ASSERT_TRUE(d.RunUntil(Sec(0)).ok());
  EXPECT_DOUBLE_EQ(cfq.slot_time(1), 14);
  ASSERT_TRUE(d.RunUntil(Sec(5)).ok());
  EXPECT_DOUBLE_EQ(cfq.slot_time(2), 12);
}

}  // namespace
}  // namespace copse::scheduler

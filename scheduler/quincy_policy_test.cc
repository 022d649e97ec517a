// Scenario tests for the Quincy flow policies (Quincy §4, §6.1 and the
// appendix) on small clusters whose optimal assignments are worked out by
// hand in the comments. Costs in milli-units: 1 GB across a rack switch
// costs 1000, across the core switch 2000; waiting costs 500 per second;
// a running task's continuation cost falls by 1000 per second run.
#include "scheduler/quincy_policy.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "scheduler/scheduler.h"
#include "scheduler/testing/driver.h"
#include "scheduler/testing/scenario.h"

namespace copse::scheduler {
namespace {

using testing::Act;
using testing::Acts;
using testing::DataOn;
using testing::Driver;
using testing::JobPlan;
using testing::Sec;
using testing::TaskPlan;

std::unique_ptr<Scheduler> Make(const std::string& policy, Topology t,
                                std::map<std::string, double> params = {}) {
  return testing::MakeScheduler(policy, std::move(t), std::move(params), /*max_running_jobs=*/10);
}

TaskPlan Task(TaskId id, double run, TaskLocality loc, double after = 0) {
  return testing::MakeTask(id, run, std::move(loc), after);
}

JobPlan Job(JobId id, double arrival, std::vector<TaskPlan> tasks) {
  return testing::MakeJob(id, arrival, std::move(tasks));
}

using testing::kKill;
using testing::kStart;

// Two racks of two computers (c0 c1 | c2 c3), one slot each. Job 1 starts
// t1..t4 at time 0, each on the computer holding its 1 GB input (t_i on
// c_{i-1}, running 20, 30, 40, 50 s); t5 (1 GB on c0) is submitted at 1 s
// and waits (at 0 s everything fits, so E_j = F_j = N_j). Job 2 arrives at
// 8 s with u1 (1 GB on c0); u2 (1 GB on c0) follows at 10 s.
//
//  Q   (E_j = 1 unless everything fits, no preemption): at 8 s nothing
//      can move. At 20 s t1 ends; E_2 = 1 forces one job-2 task onto c0:
//      u1 (waited longest). At 30 s t2 ends, freeing c1: t5 (waited 29 s,
//      14500) beats u2 (20 s, 10000); both cost 1000 there (same rack).
//  QF  (E_j = F_j = A_j, no preemption): at 20 s shares (2,2) are raised to
//      job 1's 3 running, job 2 shrinks to 1: u1 on c0. At 30 s shares are
//      (2,2) with job 1 running 2: the slot goes to job 2's u2, not t5.
//  QP  (preemption, E_j = 1): at 8 s job 2 must run one task. Evicting
//      t_i costs 8000 (θ = 8 s; it never waited); t5 (3500 waiting) gains
//      less than that anywhere. u1 on c0 costs 0, on c1
//      1000, elsewhere 3000, so t1 is killed and u1 starts on c0. At 10 s
//      E_2 is met and no eviction pays: nothing changes.
//  QFP (E_j = F_j = A_j with preemption): at 8 s shares are (3,1): as QP.
//      At 10 s shares become (2,2): one more job-1 task goes. u2 on c1 (via
//      rack 0, 1000) evicting t2 beats c2/c3 (3000): kill t2, u2 on c1.
std::vector<Act> RunTwoJobs(const std::string& policy, double until,
                            std::map<std::string, double> params = {}) {
  auto s = Make(policy, Topology::Uniform(2, 2), std::move(params));
  Driver d(*s);
  std::vector<TaskPlan> j1;
  for (int i = 0; i < 4; ++i) j1.push_back(Task(1 + i, 20 + 10 * i, DataOn(i, i / 2, 1)));
  j1.push_back(Task(5, 100, DataOn(0, 0, 1), 1));
  d.AddJob(Job(1, 0, j1));
  d.AddJob(Job(2, 8, {Task(21, 100, DataOn(0, 0, 1)), Task(22, 100, DataOn(0, 0, 1), 2)}));
  Status st = d.RunUntil(Sec(until));
  EXPECT_TRUE(st.ok()) << st.ToString();
  return Acts(d, 0.5, until);
}

TEST(QuincyPolicyTest, QWaitsForFreeComputersAndHonoursMinimumOfOne) {
  std::vector<Act> want = {{20, kStart, 21, 0}, {30, kStart, 5, 1}};
  EXPECT_EQ(RunTwoJobs("Q", 35), want);
}

TEST(QuincyPolicyTest, QFGivesFreedComputersToTheJobBelowItsShare) {
  std::vector<Act> want = {{20, kStart, 21, 0}, {30, kStart, 22, 1}};
  EXPECT_EQ(RunTwoJobs("QF", 35), want);
}

TEST(QuincyPolicyTest, QPPreemptsOnlyToMeetTheMinimum) {
  std::vector<Act> want = {{8, kKill, 1, 0}, {8, kStart, 21, 0}};
  EXPECT_EQ(RunTwoJobs("QP", 15), want);
}

TEST(QuincyPolicyTest, QFPPreemptsDownToFairShares) {
  std::vector<Act> want = {
      {8, kKill, 1, 0}, {8, kStart, 21, 0}, {10, kKill, 2, 1}, {10, kStart, 22, 1}};
  EXPECT_EQ(RunTwoJobs("QFP", 15), want);
}

// The clock hint moves costs in 2 ms steps between state changes: the
// worked-out scenarios above come out the same.
TEST(QuincyPolicyTest, TheClockHintKeepsTheScenarios) {
  for (const char* policy : {"Q", "QF", "QP", "QFP"}) {
    EXPECT_EQ(RunTwoJobs(policy, 35, {{"clock_hint", 1}}), RunTwoJobs(policy, 35)) << policy;
  }
}

// With the clock hint a round's change record holds the two shifted groups
// and the tasks that changed state, and every cost stays within a step of
// the exact one (here 2 ms: a milli-unit of wait, two of running).
TEST(QuincyPolicyTest, TheClockHintShiftsGroupsAndStaysWithinAStepOfTheCosts) {
  std::unique_ptr<Scheduler> hinted = Make("QFP", Topology::Uniform(2, 2), {{"clock_hint", 1}});
  std::unique_ptr<Scheduler> exact = Make("QFP", Topology::Uniform(2, 2));
  Driver a(*hinted), b(*exact);
  for (Driver* d : {&a, &b}) {
    std::vector<TaskPlan> tasks;
    for (int i = 0; i < 12; ++i) {
      tasks.push_back(Task(1 + i, 7.3 + 3.1 * i, DataOn(i % 4, i % 4 / 2, 1 + i % 3), 0.37 * i));
    }
    d->AddJob(Job(1, 0, tasks));
    d->AddJob(Job(2, 2.2, {Task(30, 50, DataOn(0, 0, 1)), Task(31, 50, DataOn(3, 1, 2), 1.1)}));
  }
  auto& qa = dynamic_cast<QuincyPolicy&>(hinted->policy());
  auto& qb = dynamic_cast<QuincyPolicy&>(exact->policy());
  size_t shifted_rounds = 0, hinted_changes = 0, exact_changes = 0;
  for (double t = 0.5; t < 60; t += 0.77) {
    ASSERT_TRUE(a.RunUntil(Sec(t)).ok());
    ASSERT_TRUE(b.RunUntil(Sec(t)).ok());
    ASSERT_EQ(Acts(a, 0, t), Acts(b, 0, t)) << t;
    qa.UpdateGraph(hinted->state(), Sec(t));
    qb.UpdateGraph(exact->state(), Sec(t));
    const flow::FlowGraph& ga = qa.graph().graph();
    const flow::FlowGraph& gb = qb.graph().graph();
    shifted_rounds += !ga.shifted_groups().empty();
    ASSERT_EQ(ga.arc_id_bound(), gb.arc_id_bound()) << t;
    for (flow::ArcId arc = 0; arc < ga.arc_id_bound(); ++arc) {
      ASSERT_EQ(ga.IsArc(arc), gb.IsArc(arc)) << t;
      if (!ga.IsArc(arc)) continue;
      EXPECT_NEAR(ga.cost(arc), gb.cost(arc), 2) << t << " arc " << arc;
    }
    hinted_changes += ga.changed_arcs().size();
    exact_changes += gb.changed_arcs().size();
  }
  EXPECT_GT(shifted_rounds, 20u);
  EXPECT_LT(hinted_changes, exact_changes);
}

// The same state under every regime gives the same nodes, arcs and costs;
// only capacities and the supplies that encode E_j, F_j differ.
TEST(QuincyPolicyTest, SwitchingRegimeChangesOnlyCapacitiesAndSupplies) {
  auto s = Make("QFP", Topology::Uniform(2, 2));
  Driver d(*s);
  std::vector<TaskPlan> j1;
  for (int i = 0; i < 4; ++i) j1.push_back(Task(1 + i, 100, DataOn(i, i / 2, 1)));
  j1.push_back(Task(5, 100, DataOn(0, 0, 1), 1));
  d.AddJob(Job(1, 0, j1));
  d.AddJob(Job(2, 1, {Task(21, 100, DataOn(2, 1, 2)), Task(22, 100, DataOn(3, 1, 1))}));
  ASSERT_TRUE(d.RunUntil(Sec(5)).ok());
  auto& q = dynamic_cast<QuincyPolicy&>(s->policy());
  using Arc = std::tuple<uint32_t, uint32_t, int64_t>;
  auto shape = [&](QuincyRegime r, std::vector<int64_t>* caps, std::vector<int64_t>* supplies) {
    q.set_regime(r);
    q.UpdateGraph(s->state(), Sec(6));
    const flow::FlowGraph& g = q.graph().graph();
    std::vector<Arc> arcs;
    caps->clear();
    supplies->clear();
    for (flow::ArcId a = 0; a < g.arc_id_bound(); ++a) {
      if (!g.IsArc(a)) continue;
      arcs.emplace_back(g.tail(a), g.head(a), g.cost(a));
      caps->push_back(g.capacity(a));
    }
    for (flow::NodeId n = 0; n < g.node_id_bound(); ++n) {
      if (g.IsNode(n)) supplies->push_back(g.supply(n));
    }
    return arcs;
  };
  std::vector<int64_t> caps_qfp, sup_qfp, caps, sup;
  std::vector<Arc> base = shape(QuincyRegime::kQFP, &caps_qfp, &sup_qfp);
  bool some_capacity_differs = false;
  for (QuincyRegime r : {QuincyRegime::kQ, QuincyRegime::kQP, QuincyRegime::kQF}) {
    EXPECT_EQ(shape(r, &caps, &sup), base);
    some_capacity_differs |= caps != caps_qfp || sup != sup_qfp;
  }
  EXPECT_TRUE(some_capacity_differs);
}

// §6.1 (PageRank): a task with 10 GB on c0 starts on c2 while c0 is busy
// with a task too old to evict; when c0 frees up, the task is killed and
// restarted on c0 (running on c2 costs 25000 − 1000·θ, c0 costs 0).
TEST(QuincyPolicyTest, StrongLocalityTaskMovesWhenItsComputerFrees) {
  auto s = Make("QFP", Topology::Uniform(2, 2));
  Driver d(*s);
  d.AddJob(Job(1, 0, {Task(1, 110, DataOn(0, 0, 0.001)), Task(2, 1000, DataOn(1, 0, 0.001))}));
  d.AddJob(Job(2, 100, {Task(3, 50, DataOn(0, 0, 10))}));
  ASSERT_TRUE(d.RunUntil(Sec(200)).ok());
  std::vector<std::tuple<TaskId, ComputerId, double, bool>> spans;
  for (const auto& sp : d.spans()) {
    if (sp.task == 3) spans.emplace_back(sp.task, sp.computer, ToSeconds(sp.start), sp.completed);
  }
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(std::get<2>(spans[0]), 100);
  EXPECT_GE(std::get<1>(spans[0]), 2);  // the other rack
  EXPECT_FALSE(std::get<3>(spans[0]));  // killed
  EXPECT_EQ(spans[1], std::make_tuple(TaskId{3}, ComputerId{0}, 110.0, true));
}

// Appendix, starvation freedom: job 1 (E_j >= 1) submits three tasks and
// stops; jobs 2 and 3 keep submitting short tasks whose data sits on the
// same computers. Under QFP job 1 still completes: each of its tasks, once
// it has run long enough, is never evicted.
TEST(QuincyPolicyTest, JobThatStopsSubmittingStillCompletesUnderQFP) {
  auto s = Make("QFP", Topology::Uniform(1, 3));
  Driver d(*s);
  d.AddJob(Job(
      1, 0,
      {Task(1, 20, DataOn(0, 0, 2)), Task(2, 20, DataOn(1, 0, 2)), Task(3, 20, DataOn(2, 0, 2))}));
  for (JobId j = 2; j <= 3; ++j) {
    std::vector<TaskPlan> stream;
    for (int i = 0; i < 150; ++i) {
      stream.push_back(Task(j * 1000 + i, 2, DataOn((i + j) % 3, 0, 2), i * 1.0));
    }
    d.AddJob(Job(j, 0.5, stream));
  }
  ASSERT_TRUE(d.RunUntil(Sec(120)).ok());
  ASSERT_TRUE(d.finished(1).has_value());
  // Its share is one computer: three 20 s tasks, plus slack for preemption.
  EXPECT_LE(ToSeconds(*d.finished(1)), 100);
  // The others were running meanwhile (it is a shared cluster).
  EXPECT_FALSE(d.finished(2).has_value());
}

// Appendix, last paragraph: with no unscheduled tasks, only time passing,
// no assignment changes — even for tasks placed away from their data.
TEST(QuincyPolicyTest, NoChangesWhenNothingWaitsAndOnlyTimePasses) {
  for (const char* policy : {"QFP", "QP", "Q", "QF", "QFPX"}) {
    auto s = Make(policy, Topology::Uniform(2, 3, 2));
    Driver d(*s);
    std::vector<TaskPlan> tasks;
    for (int i = 0; i < 8; ++i) tasks.push_back(Task(1 + i, 1000, DataOn(i % 2, 0, 1 + i)));
    d.AddJob(Job(1, 0, tasks));
    d.AddJob(Job(2, 0, {Task(20, 1000, DataOn(0, 0, 5)), Task(21, 1000, DataOn(4, 1, 1))}));
    ASSERT_TRUE(d.RunUntil(Sec(300)).ok());
    EXPECT_EQ(Acts(d, 0, 0).size(), 10u) << policy;  // everything started at once
    EXPECT_TRUE(Acts(d, 0.001, 300).empty()) << policy;
    EXPECT_GT(dynamic_cast<QuincyPolicy&>(s->policy()).stats().rounds, 100u) << policy;
  }
}

// Root tasks are placed by the flow too, and never preempted.
TEST(QuincyPolicyTest, RootsArePlacedThroughTheFlow) {
  auto s = Make("QFP", Topology::Uniform(2, 2));
  Driver d(*s);
  JobPlan p = Job(1, 0, {Task(1, 10, DataOn(0, 0, 1)), Task(2, 10, DataOn(1, 0, 1))});
  p.attributes.root_in_cluster = true;
  p.root = 100;
  d.AddJob(p);
  ASSERT_TRUE(d.RunUntil(Sec(50)).ok());
  ASSERT_TRUE(d.finished(1).has_value());
  int roots = 0;
  for (const auto& [at, x] : d.decisions()) {
    if (x.root) {
      ++roots;
      EXPECT_EQ(x.kind, kStart);
    }
  }
  EXPECT_EQ(roots, 1);
}

}  // namespace
}  // namespace copse::scheduler

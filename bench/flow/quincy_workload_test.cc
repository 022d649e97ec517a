// Quincy-shaped graphs: every solver of the benchmark's registry (the
// library's and the experiment variants) agrees with LEMON's NetworkSimplex
// along the workload's change steps, and every flow passes the optimality
// check.
#include "bench/flow/quincy_workload.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "bench/flow/bench_solvers.h"
#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/solvers.h"
#include "scheduler/flow/verify.h"

namespace copse::bench {
namespace {

QuincyScaleSpec Spec(const std::string& scale,
                     scheduler::QuincyRegime regime = scheduler::QuincyRegime::kQFP) {
  QuincyScaleSpec s = ScaleSpec(scale).value();
  s.regime = regime;
  return s;
}

void RunSteps(const QuincyScaleSpec& spec, uint64_t seed, int steps) {
  QuincyWorkload w(spec, seed);
  std::map<std::string, std::unique_ptr<flow::FlowSolver>> solvers;
  for (const std::string& name : BenchSolverNames()) {
    if (name == "ssp" && spec.name == "a") continue;  // slow from scratch under ASan
    auto s = MakeBenchSolver(name);
    ASSERT_TRUE(s.ok());
    solvers[name] = std::move(*s);
  }
  for (int step = 0; step <= steps; ++step) {
    auto oracle = flow::lemon_ref::Solve(w.graph(), flow::lemon_ref::Algorithm::kNetworkSimplex);
    ASSERT_TRUE(oracle.feasible);
    flow::FlowSolution driver;
    for (auto& [name, solver] : solvers) {
      flow::FlowSolution sol;
      Status st = solver->Solve(w.graph(), &sol, nullptr);
      ASSERT_TRUE(st.ok()) << name << " step " << step << ": " << st.ToString();
      EXPECT_EQ(sol.cost, oracle.cost) << name << " step " << step;
      Status check = flow::CheckSolution(w.graph(), sol);
      EXPECT_TRUE(check.ok()) << name << " step " << step << ": " << check.ToString();
      if (name == "race") driver = std::move(sol);
    }
    w.graph().CommitChanges();
    w.ApplySolution(driver);
    w.Step();
  }
}

// Every regime, with and without a burst.
TEST(QuincyWorkloadTest, SolversAgreeWithLemonOnTinyClusters) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    RunSteps(Spec(seed % 2 ? "t" : "tburst", scheduler::kQuincyRegimes[seed % 4]), seed, 10);
  }
}

TEST(QuincyWorkloadTest, SolversAgreeWithLemonAtScaleA) { RunSteps(Spec("a"), 42, 3); }

// Placement is forced as the scheduler's fair-share regime forces it: when
// every task fits, all of them run, the burst included, at the first solve
// after it arrives; when they do not, every worker slot is used.
TEST(QuincyWorkloadTest, FairRegimesForcePlacement) {
  for (int tasks : {10, 80}) {
    QuincyScaleSpec spec = Spec("tburst");
    spec.slots_min = spec.slots_max = 2;  // 48 slots, 5 of them for the roots
    spec.tasks = tasks;
    QuincyWorkload w(spec, 3);
    auto solver = flow::MakeSolver("race");
    ASSERT_TRUE(solver.ok());
    flow::FlowSolution sol;
    for (int step = 0; step < 4; ++step) {
      ASSERT_TRUE((*solver)->Solve(w.graph(), &sol, nullptr).ok());
      w.graph().CommitChanges();
      w.ApplySolution(sol);
      const int worker_slots = w.total_slots() - (step == 0 ? 4 : 5);
      EXPECT_EQ(w.running_tasks(), std::min(w.live_tasks(), worker_slots))
          << tasks << " tasks, step " << step;
      if (step >= 1 && tasks == 10) {
        EXPECT_GT(w.burst_tasks(), 20);  // 30, less those churn finished
        EXPECT_EQ(w.burst_running(), w.burst_tasks()) << "step " << step;
      }
      w.Step();
    }
  }
  EXPECT_FALSE(ScaleSpec("z").ok());
  EXPECT_FALSE(ParseRegime("QX").ok());
  EXPECT_EQ(ParseRegime("QF").value(), scheduler::QuincyRegime::kQF);
}

// --burst-step: the burst job arrives in the step named, not before, and
// the solvers still agree with LEMON on a burst in the steady state.
TEST(QuincyWorkloadTest, TheBurstArrivesInTheStepNamed) {
  QuincyScaleSpec spec = Spec("tburst");
  spec.burst_step = 3;
  QuincyWorkload w(spec, 5);
  for (int step = 1; step <= 4; ++step) {
    w.graph().CommitChanges();
    w.Step();
    if (step < 3) {
      EXPECT_EQ(w.burst_tasks(), 0) << "step " << step;
    } else {
      EXPECT_EQ(w.burst_tasks(), 30) << "step " << step;  // none runs here, so none finishes
    }
  }
  RunSteps(spec, 5, 5);
}

TEST(QuincyWorkloadTest, StepsChurnTasksAndChangeMostCosts) {
  QuincyWorkload w(Spec("a"), 7);
  auto solver = flow::MakeSolver("race");
  ASSERT_TRUE(solver.ok());
  flow::FlowSolution sol;
  ASSERT_TRUE((*solver)->Solve(w.graph(), &sol, nullptr).ok());
  w.graph().CommitChanges();
  w.ApplySolution(sol);
  EXPECT_GT(w.running_tasks(), 0);
  EXPECT_LE(w.running_tasks(), w.total_slots());
  int before = w.live_tasks();
  w.graph().CommitChanges();
  w.Step();
  EXPECT_EQ(w.live_tasks(), before);  // as many arrive as finish
  // Every task's wait or continuation cost moved — with the clock hint,
  // as two shifted cost groups and the changes of the tasks that moved.
  EXPECT_GT(w.graph().change_count(), static_cast<size_t>(before));
  EXPECT_EQ(w.graph().shifted_groups().size(), 2u);
  EXPECT_LT(w.graph().changed_arcs().size(), static_cast<size_t>(before) / 2);
}

// The clock hint changes how the costs reach the graph, not what they are:
// with and without it the same steps give the same cost on every arc, also
// as waiting tasks reach the cap Ω (small here) and leave their group.
TEST(QuincyWorkloadTest, TheClockHintGivesTheSameCosts) {
  scheduler::QuincyCostParams params;
  params.max_cost_milli = 25'000;  // 50 s of waiting
  QuincyScaleSpec hinted = Spec("t"), plain = Spec("t");
  plain.clock_hint = false;
  hinted.tasks = plain.tasks = 400;  // over-subscribed: tasks keep waiting
  QuincyWorkload a(hinted, 11, params), b(plain, 11, params);
  auto solver = flow::MakeSolver("incremental_leaf");
  ASSERT_TRUE(solver.ok());
  size_t hinted_changes = 0, plain_changes = 0;
  for (int step = 0; step < 40; ++step) {
    flow::FlowSolution sol;
    ASSERT_TRUE((*solver)->Solve(a.graph(), &sol, nullptr).ok()) << step;
    ASSERT_EQ(a.graph().arc_id_bound(), b.graph().arc_id_bound()) << step;
    for (flow::ArcId arc = 0; arc < a.graph().arc_id_bound(); ++arc) {
      ASSERT_EQ(a.graph().IsArc(arc), b.graph().IsArc(arc)) << step << " arc " << arc;
      if (!a.graph().IsArc(arc)) continue;
      ASSERT_EQ(a.graph().cost(arc), b.graph().cost(arc)) << step << " arc " << arc;
      ASSERT_EQ(a.graph().capacity(arc), b.graph().capacity(arc)) << step << " arc " << arc;
    }
    if (step > 0) {
      hinted_changes += a.graph().changed_arcs().size();
      plain_changes += b.graph().changed_arcs().size();
    }
    a.graph().CommitChanges();
    b.graph().CommitChanges();
    a.ApplySolution(sol);
    b.ApplySolution(sol);
    a.Step();
    b.Step();
  }
  EXPECT_LT(hinted_changes, plain_changes);
}

}  // namespace
}  // namespace copse::bench

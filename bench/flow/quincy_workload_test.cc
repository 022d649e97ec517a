// Quincy-shaped graphs: every solver agrees with LEMON's NetworkSimplex along
// the workload's change steps, and every flow passes the optimality check.
#include "bench/flow/quincy_workload.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/solvers.h"
#include "scheduler/flow/verify.h"

namespace copse::bench {
namespace {

void RunSteps(const std::string& scale, uint64_t seed, int steps) {
  QuincyWorkload w(ScaleSpec(scale), seed);
  std::map<std::string, std::unique_ptr<flow::FlowSolver>> solvers;
  for (const std::string& name : flow::SolverNames()) {
    if (name == "ssp" && scale == "a") continue;  // slow from scratch under ASan
    auto s = flow::MakeSolver(name);
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

TEST(QuincyWorkloadTest, SolversAgreeWithLemonOnTinyClusters) {
  for (uint64_t seed = 1; seed <= 12; ++seed) RunSteps(seed % 2 ? "t" : "tburst", seed, 10);
}

TEST(QuincyWorkloadTest, SolversAgreeWithLemonAtScaleA) { RunSteps("a", 42, 3); }

TEST(QuincyWorkloadTest, StepsChurnTasksAndChangeMostCosts) {
  QuincyWorkload w(ScaleSpec("a"), 7);
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
  // Every task's wait or continuation cost moved.
  EXPECT_GT(w.graph().changed_arcs().size(), static_cast<size_t>(before));
}

}  // namespace
}  // namespace copse::bench

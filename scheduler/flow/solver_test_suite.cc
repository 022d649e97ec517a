#include "scheduler/flow/solver_test_suite.h"

#include <limits>
#include <random>

#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/verify.h"

namespace copse::flow::testing {
namespace {

void ExpectAgreesWithLemon(FlowSolver& solver, const FlowGraph& g, const std::string& what) {
  lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
  FlowSolution sol;
  Status st = solver.Solve(g, &sol, nullptr);
  if (!oracle.feasible) {
    EXPECT_EQ(st.code(), StatusCode::kInfeasible) << what << ": " << st.ToString();
    return;
  }
  ASSERT_TRUE(st.ok()) << what << ": " << st.ToString();
  EXPECT_EQ(sol.cost, oracle.cost) << what;
  Status check = CheckSolution(g, sol);
  EXPECT_TRUE(check.ok()) << what << ": " << check.ToString();
}

// 64 graphs of each of the 8 shapes: 512 per solver.
TEST_P(SolverTest, AgreesWithLemonOnRandomShapes) {
  constexpr int kSizes[] = {8, 20, 40, 70};
  for (int shape = 0; shape < kShapeCount; ++shape) {
    for (int seed = 0; seed < 64; ++seed) {
      int nodes = kSizes[seed % 4];
      FlowGraph g = RandomGraph(static_cast<Shape>(shape), nodes, 1000 * shape + seed);
      std::unique_ptr<FlowSolver> solver = GetParam().make();
      ExpectAgreesWithLemon(*solver, g,
                            ShapeName(static_cast<Shape>(shape)) + " seed " + std::to_string(seed));
    }
  }
}

TEST_P(SolverTest, AgreesWithLemonAlongChangeSequences) {
  // 16 sequences of 10 batches: feasible and infeasible ones, every shape.
  for (int seq = 0; seq < 16; ++seq) {
    std::mt19937_64 rng(77 + seq);
    Shape shape = static_cast<Shape>(seq % (kShapeCount - 1));
    FlowGraph g = RandomGraph(shape, 25 + 5 * seq, 500 + seq);
    std::unique_ptr<FlowSolver> solver = GetParam().make();
    for (int step = 0; step < 10; ++step) {
      ExpectAgreesWithLemon(*solver, g,
                            "sequence " + std::to_string(seq) + " step " + std::to_string(step));
      g.CommitChanges();
      RandomChanges(g, 1 + static_cast<int>(rng() % 12), rng, step % 5 != 3);
    }
  }
}

// Cost groups shifted between solves (the clock hint), with other edits in
// the same batches before and after the shifts.
TEST_P(SolverTest, AgreesWithLemonAlongCostGroupShifts) {
  for (int seq = 0; seq < 8; ++seq) {
    std::mt19937_64 rng(901 + seq);
    Shape shape = static_cast<Shape>(seq % (kShapeCount - 1));
    FlowGraph g = RandomGraph(shape, 30 + 5 * seq, 700 + seq);
    std::unique_ptr<FlowSolver> solver = GetParam().make();
    for (int step = 0; step < 10; ++step) {
      ExpectAgreesWithLemon(*solver, g,
                            "sequence " + std::to_string(seq) + " step " + std::to_string(step));
      g.CommitChanges();
      RandomGroupShifts(g, 20, rng);
      if (step % 2 == 0) RandomChanges(g, 1 + static_cast<int>(rng() % 8), rng, true);
      RandomGroupShifts(g, 5, rng);
    }
  }
}

TEST_P(SolverTest, EmptyAndTrivialProblems) {
  std::unique_ptr<FlowSolver> solver = GetParam().make();
  FlowGraph empty;
  FlowSolution sol;
  ASSERT_TRUE(solver->Solve(empty, &sol, nullptr).ok());
  EXPECT_EQ(sol.cost, 0);
  FlowGraph g;
  NodeId a = g.AddNode(1), b = g.AddNode(-1);
  g.AddArc(a, a, 4, -3);  // a negative self-loop is saturated
  g.AddArc(a, b, 1, 7);
  ASSERT_TRUE(solver->Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(sol.cost, 7 - 12);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
  g.SetSupply(a, 2);
  EXPECT_EQ(solver->Solve(g, &sol, nullptr).code(), StatusCode::kInfeasible);
}

TEST_P(SolverTest, RejectsCostsThatCouldOverflow) {
  std::unique_ptr<FlowSolver> solver = GetParam().make();
  FlowGraph g;
  NodeId a = g.AddNode(1), b = g.AddNode(-1);
  g.AddArc(a, b, 1, int64_t{1} << 62);
  FlowSolution sol;
  EXPECT_EQ(solver->Solve(g, &sol, nullptr).code(), StatusCode::kInvalidArgument);
  // The most negative cost has no positive counterpart in int64: it must
  // still count as too large (std::abs of it is undefined).
  FlowGraph low;
  NodeId c = low.AddNode(1), d = low.AddNode(-1);
  low.AddArc(c, d, 1, std::numeric_limits<int64_t>::min());
  std::unique_ptr<FlowSolver> fresh = GetParam().make();
  EXPECT_EQ(fresh->Solve(low, &sol, nullptr).code(), StatusCode::kInvalidArgument);
}

TEST_P(SolverTest, HonoursCancellation) {
  std::unique_ptr<FlowSolver> solver = GetParam().make();
  FlowGraph g = RandomGraph(Shape::kDense, 60, 3);
  CancelFlag cancel;
  cancel.Cancel();
  FlowSolution sol;
  Status st = solver->Solve(g, &sol, &cancel);
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
}

}  // namespace

std::string SolverCaseName(const ::testing::TestParamInfo<SolverCase>& info) {
  return info.param.name;
}

}  // namespace copse::flow::testing

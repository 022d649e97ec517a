// NetworkSimplexSolver's warm start: the kept basis is reused (an unchanged
// problem takes no pivot), hints survive edits, id reuse, another graph and
// infeasible batches, and stage two decides feasibility. Agreement with LEMON
// on the shared random shapes is in bench_solvers_test.cc.
#include "bench/flow/network_simplex.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/verify.h"

namespace copse::flow {
namespace {

using testing::Shape;

// Solves and compares with LEMON; returns the solve's status code.
StatusCode SolveAndCheck(NetworkSimplexSolver& ns, const FlowGraph& g, const std::string& what) {
  lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
  FlowSolution sol;
  Status st = ns.Solve(g, &sol, nullptr);
  if (!oracle.feasible) {
    EXPECT_EQ(st.code(), StatusCode::kInfeasible) << what << ": " << st.ToString();
    return st.code();
  }
  EXPECT_TRUE(st.ok()) << what << ": " << st.ToString();
  if (!st.ok()) return st.code();
  EXPECT_EQ(sol.cost, oracle.cost) << what;
  Status check = CheckSolution(g, sol);
  EXPECT_TRUE(check.ok()) << what << ": " << check.ToString();
  return st.code();
}

TEST(NetworkSimplexTest, UnchangedProblemTakesNoPivot) {
  for (int shape = 0; shape < testing::kShapeCount - 1; ++shape) {
    FlowGraph g = testing::RandomGraph(static_cast<Shape>(shape), 60, 40 + shape);
    NetworkSimplexSolver ns;
    std::string what = testing::ShapeName(static_cast<Shape>(shape));
    ASSERT_EQ(SolveAndCheck(ns, g, what + " cold"), StatusCode::kOk);
    EXPECT_FALSE(ns.stats().warm);
    EXPECT_GT(ns.stats().pivots, 0u) << what;
    g.CommitChanges();
    ASSERT_EQ(SolveAndCheck(ns, g, what + " again"), StatusCode::kOk);
    EXPECT_TRUE(ns.stats().warm) << what;
    EXPECT_EQ(ns.stats().pivots, 0u) << what;
    EXPECT_EQ(ns.stats().cuts, 0u) << what;
  }
}

TEST(NetworkSimplexTest, CostChangeOnAnEmptyArcThatStaysUnusedTakesNoPivot) {
  // s -> a -> t carries the unit; s -> b -> t is dearer and stays empty.
  FlowGraph g;
  NodeId s = g.AddNode(1), a = g.AddNode(0), b = g.AddNode(0), t = g.AddNode(-1);
  g.AddArc(s, a, 1, 1);
  g.AddArc(a, t, 1, 1);
  ArcId sb = g.AddArc(s, b, 1, 5);
  g.AddArc(b, t, 1, 5);
  NetworkSimplexSolver ns;
  ASSERT_EQ(SolveAndCheck(ns, g, "cold"), StatusCode::kOk);
  g.CommitChanges();
  g.SetCost(sb, 9);
  ASSERT_EQ(SolveAndCheck(ns, g, "dearer"), StatusCode::kOk);
  EXPECT_EQ(ns.stats().pivots, 0u);
  g.CommitChanges();
  g.SetCost(sb, -10);  // now the other way is cheaper
  ASSERT_EQ(SolveAndCheck(ns, g, "cheaper"), StatusCode::kOk);
  EXPECT_GT(ns.stats().pivots, 0u);
}

TEST(NetworkSimplexTest, WarmAlongChangeSequencesWithInfeasibleBatches) {
  // Every fourth batch infeasible; ids are reused after each commit. Stage
  // two must have run somewhere (an infeasible batch after a warm basis).
  uint64_t stage_two = 0, warm = 0, cuts = 0;
  for (int seq = 0; seq < 24; ++seq) {
    std::mt19937_64 rng(900 + seq);
    Shape shape = static_cast<Shape>(seq % (testing::kShapeCount - 1));
    FlowGraph g = testing::RandomGraph(shape, 20 + 3 * seq, 3000 + seq);
    NetworkSimplexSolver ns;
    for (int step = 0; step < 15; ++step) {
      SolveAndCheck(ns, g, "sequence " + std::to_string(seq) + " step " + std::to_string(step));
      stage_two += ns.stats().stage_two;
      warm += ns.stats().warm;
      cuts += ns.stats().cuts;
      g.CommitChanges();
      testing::RandomChanges(g, 1 + static_cast<int>(rng() % 10), rng, step % 4 != 2);
    }
  }
  EXPECT_GT(stage_two, 0u);
  EXPECT_GT(cuts, 0u);
  EXPECT_GE(warm, 24u * 14);
}

TEST(NetworkSimplexTest, HintsFromAnotherGraphAreOnlyHints) {
  NetworkSimplexSolver ns;
  for (int i = 0; i < 16; ++i) {
    Shape shape = static_cast<Shape>(i % (testing::kShapeCount - 1));
    FlowGraph g = testing::RandomGraph(shape, 15 + 7 * (i % 5), 7100 + i);
    SolveAndCheck(ns, g, "graph " + std::to_string(i));
    EXPECT_EQ(ns.stats().warm, i > 0);
  }
}

TEST(NetworkSimplexTest, UnbalancedSuppliesAreInfeasibleAndForgetTheHints) {
  FlowGraph g;
  NodeId a = g.AddNode(2), b = g.AddNode(-2);
  g.AddArc(a, b, 5, 3);
  NetworkSimplexSolver ns;
  FlowSolution sol;
  ASSERT_TRUE(ns.Solve(g, &sol, nullptr).ok());
  g.CommitChanges();
  g.SetSupply(a, 3);
  Status st = ns.Solve(g, &sol, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kInfeasible);
  EXPECT_NE(st.ToString().find("supplies sum to 1"), std::string::npos) << st.ToString();
  g.CommitChanges();
  g.SetSupply(b, -3);
  ASSERT_TRUE(ns.Solve(g, &sol, nullptr).ok());
  EXPECT_FALSE(ns.stats().warm);
  EXPECT_EQ(sol.cost, 9);
}

}  // namespace
}  // namespace copse::flow

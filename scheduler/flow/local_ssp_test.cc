// LocalSspSolver's kept state: along random change sequences (arcs and nodes
// added and removed, ids reused, capacities cut below the flow, infeasible
// batches followed by feasible ones, a lost change record, adoption of
// another solver's answer) the state stays equal to one rebuilt from the
// graph, every answer agrees with LEMON and passes the optimality check.
#include "scheduler/flow/local_ssp.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/verify.h"

namespace copse::flow {
namespace {

using testing::Shape;

// Solves `g` and checks the answer against LEMON and the kept state against
// a rebuild. Returns the status.
Status SolveAndCheck(LocalSspSolver& solver, const FlowGraph& g, const std::string& what) {
  FlowSolution sol;
  Status st = solver.Solve(g, &sol, nullptr);
  Status state = solver.CheckState(g);
  EXPECT_TRUE(state.ok()) << what << ": " << state.ToString();
  lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
  if (!oracle.feasible) {
    EXPECT_EQ(st.code(), StatusCode::kInfeasible) << what << ": " << st.ToString();
    return st;
  }
  EXPECT_TRUE(st.ok()) << what << ": " << st.ToString();
  if (!st.ok()) return st;
  EXPECT_EQ(sol.cost, oracle.cost) << what;
  Status check = CheckSolution(g, sol);
  EXPECT_TRUE(check.ok()) << what << ": " << check.ToString();
  return st;
}

struct SequenceTotals {
  int warm = 0;
  uint64_t lookahead_moves = 0;
  uint64_t tree_paths = 0;
};

SequenceTotals RunRandomSequences(const LocalSspOptions& options, const std::string& label) {
  SequenceTotals totals;
  for (int seq = 0; seq < 48; ++seq) {
    std::mt19937_64 rng(4242 + seq);
    Shape shape = static_cast<Shape>(seq % testing::kShapeCount);
    FlowGraph g = testing::RandomGraph(shape, 10 + (seq % 6) * 8, 900 + seq);
    LocalSspSolver solver(options);
    for (int step = 0; step < 15; ++step) {
      std::string what = label + " " + testing::ShapeName(shape) + " sequence " +
                         std::to_string(seq) + " step " + std::to_string(step);
      (void)SolveAndCheck(solver, g, what);
      totals.warm += solver.stats().warm;
      totals.lookahead_moves += solver.stats().lookahead_moves;
      totals.tree_paths += solver.stats().tree_paths;
      g.CommitChanges();
      testing::RandomChanges(g, 1 + static_cast<int>(rng() % 20), rng, step % 4 != 2);
    }
  }
  return totals;
}

TEST(LocalSspTest, KeptStateMatchesRebuildAlongRandomChanges) {
  SequenceTotals t = RunRandomSequences(LocalSspOptions{}, "default");
  EXPECT_GT(t.warm, 48 * 8);         // most solves started from the kept state
  EXPECT_GT(t.lookahead_moves, 0u);  // the look-ahead moved potentials
  EXPECT_GT(t.tree_paths, 0u);       // and flow went along search trees
}

// The same sequences with the look-ahead off and deeper, with forward
// searches only, and without the tree augmentation: each variant must reach
// the same optimum.
TEST(LocalSspTest, VariantsAgreeAlongRandomChanges) {
  LocalSspOptions none;
  none.lookahead = 0;
  EXPECT_EQ(RunRandomSequences(none, "lookahead 0").lookahead_moves, 0u);
  LocalSspOptions deep;
  deep.lookahead = 8;
  EXPECT_GT(RunRandomSequences(deep, "lookahead 8").lookahead_moves, 0u);
  LocalSspOptions forward;
  forward.reverse_search = false;
  (void)RunRandomSequences(forward, "forward only");
  LocalSspOptions no_tree;
  no_tree.tree_augment = false;
  EXPECT_EQ(RunRandomSequences(no_tree, "blocking flow only").tree_paths, 0u);
}

TEST(LocalSspTest, CapacityBelowFlowRemovalAndIdReuse) {
  FlowGraph g;
  NodeId s = g.AddNode(4), m = g.AddNode(0), t = g.AddNode(-4);
  ArcId sm = g.AddArc(s, m, 4, 1);
  g.AddArc(m, t, 4, 1);
  g.AddArc(s, t, 4, 10);
  LocalSspSolver solver;
  ASSERT_TRUE(SolveAndCheck(solver, g, "initial").ok());
  g.CommitChanges();
  g.SetCapacity(sm, 1);  // below the current flow of 4
  ASSERT_TRUE(SolveAndCheck(solver, g, "capacity cut").ok());
  EXPECT_TRUE(solver.stats().warm);
  g.CommitChanges();
  g.RemoveNode(m);
  ASSERT_TRUE(SolveAndCheck(solver, g, "node removed").ok());
  g.CommitChanges();
  NodeId m2 = g.AddNode(0);  // reuses m's id
  EXPECT_EQ(m2, m);
  ArcId a1 = g.AddArc(s, m2, 3, -2);  // reuses the removed arcs' ids
  g.AddArc(m2, t, 3, 0);
  EXPECT_LT(a1, 3u);
  ASSERT_TRUE(SolveAndCheck(solver, g, "id reused").ok());
  EXPECT_FALSE(solver.stats().full_sync);
}

TEST(LocalSspTest, InfeasibleBatchThenFeasible) {
  FlowGraph g;
  NodeId s = g.AddNode(2), t = g.AddNode(-2);
  ArcId st = g.AddArc(s, t, 2, 3);
  LocalSspSolver solver;
  ASSERT_TRUE(SolveAndCheck(solver, g, "initial").ok());
  g.CommitChanges();
  g.SetSupply(s, 5);  // supplies no longer sum to zero
  EXPECT_EQ(SolveAndCheck(solver, g, "unbalanced").code(), StatusCode::kInfeasible);
  g.CommitChanges();
  g.SetSupply(t, -5);  // balanced, but the arc is too small
  EXPECT_EQ(SolveAndCheck(solver, g, "too small").code(), StatusCode::kInfeasible);
  g.CommitChanges();
  g.SetCapacity(st, 5);
  ASSERT_TRUE(SolveAndCheck(solver, g, "feasible again").ok());
  EXPECT_TRUE(solver.stats().warm);
}

TEST(LocalSspTest, RejectsHugeCostsWhenWarmAndRecovers) {
  FlowGraph g = testing::RandomGraph(Shape::kSparse, 20, 5);
  LocalSspSolver solver;
  ASSERT_TRUE(SolveAndCheck(solver, g, "initial").ok());
  g.CommitChanges();
  ArcId huge = g.AddArc(0, 1, 1, int64_t{1} << 62);
  FlowSolution sol;
  EXPECT_EQ(solver.Solve(g, &sol, nullptr).code(), StatusCode::kInvalidArgument);
  g.CommitChanges();
  g.RemoveArc(huge);
  ASSERT_TRUE(SolveAndCheck(solver, g, "huge arc removed").ok());
}

TEST(LocalSspTest, LostChangeRecordFallsBackToFullSync) {
  std::mt19937_64 rng(9);
  FlowGraph g = testing::RandomGraph(Shape::kZeroCostCycles, 30, 11);
  LocalSspSolver solver;
  ASSERT_TRUE(SolveAndCheck(solver, g, "initial").ok());
  g.CommitChanges();
  testing::RandomChanges(g, 10, rng, true);
  g.CommitChanges();  // this batch is never solved
  testing::RandomChanges(g, 10, rng, true);
  ASSERT_TRUE(SolveAndCheck(solver, g, "after a lost batch").ok());
  EXPECT_TRUE(solver.stats().full_sync);
}

TEST(LocalSspTest, SolvingTheSameBatchTwiceIsHarmless) {
  std::mt19937_64 rng(13);
  FlowGraph g = testing::RandomGraph(Shape::kNegativeCosts, 30, 17);
  LocalSspSolver solver;
  ASSERT_TRUE(SolveAndCheck(solver, g, "initial").ok());
  g.CommitChanges();
  testing::RandomChanges(g, 15, rng, true);
  ASSERT_TRUE(SolveAndCheck(solver, g, "first").ok());
  testing::RandomChanges(g, 5, rng, true);  // more edits before the commit
  ASSERT_TRUE(SolveAndCheck(solver, g, "second").ok());
  EXPECT_FALSE(solver.stats().full_sync);
}

// Edits made after a solve and committed without another solve are not in
// the next batch's change record: the next solve must sync everything.
TEST(LocalSspTest, EditsCommittedUnsolvedAreNotLost) {
  std::mt19937_64 rng(29);
  FlowGraph g = testing::RandomGraph(Shape::kSparse, 30, 23);
  LocalSspSolver solver;
  ASSERT_TRUE(SolveAndCheck(solver, g, "initial").ok());
  g.CommitChanges();
  testing::RandomChanges(g, 10, rng, true);
  ASSERT_TRUE(SolveAndCheck(solver, g, "first").ok());
  testing::RandomChanges(g, 10, rng, true);  // never solved, then committed
  g.CommitChanges();
  testing::RandomChanges(g, 10, rng, true);
  ASSERT_TRUE(SolveAndCheck(solver, g, "after the unsolved edits").ok());
  EXPECT_TRUE(solver.stats().full_sync);
}

TEST(LocalSspTest, AdoptsAnotherSolversAnswer) {
  std::mt19937_64 rng(21);
  FlowGraph g = testing::RandomGraph(Shape::kBipartite, 40, 23);
  CostScalingSolver other;
  FlowSolution sol;
  ASSERT_TRUE(other.Solve(g, &sol, nullptr).ok());
  LocalSspSolver solver;
  solver.Adopt(g, sol);
  EXPECT_TRUE(solver.CheckState(g).ok());
  for (int step = 0; step < 5; ++step) {
    g.CommitChanges();
    testing::RandomChanges(g, 8, rng, true);
    ASSERT_TRUE(SolveAndCheck(solver, g, "step " + std::to_string(step)).ok());
    EXPECT_TRUE(solver.stats().warm);
  }
}

}  // namespace
}  // namespace copse::flow

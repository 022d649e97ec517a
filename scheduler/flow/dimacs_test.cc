#include "scheduler/flow/dimacs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/solvers.h"
#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/verify.h"

namespace copse::flow {
namespace {

Result<DimacsProblem> Parse(const std::string& text) {
  std::istringstream in(text);
  return ReadDimacs(in, "f.min");
}

int64_t SolveCost(const LoadedProblem& l) {
  auto solver = MakeSolver("cost_scaling");
  FlowSolution sol;
  EXPECT_TRUE((*solver)->Solve(l.graph, &sol, nullptr).ok());
  return sol.cost + l.cost_offset;
}

TEST(DimacsTest, ReadsSparseIdsCommentsAndLowerBounds) {
  auto p = Parse(
      "c a comment\n"
      "p min 5 3\n"
      "n 10 4\n"
      "n 30 -4\n"
      "a 10 20 1 4 2\n"
      "\n"
      "a 20 30 0 4 3\n"
      "a 10 30 0 2 10\n");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto l = LoadDimacs(*p, "f.min");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->graph.node_count(), 3u);
  EXPECT_EQ(l->cost_offset, 2);
  // All 4 units take 10 -> 20 -> 30 (cost 5 each).
  EXPECT_EQ(SolveCost(*l), 20);
}

TEST(DimacsTest, ReportsTheLineOfMalformedInput) {
  struct Case {
    std::string text;
    std::string where;
  } cases[] = {
      {"p min 2 1\na 1 2 0 x 1\n", "f.min:2:"},
      {"c\nn 1 1\n", "f.min:2:"},
      {"p min 2 1\na 1 2 0 5\n", "f.min:2:"},
      {"p min 2 1\np min 2 1\n", "f.min:2:"},
      {"p max 2 1\n", "f.min:1:"},
      {"p min 2 1\nq 1\n", "f.min:2:"},
      {"p min 2 2\na 1 2 0 1 1\n", "f.min:2:"},
      {"p min 2 1\na 1 2 3 1 1\n", "f.min:2:"},
      {"", "f.min:0:"},
  };
  for (const Case& c : cases) {
    auto p = Parse(c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.where), std::string::npos) << p.status().message();
  }
}

TEST(DimacsTest, WriteThenReadKeepsTheOptimalCost) {
  for (int seed = 0; seed < 10; ++seed) {
    FlowGraph g = testing::RandomGraph(testing::Shape::kNegativeCosts, 30, seed);
    std::stringstream s;
    WriteDimacs(g, s, "round trip");
    auto p = ReadDimacs(s, "rt");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto l = LoadDimacs(*p, "rt");
    ASSERT_TRUE(l.ok());
    LoadedProblem direct;
    direct.graph = std::move(g);
    EXPECT_EQ(SolveCost(*l), SolveCost(direct));
  }
}

TEST(DimacsTest, SnapshotDiffMatchesArcsByEndpoints) {
  auto p0 = Parse("p min 3 3\nn 1 2\nn 3 -2\na 1 2 0 2 1\na 2 3 0 2 1\na 1 3 0 2 5\n");
  auto p1 = Parse("p min 4 3\nn 1 2\nn 4 -2\na 1 2 0 2 1\na 2 4 0 2 1\na 1 2 0 1 0\n");
  ASSERT_TRUE(p0.ok() && p1.ok());
  auto l = LoadDimacs(*p0, "s0");
  ASSERT_TRUE(l.ok());
  l->graph.CommitChanges();
  auto changes = ApplySnapshot(*l, *p1, "s1");
  ASSERT_TRUE(changes.ok());
  // Node 3 (and its arcs) removed, node 4 and arcs 2->4 and a second 1->2 added,
  // arc 1->3 removed, supply of node 4 set: every one is recorded.
  EXPECT_GE(*changes, 5u);
  EXPECT_EQ(l->graph.node_count(), 3u);
  EXPECT_EQ(l->graph.arc_count(), 3u);
  EXPECT_EQ(SolveCost(*l), 3);  // one unit via the free 1->2 arc, both over 2->4
  auto l1 = LoadDimacs(*p1, "s1");
  EXPECT_EQ(SolveCost(*l1), SolveCost(*l));
}

Result<DimacsProblem> Snapshot(const FlowGraph& g) {
  std::stringstream s;
  WriteDimacs(g, s);
  return ReadDimacs(s, "snap");
}

// The writer keeps node numbers across snapshots: removing one node with a
// low id must show up as that node and its arcs, not as every later node
// renumbered.
TEST(DimacsTest, SnapshotsKeepNodeNumbersSoTheDiffIsTheRealChange) {
  FlowGraph g = testing::RandomGraph(testing::Shape::kSparse, 60, 3);
  g.CommitChanges();
  auto p0 = Snapshot(g);
  ASSERT_TRUE(p0.ok());
  auto l = LoadDimacs(*p0, "s0");
  ASSERT_TRUE(l.ok());
  l->graph.CommitChanges();
  auto same = ApplySnapshot(*l, *p0, "s0 again");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, 0u);
  NodeId victim = 1;
  while (g.out_degree(victim) + g.in_degree(victim) == 0) ++victim;
  g.RemoveNode(victim);
  auto p1 = Snapshot(g);
  ASSERT_TRUE(p1.ok());
  auto changes = ApplySnapshot(*l, *p1, "s1");
  ASSERT_TRUE(changes.ok());
  EXPECT_EQ(*changes, g.change_count());
  EXPECT_EQ(l->graph.arc_count(), g.arc_count());
}

// Along random change batches, each snapshot (its arc lines shuffled, so
// parallel arcs and new ids meet the k-th-with-k-th matching) is diffed into
// one kept graph and solved incrementally: every answer has LEMON's cost on
// the graph the snapshot was written from.
TEST(DimacsTest, SnapshotDiffAlongRandomChangesMatchesLemon) {
  for (testing::Shape shape : {testing::Shape::kSparse, testing::Shape::kDense,
                               testing::Shape::kZeroCostCycles, testing::Shape::kNegativeCosts}) {
    std::mt19937_64 rng(static_cast<uint64_t>(shape) + 17);
    FlowGraph g = testing::RandomGraph(shape, 40, rng());
    auto solver = MakeSolver("incremental");
    ASSERT_TRUE(solver.ok());
    LoadedProblem l;
    for (int step = 0; step < 10; ++step) {
      if (step > 0) testing::RandomChanges(g, 1 + static_cast<int>(rng() % 20), rng, true);
      g.CommitChanges();
      auto p = Snapshot(g);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      std::shuffle(p->arcs.begin(), p->arcs.end(), rng);
      ASSERT_TRUE(ApplySnapshot(l, *p, "snap").ok());
      std::string what = testing::ShapeName(shape) + " step " + std::to_string(step);
      EXPECT_EQ(l.graph.arc_count(), g.arc_count()) << what;
      lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
      FlowSolution sol;
      Status st = (*solver)->Solve(l.graph, &sol, nullptr);
      ASSERT_EQ(st.ok(), oracle.feasible) << what << ": " << st.ToString();
      if (st.ok()) {
        EXPECT_EQ(sol.cost + l.cost_offset, oracle.cost) << what;
        EXPECT_TRUE(CheckSolution(l.graph, sol).ok()) << what;
      }
      l.graph.CommitChanges();
    }
  }
}

}  // namespace
}  // namespace copse::flow

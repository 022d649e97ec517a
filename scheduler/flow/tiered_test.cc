// TieredSolver: along random change sequences whose arc count wanders back
// and forth across the threshold, every answer agrees with LEMON and passes
// the optimality check, and both solvers take over from each other many
// times (small to large and large to small).
#include "scheduler/flow/tiered.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "scheduler/flow/incremental.h"
#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/local_ssp.h"
#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/verify.h"

namespace copse::flow {
namespace {

using testing::Shape;

TEST(TieredSolverTest, AgreesWithLemonAcrossTheThresholdBothWays) {
  int small_solves = 0, large_solves = 0, to_small = 0, to_large = 0;
  for (int seq = 0; seq < 48; ++seq) {
    std::mt19937_64 rng(777 + seq);
    Shape shape = static_cast<Shape>(seq % testing::kShapeCount);
    FlowGraph g = testing::RandomGraph(shape, 10 + (seq % 6) * 8, 3100 + seq);
    IncrementalOptions large;
    large.engine = IncrementalOptions::Engine::kCostScaling;
    // The threshold sits at the starting size, so random arc additions and
    // removals carry the graph across it in both directions.
    TieredSolver solver("tiered", std::make_unique<LocalSspSolver>(),
                        std::make_unique<IncrementalSolver>(large), g.arc_count() + 1);
    bool was_small = false;
    for (int step = 0; step < 20; ++step) {
      std::string what = testing::ShapeName(shape) + " sequence " + std::to_string(seq) + " step " +
                         std::to_string(step) + " arcs " + std::to_string(g.arc_count());
      FlowSolution sol;
      Status st = solver.Solve(g, &sol, nullptr);
      lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
      if (!oracle.feasible) {
        EXPECT_EQ(st.code(), StatusCode::kInfeasible) << what << ": " << st.ToString();
      } else {
        ASSERT_TRUE(st.ok()) << what << ": " << st.ToString();
        EXPECT_EQ(sol.cost, oracle.cost) << what;
        Status check = CheckSolution(g, sol);
        EXPECT_TRUE(check.ok()) << what << ": " << check.ToString();
      }
      if (step > 0) {
        to_small += !was_small && solver.last_was_small();
        to_large += was_small && !solver.last_was_small();
      }
      was_small = solver.last_was_small();
      (solver.last_was_small() ? small_solves : large_solves) += 1;
      g.CommitChanges();
      testing::RandomChanges(g, 1 + static_cast<int>(rng() % 12), rng, step % 5 != 3);
    }
  }
  EXPECT_GT(small_solves, 48 * 4);
  EXPECT_GT(large_solves, 48 * 4);
  // Arc removals outnumber additions in RandomChanges, so the graphs drift
  // below the threshold more often than above it (seeds fixed: 58 and 18).
  EXPECT_GE(to_small, 24);
  EXPECT_GE(to_large, 12);
  std::printf("tiered: %d small solves, %d large, %d switches to small, %d to large\n",
              small_solves, large_solves, to_small, to_large);
}

TEST(TieredSolverTest, TheSmallSolverTakesOverFromTheThirdSolve) {
  FlowGraph g = testing::RandomGraph(Shape::kSparse, 30, 17);
  std::mt19937_64 rng(3);
  TieredSolver solver("tiered", std::make_unique<LocalSspSolver>(),
                      std::make_unique<IncrementalSolver>(), 1u << 30);
  for (int step = 0; step < 4; ++step) {
    FlowSolution sol;
    ASSERT_TRUE(solver.Solve(g, &sol, nullptr).ok()) << step;
    // First solve: the large solver alone (no copy into the small one);
    // second: the large solver again, then the small one is loaded.
    EXPECT_EQ(solver.last_was_small(), step >= 2) << step;
    lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
    EXPECT_EQ(sol.cost, oracle.cost) << step;
    g.CommitChanges();
    testing::RandomChanges(g, 6, rng, true);
  }
}

TEST(TieredSolverTest, AdoptLoadsTheSmallSolverBelowTheThreshold) {
  FlowGraph g = testing::RandomGraph(Shape::kSparse, 30, 99);
  std::mt19937_64 rng(5);
  lemon_ref::LemonResult first = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
  ASSERT_TRUE(first.feasible);
  IncrementalSolver donor;
  FlowSolution donated;
  ASSERT_TRUE(donor.Solve(g, &donated, nullptr).ok());
  TieredSolver solver("tiered", std::make_unique<LocalSspSolver>(),
                      std::make_unique<IncrementalSolver>(), 1u << 30);
  solver.Adopt(g, donated);
  g.CommitChanges();
  testing::RandomChanges(g, 6, rng, true);
  FlowSolution sol;
  ASSERT_TRUE(solver.Solve(g, &sol, nullptr).ok());
  EXPECT_TRUE(solver.last_was_small());  // adopted, so no cold solve first
  lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
  EXPECT_EQ(sol.cost, oracle.cost);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
}

}  // namespace
}  // namespace copse::flow

// Cost scaling's cold solve in both of its modes (no dirty record when price
// refine is off, the dirty record when it is on) and with scaling factors
// whose epsilon sequences end differently (the last refine jumps to 1 once
// epsilon would drop below the factor), against LEMON's NetworkSimplex on
// every random shape, infeasible and zero-cost-cycle ones included. Without
// price refine the solve also checks, once epsilon is small, whether its flow
// is optimal already; both outcomes of that check occur here.
#include "scheduler/flow/cost_scaling.h"

#include <gtest/gtest.h>

#include <string>

#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/verify.h"

namespace copse::flow {
namespace {

using testing::Shape;

struct Variant {
  int factor;
  bool price_refine;
  int64_t ssp_finish_below = 0;  // 0: every refine down to epsilon 1
};

class CostScalingTest : public ::testing::TestWithParam<Variant> {};

TEST_P(CostScalingTest, AgreesWithLemonOnRandomShapes) {
  constexpr int kSizes[] = {6, 15, 33, 60};
  CostScalingOptions options;
  options.scaling_factor = GetParam().factor;
  options.price_refine = GetParam().price_refine;
  options.ssp_finish_below = GetParam().ssp_finish_below;
  int infeasible = 0;
  uint64_t checks = 0, proved = 0, finished = 0;
  for (int shape = 0; shape < testing::kShapeCount; ++shape) {
    for (int seed = 0; seed < 16; ++seed) {
      const std::string what =
          testing::ShapeName(static_cast<Shape>(shape)) + " seed " + std::to_string(seed);
      FlowGraph g =
          testing::RandomGraph(static_cast<Shape>(shape), kSizes[seed % 4], 7000 * shape + seed);
      lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
      CostScalingSolver solver(options);
      FlowSolution sol;
      Status st = solver.Solve(g, &sol, nullptr);
      if (!oracle.feasible) {
        EXPECT_EQ(st.code(), StatusCode::kInfeasible) << what << ": " << st.ToString();
        ++infeasible;
        continue;
      }
      ASSERT_TRUE(st.ok()) << what << ": " << st.ToString();
      checks += solver.stats().optimality_checks;
      proved += solver.stats().proved_optimal;
      finished += solver.stats().ssp_finished;
      // One log entry per refine, epsilon falling by the factor (or to 1).
      const auto& log = solver.stats().refine_log;
      EXPECT_EQ(log.size(), solver.stats().refines) << what;
      for (size_t i = 1; i < log.size(); ++i) {
        EXPECT_LT(log[i].eps, log[i - 1].eps) << what;
        EXPECT_GE(log[i].ms, 0) << what;
      }
      EXPECT_EQ(sol.cost, oracle.cost) << what;
      Status check = CheckSolution(g, sol);
      EXPECT_TRUE(check.ok()) << what << ": " << check.ToString();
    }
  }
  EXPECT_GT(infeasible, 0);  // the infeasible shape was exercised
  if (GetParam().ssp_finish_below > 0) {
    EXPECT_GT(finished, 0u);  // solves ended by shortest paths
  } else {
    EXPECT_EQ(finished, 0u);
  }
  if (GetParam().price_refine) {
    EXPECT_EQ(checks, 0u);
  } else {
    EXPECT_GT(proved, 0u);      // refines were skipped after a proof
    EXPECT_GT(checks, proved);  // and some checks found a flow not yet optimal
  }
}

// The same solver object solving problems of different sizes one after
// another (the core's buffers are kept per thread between solves).
TEST_P(CostScalingTest, ReusesBuffersAcrossSizes) {
  CostScalingOptions options;
  options.scaling_factor = GetParam().factor;
  options.price_refine = GetParam().price_refine;
  options.ssp_finish_below = GetParam().ssp_finish_below;
  CostScalingSolver solver(options);
  constexpr int kSizes[] = {70, 9, 45, 12, 70};
  for (int i = 0; i < 5; ++i) {
    FlowGraph g = testing::RandomGraph(Shape::kNegativeCosts, kSizes[i], 90 + i);
    lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
    FlowSolution sol;
    Status st = solver.Solve(g, &sol, nullptr);
    ASSERT_EQ(st.ok(), oracle.feasible) << i << ": " << st.ToString();
    if (!oracle.feasible) continue;
    EXPECT_EQ(sol.cost, oracle.cost) << i;
    EXPECT_TRUE(CheckSolution(g, sol).ok()) << i;
  }
}

// ResidualNet::Build's magnitude checks (one pass with the build itself):
// capacities plus |supplies| beyond 2^62, a self-loop's capacity included,
// and supplies that do not sum to zero.
TEST(ResidualNetTest, BuildChecksMagnitudes) {
  constexpr int64_t kQuarter = int64_t{1} << 60;  // four of these reach 2^62
  FlowGraph ok;
  NodeId a = ok.AddNode(5), b = ok.AddNode(-5);
  ok.AddArc(a, b, kQuarter, 1);
  ok.AddArc(b, b, kQuarter, -1);
  ok.AddArc(b, a, kQuarter - 10, 1);
  ResidualNet net;
  EXPECT_TRUE(net.Build(ok).ok());  // 3 * 2^60 - 10 plus supplies 10

  FlowGraph big = ok;
  big.AddArc(a, b, 1, 0);  // 3 * 2^60 + 1: still fine
  EXPECT_TRUE(net.Build(big).ok());
  big.AddArc(b, b, kQuarter, 0);  // 2^62 + 1, through a self-loop
  Status st = net.Build(big);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();

  FlowGraph unbalanced = ok;
  unbalanced.SetSupply(a, 6);
  st = net.Build(unbalanced);
  EXPECT_EQ(st.code(), StatusCode::kInfeasible) << st.ToString();
  EXPECT_NE(st.ToString().find("supplies sum to 1"), std::string::npos) << st.ToString();
}

std::string VariantName(const ::testing::TestParamInfo<Variant>& info) {
  return "factor" + std::to_string(info.param.factor) +
         (info.param.price_refine ? "_price_refine" : "") +
         (info.param.ssp_finish_below > 0
              ? "_ssp_finish_below" + std::to_string(info.param.ssp_finish_below)
              : "");
}

INSTANTIATE_TEST_SUITE_P(Variants, CostScalingTest,
                         ::testing::Values(Variant{2, false}, Variant{3, false}, Variant{16, false},
                                           Variant{64, false}, Variant{5, true}, Variant{16, true},
                                           Variant{16, false, 1}, Variant{2, false, 16}),
                         VariantName);

}  // namespace
}  // namespace copse::flow

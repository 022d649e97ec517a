// Every solver of the registry, and the variants of their options the
// library still offers (other races of the same pair, engines, cost-scaling
// and relaxation options, successive shortest paths from scratch), through
// SolverTest (solver_test_suite.h): against LEMON on random problems and
// along random change sequences, plus the edge cases.
#include "scheduler/flow/solvers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/incremental.h"
#include "scheduler/flow/racing.h"
#include "scheduler/flow/relaxation.h"
#include "scheduler/flow/solver_test_suite.h"
#include "scheduler/flow/ssp.h"

namespace copse::flow {
namespace {

using testing::SolverCase;
using testing::SolverCaseName;
using testing::SolverTest;

std::vector<SolverCase> RegistryCases() {
  std::vector<SolverCase> cases;
  for (const std::string& name : SolverNames()) {
    cases.push_back({name, [name] { return MakeSolver(name).value(); }});
  }
  return cases;
}

template <typename Solver, typename Options>
SolverCase With(std::string name, Options options) {
  return {std::move(name), [options] { return std::make_unique<Solver>(options); }};
}

IncrementalOptions WithEngine(IncrementalOptions::Engine engine) {
  IncrementalOptions o;
  o.engine = engine;
  return o;
}

// The same solvers with other options: each must stay correct.
std::vector<SolverCase> VariantCases() {
  using E = IncrementalOptions::Engine;
  RaceOptions always = DefaultRaceOptions();  // both start on every solve, at every size
  always.solo_below_arcs = 0;
  always.hedge_factor = 0;
  always.probe_every = 0;
  RaceOptions hedged = DefaultRaceOptions();  // hedged and probed at every size
  hedged.solo_below_arcs = 0;
  IncrementalOptions cs_nofinish = WithEngine(E::kCostScaling);
  cs_nofinish.cost_scaling.ssp_finish_below = 0;
  IncrementalOptions cs_local = WithEngine(E::kCostScaling);
  cs_local.local_cost_scaling = true;
  IncrementalOptions cold_relaxation = WithEngine(E::kShortestPaths);
  cold_relaxation.cold_relaxation = true;
  CostScalingOptions wide;
  wide.force_wide = true;
  wide.scaling_factor = 4;
  wide.price_refine = true;
  CostScalingOptions nofinish;
  nofinish.ssp_finish_below = 0;
  return {
      {"race_always", [always] { return MakeFirmamentRace("race_always", always); }},
      {"race_hedged", [hedged] { return MakeFirmamentRace("race_hedged", hedged); }},
      {"race_ssp",
       [cold_relaxation] {
         return std::make_unique<RacingSolver>(
             "race_ssp", std::make_unique<IncrementalSolver>(cold_relaxation),
             std::make_unique<IncrementalSolver>(WithEngine(E::kCostScaling)));
       }},
      {"race_scratch",
       [] {
         return std::make_unique<RacingSolver>("race_scratch", std::make_unique<RelaxationSolver>(),
                                               std::make_unique<CostScalingSolver>());
       }},
      With<IncrementalSolver>("incremental_auto", WithEngine(E::kAuto)),
      With<IncrementalSolver>("incremental_relax", WithEngine(E::kRelaxation)),
      With<IncrementalSolver>("incremental_cs_nofinish", cs_nofinish),
      With<IncrementalSolver>("incremental_cs_local", cs_local),
      With<CostScalingSolver>("cost_scaling_wide", wide),
      With<CostScalingSolver>("cost_scaling_nofinish", nofinish),
      With<RelaxationSolver>("relaxation_fifo", RelaxationOptions{false}),
      {"ssp", [] { return std::make_unique<SuccessiveShortestPathSolver>(); }},
  };
}

INSTANTIATE_TEST_SUITE_P(AllSolvers, SolverTest, ::testing::ValuesIn(RegistryCases()),
                         SolverCaseName);
INSTANTIATE_TEST_SUITE_P(Variants, SolverTest, ::testing::ValuesIn(VariantCases()), SolverCaseName);

TEST(SolverRegistryTest, NamesTheDefaultFirstAndRejectsOthers) {
  const std::vector<std::string> names = SolverNames();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), kDefaultSolver);
  // The scheduler's default is one of them.
  EXPECT_NE(std::find(names.begin(), names.end(), kSchedulerSolver), names.end());
  for (const std::string& name : names) {
    auto solver = MakeSolver(name);
    ASSERT_TRUE(solver.ok()) << name;
  }
  auto unknown = MakeSolver("race_always");  // an experiment: bench/flow's registry
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("known: race, "), std::string::npos);
}

}  // namespace
}  // namespace copse::flow

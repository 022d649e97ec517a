// Every solver of the registry through SolverTest (solver_test_suite.h):
// against LEMON on random problems and along random change sequences, plus
// the edge cases. The variants of their options that the benchmark offers
// run the same suite in bench/flow/bench_solvers_test.cc, built as the
// benchmark builds them.
#include "scheduler/flow/solvers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "scheduler/flow/solver_test_suite.h"

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

INSTANTIATE_TEST_SUITE_P(AllSolvers, SolverTest, ::testing::ValuesIn(RegistryCases()),
                         SolverCaseName);

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

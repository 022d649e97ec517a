// The benchmark's registry: every name makes a solver that reports it, the
// library's names come first, unknown names are rejected with the known
// ones; and the solvers that live in bench/flow (the network simplex) pass
// the checks every solver passes (SolverTest, solver_test_suite.h).
#include "bench/flow/bench_solvers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "scheduler/flow/solver_test_suite.h"
#include "scheduler/flow/solvers.h"

namespace copse::bench {
namespace {

using flow::testing::SolverCase;
using flow::testing::SolverTest;

TEST(BenchSolversTest, EveryNameMakesASolver) {
  const std::vector<std::string> names = BenchSolverNames();
  const std::vector<std::string> library = flow::SolverNames();
  ASSERT_GT(names.size(), library.size());
  EXPECT_TRUE(std::equal(library.begin(), library.end(), names.begin()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const std::string& name : names) {
    auto solver = MakeBenchSolver(name);
    ASSERT_TRUE(solver.ok()) << name << ": " << solver.status().ToString();
    ASSERT_NE(*solver, nullptr) << name;
  }
  // Solvers whose name says what they are report the registry's name.
  for (const char* name : {"race_always", "race_hedged", "race_ssp", "race_scratch",
                           "incremental_auto", "incremental_relax", "incremental_cs_nofinish",
                           "incremental_cs_local", "network_simplex", "ssp"}) {
    EXPECT_EQ((*MakeBenchSolver(name))->name(), name);
  }
}

TEST(BenchSolversTest, LookaheadTakesOneOrTwoDigits) {
  EXPECT_TRUE(MakeBenchSolver("incremental_local_look0").ok());
  EXPECT_TRUE(MakeBenchSolver("incremental_local_look12").ok());
  for (const char* bad :
       {"incremental_local_look", "incremental_local_look123", "incremental_local_lookx", "nope"}) {
    auto solver = MakeBenchSolver(bad);
    EXPECT_EQ(solver.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(solver.status().message().find("known: race, "), std::string::npos) << bad;
  }
}

// Every solver only the benchmark offers (the variants and the network
// simplex), made exactly as the benchmark makes it.
std::vector<SolverCase> BenchOnlyCases() {
  const std::vector<std::string> library = flow::SolverNames();
  std::vector<SolverCase> cases;
  for (const std::string& name : BenchSolverNames()) {
    if (std::find(library.begin(), library.end(), name) != library.end()) continue;
    cases.push_back({name, [name] { return std::move(MakeBenchSolver(name)).value(); }});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(BenchSolvers, SolverTest, ::testing::ValuesIn(BenchOnlyCases()),
                         flow::testing::SolverCaseName);

}  // namespace
}  // namespace copse::bench

// SolverTest: the checks every min-cost-flow solver must pass, as a
// value-parameterized GoogleTest suite that a test binary instantiates with
// the solvers it owns (scheduler/flow/solvers_test.cc the library's,
// bench/flow/bench_solvers_test.cc the benchmark's):
//   INSTANTIATE_TEST_SUITE_P(Mine, SolverTest, ::testing::Values(...), SolverCaseName);
// Each case names a solver and makes a new one; a test makes a fresh solver
// wherever it needs one from scratch. The checks: agreement with LEMON's
// NetworkSimplex (the oracle) on 512 random problems of every shape and
// along 16 random change sequences, every returned flow checked for
// conservation, capacity and reduced-cost optimality; empty and trivial
// problems; costs that could overflow rejected; cancellation honoured.
// Thread-safety: test code, one thread.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "scheduler/flow/solver.h"

namespace copse::flow::testing {

struct SolverCase {
  std::string name;  // the test-name suffix: letters, digits and '_'
  std::function<std::unique_ptr<FlowSolver>()> make;
};

class SolverTest : public ::testing::TestWithParam<SolverCase> {};

// The case's name, for INSTANTIATE_TEST_SUITE_P.
std::string SolverCaseName(const ::testing::TestParamInfo<SolverCase>& info);

}  // namespace copse::flow::testing

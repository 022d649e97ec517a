// The solver registry: every algorithm by the name the CLI and benchmarks
// use. Thread-safety: MakeSolver is thread-safe; each solver is not.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/flow/solver.h"

namespace copse::flow {

// Names accepted by MakeSolver, default first.
std::vector<std::string> SolverNames();
// The default solver: Firmament's race of relaxation (from scratch) and
// incremental cost scaling (docs/flow.md has the measurements behind it).
inline constexpr std::string_view kDefaultSolver = "race";

// A new solver by name; kInvalidArgument for an unknown name.
Result<std::unique_ptr<FlowSolver>> MakeSolver(std::string_view name);

}  // namespace copse::flow

// The solver registry: every algorithm by the name the CLI and benchmarks
// use. Thread-safety: MakeSolver is thread-safe; each solver is not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/flow/solver.h"

namespace copse::flow {

// Names accepted by MakeSolver, default first.
std::vector<std::string> SolverNames();
// The default of `copse flow` and the benchmarks, the fastest: Firmament's
// race of relaxation (from scratch) and incremental cost scaling
// (docs/flow.md has the measurements behind it). The scheduler uses one
// deterministic solver instead, copse::kSchedulerSolver (common/config.h).
inline constexpr std::string_view kDefaultSolver = "race";
// Graphs with fewer arcs than this are solved by the default race's
// incremental contestant alone, which routes them by successive shortest
// paths (IncrementalOptions::ssp_below_arcs has the same default).
inline constexpr uint32_t kSoloBelowArcs = 100000;
// The default race is hedged (RaceOptions::hedge_factor): the second
// contestant starts after this many times the last winner's solve time.
inline constexpr double kHedgeFactor = 2.0;

// The default race starts both contestants at once after this many solves
// in a row in which only the leader ran (RaceOptions::probe_every).
inline constexpr int kProbeEvery = 2;

// A new solver by name; kInvalidArgument for an unknown name.
Result<std::unique_ptr<FlowSolver>> MakeSolver(std::string_view name);

}  // namespace copse::flow

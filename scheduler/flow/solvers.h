// The solver registry: the production solvers by the names the scheduler's
// config, `copse flow --algorithm` and the benchmarks use. It holds the
// solvers the scheduler and the default race use and the from-scratch ones a
// user may pick; the experiment variants (other races, engines and options
// measured once) are in the benchmark's registry (bench/flow/bench_solvers.h).
// Thread-safety: every function here is thread-safe; each solver is not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "copse/status.h"
#include "scheduler/flow/racing.h"
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

// The default race's options: hedged (kHedgeFactor, kProbeEvery), graphs
// below kSoloBelowArcs left to the incremental contestant alone, relaxation
// kept away from congested problems.
RaceOptions DefaultRaceOptions();

// Firmament's pair raced under `options`: relaxation from scratch
// (contestant 0) against incremental_tiered (contestant 1). MakeSolver's
// "race" is MakeFirmamentRace("race", DefaultRaceOptions()); the benchmark
// races the same pair under other options.
std::unique_ptr<FlowSolver> MakeFirmamentRace(std::string name, RaceOptions options);

}  // namespace copse::flow

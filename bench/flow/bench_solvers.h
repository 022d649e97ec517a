// The benchmark's solver registry: every name of the library's registry
// (flow::MakeSolver: the solvers the scheduler and the default race use),
// plus the experiment variants measured once and kept for comparisons —
// other races of the same pair and other pairs, other incremental engines,
// cost scaling and relaxation with other options, successive shortest paths
// and the network simplex from scratch — and ablations of incremental_local
// and incremental_leaf with one of their steps changed. `copse bench flow
// --scratch/--incremental` and copse-bench-flow-dimacs take these names;
// docs/flow.md ("Experiment variants") says what each one is.
// Thread-safety: the functions are thread-safe; each solver is not.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "copse/status.h"
#include "scheduler/flow/solver.h"

namespace copse::bench {

// Every fixed name MakeBenchSolver accepts: flow::SolverNames() first (the
// default first), then the variants. MakeBenchSolver also accepts
// incremental_local_lookN (N = 0..99: LocalSspOptions::lookahead).
std::vector<std::string> BenchSolverNames();

// A new solver by name; kInvalidArgument naming the known ones otherwise.
Result<std::unique_ptr<flow::FlowSolver>> MakeBenchSolver(std::string_view name);

}  // namespace copse::bench

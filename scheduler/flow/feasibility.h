// MakeFeasible: a feasible flow in a ResidualNet, costs ignored. Sends flow
// from the nodes with excess to the nodes with deficit along any residual
// paths by Dinic's algorithm (breadth-first levels and blocking flows,
// layered.h). Cost scaling starts from the flow it leaves; relaxation uses
// it to tell an infeasible problem from a slow one.
//
// Its working arrays are the caller's (FeasibilityWorkspace): the solver that
// calls it owns one and keeps it between solves, so that a re-solve reuses
// the pages instead of faulting in fresh ones (reuse.h).
// Thread-safety: none; one workspace per solver.
#pragma once

#include <cstdint>
#include <vector>

#include "copse/status.h"
#include "scheduler/flow/layered.h"
#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/solver.h"

namespace copse::flow {

struct FeasibilityWorkspace {
  internal::LayerWorkspace layers;
  std::vector<uint32_t> sources;  // the nodes with excess, each round
};

// Routes every excess in `net` to the deficits, working in `ws` (its
// contents between calls do not matter). Returns kInfeasible if some excess
// cannot be routed, kCancelled if cancelled.
Status MakeFeasible(ResidualNet& net, FeasibilityWorkspace& ws, const CancelFlag* cancel);

}  // namespace copse::flow

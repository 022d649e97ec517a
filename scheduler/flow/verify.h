// CheckSolution: verifies a FlowSolution against its graph — conservation at
// every node, 0 <= flow <= capacity on every arc, reduced-cost optimality
// with the solution's potentials, and the reported total cost. Used by the
// tests and by `copse-flow solve --check`. Thread-safety: pure function.
#pragma once

#include "copse/status.h"
#include "scheduler/flow/flow_graph.h"
#include "scheduler/flow/solver.h"

namespace copse::flow {

// Ok if `solution` is a feasible flow of `graph` that its potentials prove
// optimal; otherwise kInternal naming the first violation found.
Status CheckSolution(const FlowGraph& graph, const FlowSolution& solution);

}  // namespace copse::flow

// LEMON reference solvers (NetworkSimplex, CostScaling, CapacityScaling) run
// on a FlowGraph. This header does not include LEMON, so C++20 code (tests,
// benchmarks) can call it; the implementation is compiled as C++17 because
// LEMON 1.3.1 does not build as C++20. Used only by tests (as the oracle)
// and benchmarks (as the baseline), never by the scheduler.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/flow/flow_graph.h"

namespace copse::flow::lemon_ref {

enum class Algorithm { kNetworkSimplex, kCostScaling, kCapacityScaling };

const char* AlgorithmName(Algorithm a);

struct LemonResult {
  bool feasible = false;
  int64_t cost = 0;
  std::vector<int64_t> flow;  // by ArcId
  double build_ms = 0;        // building LEMON's graph and maps
  double solve_ms = 0;        // run() alone
};

// Solves `graph` with LEMON. Supplies must sum to zero for a feasible answer
// (the problem is solved with equality constraints).
LemonResult Solve(const FlowGraph& graph, Algorithm algorithm);

}  // namespace copse::flow::lemon_ref

// Random min-cost-flow problems for tests: assorted shapes (sparse, dense,
// zero-cost cycles, zero-capacity arcs, negative costs, large costs,
// infeasible) and random change batches for incremental solving. Supplies are
// made from a random flow, so the feasible shapes are feasible by
// construction. Test support only. Thread-safety: pure functions of the seed.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "scheduler/flow/flow_graph.h"

namespace copse::flow::testing {

enum class Shape {
  kSparse,
  kDense,
  kZeroCostCycles,
  kZeroCapacity,
  kNegativeCosts,
  kLargeCosts,
  kBipartite,
  kInfeasible,
};
inline constexpr int kShapeCount = 8;

std::string ShapeName(Shape s);

// A random problem of `shape` with about `nodes` nodes.
FlowGraph RandomGraph(Shape shape, int nodes, uint64_t seed);

// Applies `count` random edits (costs, capacities, supplies kept summing to
// zero, arcs and nodes added and removed). Keeps the problem feasible when
// `keep_feasible` by re-deriving supplies from a random flow.
void RandomChanges(FlowGraph& graph, int count, std::mt19937_64& rng, bool keep_feasible);

// Puts `count` random arcs in random cost groups (creating up to three),
// takes some out, and shifts every group by a random amount, either way.
void RandomGroupShifts(FlowGraph& graph, int count, std::mt19937_64& rng);

}  // namespace copse::flow::testing

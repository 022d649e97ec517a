// Placement extraction (Firmament Listing 1): reads which task runs on which
// machine from an optimal flow. Starting from the machine nodes, each node
// hands the machines that its flow reached back along its incoming arcs, as
// many as each arc carries, until they arrive at task nodes. Linear in the
// size of the graph in the common case; works with aggregators (racks, the
// cluster node) of any depth. Ties are broken by the order of `machines` and
// of each node's incoming arcs, so the result is deterministic. The
// benchmark's reading of a solution; the scheduler reads its placements from
// its own graph (scheduler/quincy_policy.h).
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/flow/flow_graph.h"

namespace copse::flow {

struct Placement {
  NodeId task;
  NodeId machine;
};

// `flow` is indexed by ArcId; `is_task` by NodeId (nonzero for task nodes).
// Each machine hands out one token per unit of flow entering it. Returns one
// placement per task that the flow sends to a machine, in no special order.
std::vector<Placement> ExtractPlacements(const FlowGraph& graph, const std::vector<int64_t>& flow,
                                         const std::vector<NodeId>& machines,
                                         const std::vector<uint8_t>& is_task);

}  // namespace copse::flow

// KeptArcs: the copy of a flow graph's arcs that the incremental
// successive-shortest-paths solvers (LocalSspSolver, LeafSspSolver) keep
// between solves and edit from the graph's change record: each arc's cost,
// capacity, flow and ends; each node's out- and in-arcs, swap-removable
// because every arc knows its position in both lists; and each node's
// in-arcs that carry flow (the backward residual arcs a search scans),
// doubly linked through the arcs; and the totals over them that the
// magnitude check and the answer's cost need. The solvers derive from it
// and decide which arcs carry what; it only keeps the lists consistent.
// Thread-safety: none (a solver's own state).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "copse/status.h"
#include "scheduler/flow/flow_graph.h"
#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {

class KeptArcs {
 protected:
  // 32 bytes: an arc's copy and its flow share half a cache line, so a scan
  // touches one line per arc.
  struct ArcCopy {
    int64_t cost = 0;
    int64_t capacity = 0;
    int64_t flow = 0;
    NodeId tail = kNoId;  // kNoId: no live arc has this id
    NodeId head = kNoId;
    bool alive() const { return tail != kNoId; }
  };

  // Grows every array to the graph's id bounds (never shrinks; with slack).
  void GrowArcs(size_t nodes, size_t arcs);
  // Empties every node's lists (the arc copies stay as they are).
  void ClearLists();
  // Puts arc a in its tail's out-list and its head's in-list / takes it out.
  void LinkAdjacent(ArcId a);
  void UnlinkAdjacent(ArcId a);
  // Puts arc a in its head's flow-in list / takes it out. Unlinking leaves
  // fin_next_[a] as it was, so that a scan standing on `a` goes on.
  void LinkFlow(ArcId a);
  void UnlinkFlow(ArcId a);

  // Test hook for the solvers' CheckState: the flow-in lists hold exactly
  // the live arcs other than loops that carry flow and for which
  // `listed(a)` holds, each at its head; every live arc other than a loop
  // sits in its ends' adjacency lists at its recorded positions, and the
  // lists hold nothing else. Empty when so; otherwise what is wrong.
  std::string ListsError(const FlowGraph& g, const std::function<bool(ArcId)>& listed) const;

  // Zeroes the totals below.
  void ResetTotals();
  // A live arc's cost joins the bound on |cost|; one about to go may have
  // been what set it, so the bound stops being exact.
  void NoteCost(int64_t cost) { max_abs_cost_ = std::max(max_abs_cost_, AbsCost(cost)); }
  void DropCost(int64_t cost) {
    if (AbsCost(cost) >= max_abs_cost_) max_exact_ = false;
  }
  // A live copy's cost becomes `cost`, the totals following.
  void SetCopyCost(ArcCopy& c, int64_t cost) {
    DropCost(c.cost);
    cost_ += Wide{c.flow} * (Wide{cost} - c.cost);
    c.cost = cost;
    NoteCost(cost);
  }
  // flow::CheckMagnitudes on the totals, the bound on |cost| recomputed
  // from the live copies first when an inexact one would fail it.
  Status CheckMagnitudes(const FlowGraph& g);

  Wide cost_ = 0;             // sum of flow * cost over live arcs
  Wide capacity_ = 0;         // sum of live arcs' capacities
  Wide supply_sum_ = 0;       // sum of live nodes' supplies
  Wide abs_supply_ = 0;       // sum of |supply|
  int64_t max_abs_cost_ = 0;  // an upper bound on |cost| of the live arcs...
  bool max_exact_ = true;     // ...exact when this is true

  std::vector<ArcCopy> arcs_;                 // by ArcId
  std::vector<ArcId> fin_first_;              // by NodeId
  std::vector<ArcId> fin_next_, fin_prev_;    // by ArcId
  std::vector<std::vector<ArcId>> out_, in_;  // by NodeId
  std::vector<uint32_t> out_pos_, in_pos_;    // by ArcId
};

}  // namespace copse::flow

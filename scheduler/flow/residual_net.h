// ResidualNet: the compact residual network every solver in this folder works
// on. Nodes are renumbered densely; each node's residual arcs (the forward
// arcs it is the tail of and the reverse arcs of those it is the head of) lie
// contiguously in one array (CSR), each with its residual capacity, cost and
// the index of its partner. Flow on a graph arc is the residual capacity of
// its reverse arc. Self-loops are kept aside (their optimal flow is their
// capacity when their cost is negative, else 0).
//
// Also here: the small helpers several solvers share (exact potentials by
// label correcting, saturating negative arcs, solution extraction; a
// feasible flow by max flow is in feasibility.h).
// Thread-safety: none; each solver owns its own ResidualNet.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "copse/status.h"
#include "scheduler/flow/flow_graph.h"
#include "scheduler/flow/solver.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {

struct ResidualArc {
  int64_t resid;  // residual capacity
  int64_t cost;   // original (unscaled) cost; the reverse arc has the negated cost
  uint32_t head;  // dense node index
  uint32_t rev;   // index of the partner arc
};

// Largest |cost| * (nodes + 1) the solvers accept, so that potentials and path
// lengths of size nodes * max|cost| stay far from int64 overflow.
inline constexpr int64_t kMaxCostTimesNodes = int64_t{1} << 60;
// Largest sum of capacities plus |supplies|, so that excesses never overflow.
inline constexpr int64_t kMaxTotalCapacity = int64_t{1} << 62;

// The checks every solver makes before it starts: kInvalidArgument when
// max|cost| * (nodes + 1) reaches 2^60 or `total` (capacities plus
// |supplies|) passes 2^62, kInfeasible when the supplies sum to non-zero.
Status CheckMagnitudes(int64_t max_abs_cost, uint32_t nodes, Wide total, Wide supply_sum);

// -cost for a reverse residual arc, saturated the same way (a network with
// such a cost fails its magnitude check; the arc must only not overflow).
inline int64_t NegCost(int64_t cost) {
  return cost == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -cost;
}
// |cost|, with the most negative int64 (whose negation overflows) mapped to
// the largest, so that magnitude checks reject it.
inline int64_t AbsCost(int64_t cost) {
  if (cost >= 0) return cost;
  return cost == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -cost;
}

class ResidualNet {
 public:
  // Builds the network of `graph` with the flow `init_flow` (by ArcId, clamped
  // to [0, capacity]; arcs beyond its size, or new ones when `skip_new_arcs`,
  // start at 0). Returns kInvalidArgument if the numbers are too large and
  // kInfeasible if the supplies do not sum to zero.
  Status Build(const FlowGraph& graph, const std::vector<int64_t>* init_flow = nullptr,
               bool skip_new_arcs = false);
  // Builds the network with every arc of negative cost saturated and the
  // others empty: the pseudoflow SaturateNegativeArcs leaves under zero
  // potentials, without a second pass over the residual arcs.
  Status BuildSaturatingNegative(const FlowGraph& graph);

  // Keeps the network of one evolving graph between solves instead of
  // building it anew (for the solvers that start from scratch every time):
  // the first call builds it with room after each row, later calls read only
  // the graph's change record (arcs removed from and appended to their rows,
  // a row moved to the end of the array when it runs out of room, node slots
  // freed and reused), and every call then sets the flow of
  // BuildSaturatingNegative in one sequential pass over the rows. A graph
  // other than the last one synced, edits never synced (the revision moved
  // on past them), or an array grown to twice its size at the last build is
  // built anew. The network then has node slots that hold no node (node_id() == kNoId, an
  // empty row, zero excess), and row order depends on the history, so tie
  // breaks may differ from a fresh Build (the optimal cost does not).
  // Returns what Build returns.
  Status SyncSaturatingNegative(const FlowGraph& graph);

  // Dense node slots, some of which may be free after SyncSaturatingNegative.
  uint32_t node_count() const { return n_; }
  uint32_t begin(uint32_t u) const { return first_[u]; }
  uint32_t end(uint32_t u) const { return end_[u]; }
  ResidualArc& arc(uint32_t a) { return arcs_[a]; }
  const ResidualArc& arc(uint32_t a) const { return arcs_[a]; }
  int64_t& excess(uint32_t u) { return excess_[u]; }
  int64_t excess(uint32_t u) const { return excess_[u]; }
  int64_t max_abs_cost() const { return max_abs_cost_; }
  uint32_t dense(NodeId id) const { return dense_[id]; }
  NodeId node_id(uint32_t u) const { return node_id_[u]; }
  // Tail of residual arc `a`.
  uint32_t tail(uint32_t a) const { return arcs_[arcs_[a].rev].head; }
  // Index of the forward residual arc of graph arc `id` (kNoId for self-loops).
  uint32_t forward(ArcId id) const { return arc_pos_[id]; }

  // Moves `delta` units along residual arc `a` (REQUIRES: delta <= resid).
  void Push(uint32_t a, int64_t delta) {
    ResidualArc& r = arcs_[a];
    r.resid -= delta;
    arcs_[r.rev].resid += delta;
    excess_[arcs_[r.rev].head] -= delta;
    excess_[r.head] += delta;
  }

  // Fills `out` (flow by ArcId, potentials by NodeId, total cost) from the
  // current flow and the dense potentials `pot`. kInvalidArgument if the total
  // cost does not fit in 64 bits.
  Status Extract(const FlowGraph& graph, const std::vector<int64_t>& pot, FlowSolution* out) const;

  size_t MemoryBytes() const;

 private:
  Status BuildImpl(const FlowGraph& graph, const std::vector<int64_t>* init_flow,
                   bool skip_new_arcs, bool saturate_negative);
  // BuildImpl's steps, in order: size the node arrays; number the nodes
  // densely and lay out their rows, adding to the sums of supplies and of
  // |supplies| (returns the residual arc count); size the arc arrays; copy
  // the arcs with their initial flow, returning `total` plus the capacities.
  void SizeNodeArrays(const FlowGraph& g);
  uint32_t LayOutRows(const FlowGraph& g, Wide& total, Wide& supply_sum);
  void SizeArcArrays(const FlowGraph& g, uint32_t residual_arcs);
  Wide CopyArcs(const FlowGraph& g, const std::vector<int64_t>* init_flow, bool skip_new_arcs,
                bool saturate_negative, Wide total);
  // Persistent mode (SyncSaturatingNegative and what it calls).
  static uint32_t RowSlack(uint32_t degree) { return degree / 8 + 2; }
  void SyncChanges(const FlowGraph& g);
  void RemovePair(uint32_t fa);
  void AddPair(const FlowGraph& g, ArcId a);
  uint32_t GrowArcs(uint32_t room);
  uint32_t RowAppend(uint32_t u);
  void MoveArc(uint32_t from, uint32_t to);
  uint32_t NewSlot(uint32_t room);
  void ResetSaturatingNegative();

  uint32_t n_ = 0;
  std::vector<uint32_t> first_;  // row starts (n_ + 1 entries)
  std::vector<uint32_t> end_;    // row ends
  std::vector<ResidualArc> arcs_;
  std::vector<int64_t> excess_;
  std::vector<uint32_t> dense_;
  std::vector<NodeId> node_id_;
  std::vector<uint32_t> arc_pos_;
  int64_t max_abs_cost_ = 0;  // persistent: an upper bound (removals do not lower it)

  // Persistent mode only (SyncSaturatingNegative).
  bool persistent_ = false;
  uint64_t graph_instance_ = 0;       // FlowGraph::instance_id() of the graph synced
  uint64_t revision_ = 0;             // ...its revision then
  uint64_t edits_seen_ = 0;           // ...and its edit_count()
  uint64_t built_size_ = 0;           // arcs_.size() after the last full build
  std::vector<uint32_t> limit_;       // row u may grow up to limit_[u]
  std::vector<int64_t> rcap_;         // by residual arc: its graph arc's capacity
  std::vector<uint32_t> owner_;       // by residual arc: graph ArcId * 2, + 1 for a reverse arc
  std::vector<int64_t> supply_;       // by slot
  std::vector<uint32_t> free_dense_;  // slots without a node
  std::unordered_map<ArcId, int64_t> loop_cap_;  // self-loops and their capacities
  Wide capacity_sum_ = 0, supply_sum_ = 0, abs_supply_ = 0;
};

// FixPotentials' working arrays: its FIFO of nodes and their queued flags.
// The solver that calls it owns one and keeps it between solves, so that a
// re-solve reuses the pages (reuse.h).
struct FixPotentialsWorkspace {
  std::vector<uint32_t> queue;
  std::vector<uint8_t> queued;
};

// Adjusts `pot` (dense, original cost units) so that every residual arc has
// reduced cost >= -tolerance, by label correcting (only lowering potentials).
// Gives up after `max_scans` node scans (0: no limit) and returns false then.
// Only arcs out of `start` nodes (all nodes when null) and of nodes whose
// potential it lowers are examined: the caller promises the others hold.
// Works in `ws` (the caller's; its contents between calls do not matter).
// REQUIRES: no residual cycle of cost < -tolerance * length when unlimited.
bool FixPotentials(const ResidualNet& net, std::vector<int64_t>& pot, int64_t tolerance,
                   uint64_t max_scans, const CancelFlag* cancel, FixPotentialsWorkspace& ws,
                   const std::vector<uint32_t>* start = nullptr);

// Saturates every residual arc whose reduced cost under `pot` is negative, so
// that the pseudoflow satisfies reduced-cost optimality. Returns the largest
// violation seen (0 if none).
int64_t SaturateNegativeArcs(ResidualNet& net, const std::vector<int64_t>& pot);

// Reduced cost of residual arc `a` leaving node `u`.
inline int64_t ReducedCost(const ResidualNet& net, const std::vector<int64_t>& pot, uint32_t u,
                           uint32_t a) {
  const ResidualArc& r = net.arc(a);
  return r.cost - pot[u] + pot[r.head];
}

}  // namespace copse::flow

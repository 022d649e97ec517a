// LocalSspSolver: an incremental min-cost-flow solver whose work after a
// batch of changes is proportional to the batch and to the region its
// shortest-path searches explore, not to the graph.
//
// It keeps its own state between solves, indexed by the graph's stable ids:
// the flow of every arc, the potential, supply and excess of every node, and
// a copy of each arc's tail, head, capacity and cost (so that a removed or
// changed arc can be undone). A solve reads only the graph's change record:
//   1. sync: each changed arc and node is brought up to date (a removed arc's
//      flow leaves excess behind at its ends, a capacity below the flow is
//      clamped, a new arc starts empty, a supply change moves the excess); the
//      nodes at the ends of changed arcs are "touched";
//   2. repair: each touched node moves its own potential into the interval
//      its residual arcs allow (a new node takes the top of it), which absorbs
//      most cost changes without moving flow (a waiting task's rising wait
//      cost); arcs at touched nodes that are still violated are saturated;
//      deficits are retracted downstream, and each node with excess is
//      pulled toward the deficits together with the nodes along its tightest
//      arcs (LookAhead);
//   3. route: successive shortest paths from the nodes with excess —
//      multi-source Dijkstra over reduced costs on the graph's own adjacency
//      lists, stopping once the deficits reached can absorb the excess
//      (epoch-stamped labels, so nothing is cleared per solve), potentials
//      raised on the settled nodes only (or the same search backwards from
//      the deficits when they are far fewer: LocalSspOptions::reverse_search),
//      then a blocking flow (Dinic) on the zero-reduced-cost arcs inside the
//      settled region;
//   4. emit: the caller's FlowSolution gets a copy of the flow and potential
//      arrays (a memcpy; the total cost is kept up to date incrementally).
// (Steps 1, 2 and 4 are in local_ssp.cc, step 3 in local_ssp_route.cc.)
// Reduced-cost optimality (every residual arc >= 0) holds between any two of
// these steps, so a cancelled or infeasible solve leaves a valid pseudoflow
// that the next solve continues from. The first solve, a solve after the
// change record was lost (the graph's revision jumped by more than one) and
// Adopt() load the state from a full solution (cost scaling from scratch for
// the first); a lost record triggers a full sync over every id instead.
//
// The solver owns its kept state and its working arrays (the searches'
// labels and heap, the blocking flow's levels), kept between solves.
// Thread-safety: one thread per object; the graph is only read.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/kept_arcs.h"
#include "scheduler/flow/radix_heap.h"
#include "scheduler/flow/solver.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {

struct LocalSspOptions {
  // Before routing, a touched node with a deficit takes the bottom of its
  // potential interval and one with an excess the top: both shorten the
  // reduced-cost distance from excesses to deficits without moving flow.
  bool pull_potentials = true;
  // After the repair, a deficit moves downstream along arcs that carry flow
  // out of it wherever its potential allows (RetractDeficits).
  bool retract_deficits = true;
  // A routing phase searches backwards from the deficits when there are at
  // least kReverseRatio times fewer deficit nodes than source nodes (measured
  // at (c): one backward phase where the forward search took 350; with many
  // deficits each backward phase sweeps the graph to route a few units).
  bool reverse_search = true;
  // Before routing, each source's potential is pulled up together with the
  // nodes along its tightest arcs, up to this many hops (LookAhead).
  int lookahead = 2;
  // After each search, augment along its shortest-path tree (TreeAugment)
  // before the blocking flow on all the zero-reduced-cost arcs it settled.
  bool tree_augment = true;
};

class LocalSspSolver final : public FlowSolver, private KeptArcs {
 public:
  struct Stats {
    bool warm = false;             // started from kept state
    bool full_sync = false;        // the change record was not usable
    uint64_t synced = 0;           // arcs and nodes synced
    uint64_t touched = 0;          // nodes repaired
    uint64_t potential_moves = 0;  // touched nodes whose potential moved
    uint64_t saturated_arcs = 0;   // violated arcs saturated by the repair
    uint64_t retracted = 0;        // deficits moved downstream by the repair
    uint64_t lookahead_moves = 0;  // potentials raised by LookAhead
    uint64_t tree_paths = 0;       // augmentations along a search tree
    int64_t excess_units = 0;      // units of excess left for routing
    uint64_t phases = 0;           // Dijkstra phases
    uint64_t reverse_phases = 0;   // ...of which searched backwards
    uint64_t settled = 0;          // nodes settled by Dijkstra, all phases
    uint64_t scanned = 0;          // arcs scanned by Dijkstra, all phases
    double sync_ms = 0, repair_ms = 0, route_ms = 0, emit_ms = 0;
    double search_ms = 0, flow_ms = 0;  // route_ms split: Dijkstra, blocking flow
  };

  explicit LocalSspSolver(LocalSspOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "incremental_local"; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  void Adopt(const FlowGraph& graph, const FlowSolution& solution) override;
  const Stats& stats() const { return stats_; }

  // Test hook: OK when the kept state equals what a rebuild from `graph`
  // with the kept flow would give (arc copies, excesses, total cost, sums)
  // and every residual arc has a non-negative reduced cost; otherwise
  // kInternal naming the first difference.
  Status CheckState(const FlowGraph& graph) const;

 private:
  void LoadSolution(const FlowGraph& g, const FlowSolution& sol);
  void Resize(const FlowGraph& g);
  void SyncArc(const FlowGraph& g, ArcId a);
  void SyncNode(const FlowGraph& g, NodeId n);
  void Touch(NodeId n);
  void Pend(NodeId n) { pending_.push_back(n); }
  void Repair(const FlowGraph& g);
  bool Violated(ArcId a) const;
  void Interval(const FlowGraph& g, NodeId u, int64_t& lower, int64_t& upper, bool& low_side) const;
  void FixArc(const FlowGraph& g, ArcId a);
  void RetractDeficits(const FlowGraph& g);
  NodeId TightAbove(NodeId u) const;
  void LookAhead(const FlowGraph& g);
  void SetFlow(ArcId a, int64_t f);
  Status Route(const CancelFlag* cancel);
  void NextStamp();
  template <bool kReverse>
  bool Search(int64_t target, const CancelFlag* cancel);
  void TreeAugment(bool reverse);
  bool BuildLevels();
  void BlockingFlow();
  bool Admissible(NodeId u, ArcId a, bool back, NodeId& v) const;
  Status Emit(const FlowGraph& g, FlowSolution* out);

  LocalSspOptions options_;
  CostScalingSolver cold_;
  Stats stats_;
  bool has_state_ = false;
  uint64_t revision_ = 0;
  uint64_t edits_seen_ = 0;  // the graph's edit_count() at the last sync
  bool repair_all_ = false;  // a solve stopped before its repair

  // Kept state, by ArcId / NodeId (the flow of each arc is in its copy).
  std::vector<int64_t> pot_;
  std::vector<int64_t> excess_;
  std::vector<int64_t> supply_;
  std::vector<uint8_t> node_alive_;
  std::vector<NodeId> pending_;  // nodes that may hold a positive excess
  // KeptArcs holds the arc copies, the totals, each node's flow-in list (a
  // hub such as the cluster aggregator has an arc from every task but flow
  // on few of them) and its adjacency arrays, which the searches read
  // instead of the graph's linked lists, whose pointer chase serialises
  // the cache misses.

  // Per-solve work lists, epoch-stamped by NodeId.
  std::vector<uint32_t> touch_mark_;
  uint32_t epoch_ = 0;
  std::vector<NodeId> touched_;  // nodes whose potential may move
  std::vector<NodeId> fresh_;    // nodes added in this batch
  std::vector<ArcId> check_;     // arcs added or changed in this batch
  std::vector<ArcId> violated_;  // ...of which violated before the repair
  std::vector<NodeId> work_;     // RetractDeficits' worklist
  std::vector<NodeId> chain_;    // LookAhead's path
  // Nodes with more arcs than this are not pulled (their scan would cost more
  // than it saves).
  static constexpr uint32_t kPullDegree = 4096;

  // Dijkstra, epoch-stamped by NodeId.
  struct Label {
    int64_t dist = 0;
    uint32_t seen = 0;     // == stamp_: dist is set in this search
    uint32_t done = 0;     // == stamp_: settled in this search
    ArcId parent = kNoId;  // the arc it was reached by (kNoId: a root)...
    uint32_t back = 0;     // ...as a backward residual arc (1) or forward (0)
  };
  std::vector<Label> label_;  // one line per node touched, not three
  uint32_t stamp_ = 0;
  // The searches' monotone priority queue; ties last in, first out.
  RadixHeap heap_{true};
  std::vector<NodeId> settled_list_;
  std::vector<NodeId> sources_;
  std::vector<NodeId> deficits_;
  static constexpr size_t kReverseRatio = 4;
  std::vector<uint64_t> path_;

  // Blocking flow on the zero-reduced-cost arcs inside the settled region.
  std::vector<int32_t> level_;  // valid when level_mark_ == level_stamp_; -2 dead end
  std::vector<uint32_t> level_mark_;
  uint32_t level_stamp_ = 0;
  std::vector<ArcId> cur_;         // current arc per node: a position in out_[u] (0)...
  std::vector<uint8_t> cur_back_;  // ...or an arc of the flow-in list (1)
  std::vector<NodeId> queue_;
};

}  // namespace copse::flow

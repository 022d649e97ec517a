// FlowGraph: a min-cost-flow problem with stable node and arc ids, as the
// scheduler edits it between solves (docs/design.md §5). Nodes carry supplies
// (positive: source, negative: demand), arcs carry a capacity and a 64-bit
// cost. Adding, removing and changing a node or an arc is O(1) (removing a
// node is O(its degree)). The graph records which ids changed since the last
// CommitChanges(), so that incremental solvers can start from the previous
// solution; an id freed by a removal is not reused before the next commit, so
// within one batch an id names one thing.
//
// Cost groups carry what the owner knows about costs that move together (a
// clock tick raises every waiting task's wait cost by the same amount):
// ShiftCostGroup() adds one amount to the cost of every arc in a group, and
// the change record lists the group, not its arcs. cost() is always the
// arc's cost; a solver that ignores groups visits the shifted groups' arcs
// as changed ones (ForEachChangedArc), one that knows them may do less.
//
// Thread-safety: none; a const FlowGraph may be read from several threads
// (the racing solver does), but nothing may modify it meanwhile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace copse::flow {

using NodeId = uint32_t;
using ArcId = uint32_t;
using GroupId = uint32_t;
inline constexpr uint32_t kNoId = std::numeric_limits<uint32_t>::max();
inline constexpr GroupId kNoGroup = 0;

class FlowGraph {
 public:
  FlowGraph();
  // A copy is another graph: it gets an instance id of its own; a move
  // hands the id over and gives the moved-from object a fresh one.
  FlowGraph(const FlowGraph& other);
  FlowGraph& operator=(const FlowGraph& other);
  FlowGraph(FlowGraph&& other) noexcept;
  FlowGraph& operator=(FlowGraph&& other) noexcept;

  // Unique among the FlowGraph objects of the process: tells a solver that
  // keeps state between solves whether it is looking at the graph it saw.
  uint64_t instance_id() const { return instance_id_; }

  // Nodes.
  NodeId AddNode(int64_t supply = 0);
  // Removes `node` and every arc incident to it.
  // REQUIRES: IsNode(node).
  void RemoveNode(NodeId node);
  // REQUIRES: IsNode(node).
  void SetSupply(NodeId node, int64_t supply);

  // Arcs. REQUIRES: IsNode(tail), IsNode(head), capacity >= 0.
  ArcId AddArc(NodeId tail, NodeId head, int64_t capacity, int64_t cost);
  // REQUIRES: IsArc(arc).
  void RemoveArc(ArcId arc);
  void SetCost(ArcId arc, int64_t cost);
  // REQUIRES: capacity >= 0.
  void SetCapacity(ArcId arc, int64_t capacity);

  // Cost groups (see the top comment); ids 1..group_count(), never removed.
  GroupId AddCostGroup();
  // Puts `arc` in `group` (kNoGroup: in none), a change of the arc; an arc
  // leaves its group when removed. REQUIRES: IsArc(arc), group <= group_count().
  void SetCostGroup(ArcId arc, GroupId group);
  // Adds `delta` to the cost of every arc in `group` now. One edit; the
  // arcs are not listed in changed_arcs() for it (the group is, in
  // shifted_groups()). REQUIRES: 1 <= group <= group_count().
  void ShiftCostGroup(GroupId group, int64_t delta);
  GroupId cost_group(ArcId a) const { return arcs_[a].group; }
  uint32_t group_count() const { return static_cast<uint32_t>(groups_.size()) - 1; }
  uint32_t group_size(GroupId g) const { return groups_[g].size; }
  // Calls f(arc) for every arc of group g, in increasing id order (a pass
  // over the group's arcs walks the arc arrays forwards).
  template <typename F>
  void ForEachGroupArc(GroupId g, F&& f) const {
    const std::vector<uint64_t>& bits = groups_[g].bits;
    for (size_t w = 0; w < bits.size(); ++w) {
      for (uint64_t b = bits[w]; b != 0; b &= b - 1) {
        f(static_cast<ArcId>(w * 64 + static_cast<size_t>(__builtin_ctzll(b))));
      }
    }
  }
  // The sum of every shift of the group so far.
  int64_t group_offset(GroupId g) const { return groups_[g].offset; }

  bool IsNode(NodeId node) const { return node < nodes_.size() && nodes_[node].alive; }
  bool IsArc(ArcId arc) const { return arc < arc_alive_.size() && arc_alive_[arc] != 0; }
  // Ids are below these bounds; dead ids in between are skipped by IsNode/IsArc.
  uint32_t node_id_bound() const { return static_cast<uint32_t>(nodes_.size()); }
  uint32_t arc_id_bound() const { return static_cast<uint32_t>(arcs_.size()); }
  uint32_t node_count() const { return live_nodes_; }
  uint32_t arc_count() const { return live_arcs_; }

  int64_t supply(NodeId n) const { return nodes_[n].supply; }
  NodeId tail(ArcId a) const { return ends_[a].tail; }
  NodeId head(ArcId a) const { return ends_[a].head; }
  int64_t capacity(ArcId a) const { return ends_[a].capacity; }
  int64_t cost(ArcId a) const { return ends_[a].cost; }
  // A hint that arc `a`'s ends, cost and capacity are read soon (a solver
  // reading the change record in its order, which is not the arcs').
  void Prefetch(ArcId a) const { __builtin_prefetch(&ends_[a]); }

  // Intrusive adjacency: iterate with
  //   for (ArcId a = first_out(n); a != kNoId; a = next_out(a)) ...
  ArcId first_out(NodeId n) const { return nodes_[n].first_out; }
  ArcId next_out(ArcId a) const { return arcs_[a].next_out; }
  ArcId first_in(NodeId n) const { return nodes_[n].first_in; }
  ArcId next_in(ArcId a) const { return arcs_[a].next_in; }
  uint32_t out_degree(NodeId n) const { return nodes_[n].out_degree; }
  uint32_t in_degree(NodeId n) const { return nodes_[n].in_degree; }
  // Arcs at `n` in both directions, self-loops left out: the number of
  // residual arcs that leave `n` (ResidualNet sizes its rows from this).
  uint32_t residual_degree(NodeId n) const {
    return nodes_[n].out_degree + nodes_[n].in_degree - 2 * nodes_[n].self_loops;
  }

  // Changes since the last CommitChanges(): ids of nodes and arcs that were
  // added, removed or modified (each listed once).
  const std::vector<NodeId>& changed_nodes() const { return changed_nodes_; }
  const std::vector<ArcId>& changed_arcs() const { return changed_arcs_; }
  // Groups shifted since the last commit (each listed once): their arcs'
  // costs changed although changed_arcs() may not list them.
  const std::vector<GroupId>& shifted_groups() const { return shifted_groups_; }
  // Calls f(arc) for every arc listed in changed_arcs() and every arc of a
  // shifted group (an arc may come twice; added and removed arcs included).
  template <typename F>
  void ForEachChangedArc(F&& f) const {
    for (ArcId a : changed_arcs_) f(a);
    for (GroupId g : shifted_groups_) ForEachGroupArc(g, f);
  }
  // True when `arc` was added since the last commit (so it has no previous flow).
  bool IsNewArc(ArcId arc) const { return arc < arcs_.size() && arcs_[arc].added_at == revision_; }
  bool IsNewNode(NodeId n) const { return n < nodes_.size() && nodes_[n].added_at == revision_; }
  // Number of CommitChanges() calls so far.
  uint64_t revision() const { return revision_; }
  // Edits so far (each call that changed something), and their number when
  // CommitChanges() was last called: a solver that synced its state at
  // edit_count() == e continues into the next revision only if e equals
  // edits_at_last_commit(), i.e. it saw the whole batch that was committed.
  uint64_t edit_count() const { return edits_; }
  uint64_t edits_at_last_commit() const { return edits_at_commit_; }
  // Ids in the change record, the shifted groups' arcs counted.
  size_t change_count() const;

  // Forgets the change record and makes freed ids reusable.
  void CommitChanges();

  // Heap bytes held by the graph (for memory reports).
  size_t MemoryBytes() const;

 private:
  struct Node {
    int64_t supply = 0;
    ArcId first_out = kNoId;
    ArcId first_in = kNoId;
    uint32_t out_degree = 0;
    uint32_t in_degree = 0;
    uint32_t self_loops = 0;
    uint64_t added_at = 0;
    uint64_t dirty_at = 0;  // revision + 1 when listed in changed_nodes_
    bool alive = false;
  };
  // An arc's numbers and ends, apart from its links and bookkeeping: the
  // solvers' passes over every arc (building a residual network, extracting
  // a flow) read 24 bytes an arc instead of a 64-byte line.
  struct ArcEnds {
    int64_t capacity = 0;
    int64_t cost = 0;
    NodeId tail = kNoId;
    NodeId head = kNoId;
  };
  struct Arc {
    ArcId next_out = kNoId, prev_out = kNoId;
    ArcId next_in = kNoId, prev_in = kNoId;
    uint64_t added_at = 0;
    uint64_t dirty_at = 0;
    GroupId group = kNoGroup;
  };
  struct Group {
    std::vector<uint64_t> bits;  // by ArcId: in the group
    uint32_t size = 0;
    int64_t offset = 0;
    uint64_t shifted_at = 0;  // revision + 1 when listed in shifted_groups_
  };

  void ResetMovedFrom();
  void LeaveGroup(ArcId a);
  void MarkNode(NodeId n);
  void MarkArc(ArcId a);

  std::vector<Node> nodes_;
  // By ArcId, all three the same size.
  std::vector<ArcEnds> ends_;
  std::vector<Arc> arcs_;
  std::vector<uint8_t> arc_alive_;
  std::vector<NodeId> free_nodes_, pending_free_nodes_;
  std::vector<ArcId> free_arcs_, pending_free_arcs_;
  std::vector<NodeId> changed_nodes_;
  std::vector<ArcId> changed_arcs_;
  std::vector<Group> groups_;  // [0] is kNoGroup's, always empty
  std::vector<GroupId> shifted_groups_;
  uint64_t instance_id_;
  uint32_t live_nodes_ = 0;
  uint32_t live_arcs_ = 0;
  uint64_t revision_ = 0;
  uint64_t edits_ = 0;
  uint64_t edits_at_commit_ = 0;
};

}  // namespace copse::flow

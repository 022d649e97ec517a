#include "scheduler/flow/flow_graph.h"

#include <atomic>
#include <cassert>
#include <utility>

namespace copse::flow {

namespace {

uint64_t NextInstanceId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

FlowGraph::FlowGraph() : groups_(1), instance_id_(NextInstanceId()) {}

FlowGraph::FlowGraph(const FlowGraph& other)
    : nodes_(other.nodes_),
      ends_(other.ends_),
      arcs_(other.arcs_),
      arc_alive_(other.arc_alive_),
      free_nodes_(other.free_nodes_),
      pending_free_nodes_(other.pending_free_nodes_),
      free_arcs_(other.free_arcs_),
      pending_free_arcs_(other.pending_free_arcs_),
      changed_nodes_(other.changed_nodes_),
      changed_arcs_(other.changed_arcs_),
      groups_(other.groups_),
      shifted_groups_(other.shifted_groups_),
      instance_id_(NextInstanceId()),
      live_nodes_(other.live_nodes_),
      live_arcs_(other.live_arcs_),
      revision_(other.revision_),
      edits_(other.edits_),
      edits_at_commit_(other.edits_at_commit_) {}

FlowGraph& FlowGraph::operator=(const FlowGraph& other) {
  if (this != &other) {
    FlowGraph copy(other);
    *this = std::move(copy);
  }
  return *this;
}

FlowGraph::FlowGraph(FlowGraph&& other) noexcept
    : nodes_(std::move(other.nodes_)),
      ends_(std::move(other.ends_)),
      arcs_(std::move(other.arcs_)),
      arc_alive_(std::move(other.arc_alive_)),
      free_nodes_(std::move(other.free_nodes_)),
      pending_free_nodes_(std::move(other.pending_free_nodes_)),
      free_arcs_(std::move(other.free_arcs_)),
      pending_free_arcs_(std::move(other.pending_free_arcs_)),
      changed_nodes_(std::move(other.changed_nodes_)),
      changed_arcs_(std::move(other.changed_arcs_)),
      groups_(std::move(other.groups_)),
      shifted_groups_(std::move(other.shifted_groups_)),
      instance_id_(other.instance_id_),
      live_nodes_(other.live_nodes_),
      live_arcs_(other.live_arcs_),
      revision_(other.revision_),
      edits_(other.edits_),
      edits_at_commit_(other.edits_at_commit_) {
  other.ResetMovedFrom();
}

FlowGraph& FlowGraph::operator=(FlowGraph&& other) noexcept {
  if (this == &other) return *this;
  nodes_ = std::move(other.nodes_);
  ends_ = std::move(other.ends_);
  arcs_ = std::move(other.arcs_);
  arc_alive_ = std::move(other.arc_alive_);
  free_nodes_ = std::move(other.free_nodes_);
  pending_free_nodes_ = std::move(other.pending_free_nodes_);
  free_arcs_ = std::move(other.free_arcs_);
  pending_free_arcs_ = std::move(other.pending_free_arcs_);
  changed_nodes_ = std::move(other.changed_nodes_);
  changed_arcs_ = std::move(other.changed_arcs_);
  groups_ = std::move(other.groups_);
  shifted_groups_ = std::move(other.shifted_groups_);
  instance_id_ = other.instance_id_;
  live_nodes_ = other.live_nodes_;
  live_arcs_ = other.live_arcs_;
  revision_ = other.revision_;
  edits_ = other.edits_;
  edits_at_commit_ = other.edits_at_commit_;
  other.ResetMovedFrom();
  return *this;
}

// A moved-from graph is an empty one with an id of its own.
void FlowGraph::ResetMovedFrom() {
  for (auto* v : {&free_nodes_, &pending_free_nodes_, &changed_nodes_}) v->clear();
  for (auto* v : {&free_arcs_, &pending_free_arcs_, &changed_arcs_}) v->clear();
  nodes_.clear();
  ends_.clear();
  arcs_.clear();
  arc_alive_.clear();
  groups_.assign(1, Group{});
  shifted_groups_.clear();
  instance_id_ = NextInstanceId();
  live_nodes_ = live_arcs_ = 0;
  revision_ = edits_ = edits_at_commit_ = 0;
}

void FlowGraph::MarkNode(NodeId n) {
  ++edits_;
  if (nodes_[n].dirty_at != revision_ + 1) {
    nodes_[n].dirty_at = revision_ + 1;
    changed_nodes_.push_back(n);
  }
}

void FlowGraph::MarkArc(ArcId a) {
  ++edits_;
  if (arcs_[a].dirty_at != revision_ + 1) {
    arcs_[a].dirty_at = revision_ + 1;
    changed_arcs_.push_back(a);
  }
}

NodeId FlowGraph::AddNode(int64_t supply) {
  NodeId n;
  if (!free_nodes_.empty()) {
    n = free_nodes_.back();
    free_nodes_.pop_back();
  } else {
    n = static_cast<NodeId>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& node = nodes_[n];
  uint64_t dirty = node.dirty_at;
  node = Node{};
  node.dirty_at = dirty;
  node.supply = supply;
  node.alive = true;
  node.added_at = revision_;
  ++live_nodes_;
  MarkNode(n);
  return n;
}

void FlowGraph::RemoveNode(NodeId n) {
  assert(IsNode(n));
  while (nodes_[n].first_out != kNoId) RemoveArc(nodes_[n].first_out);
  while (nodes_[n].first_in != kNoId) RemoveArc(nodes_[n].first_in);
  nodes_[n].alive = false;
  nodes_[n].supply = 0;
  --live_nodes_;
  pending_free_nodes_.push_back(n);
  MarkNode(n);
}

void FlowGraph::SetSupply(NodeId n, int64_t supply) {
  assert(IsNode(n));
  if (nodes_[n].supply == supply) return;
  nodes_[n].supply = supply;
  MarkNode(n);
}

ArcId FlowGraph::AddArc(NodeId tail, NodeId head, int64_t capacity, int64_t cost) {
  assert(IsNode(tail) && IsNode(head) && capacity >= 0);
  ArcId a;
  if (!free_arcs_.empty()) {
    a = free_arcs_.back();
    free_arcs_.pop_back();
  } else {
    a = static_cast<ArcId>(arcs_.size());
    arcs_.emplace_back();
    ends_.emplace_back();
    arc_alive_.push_back(0);
  }
  Arc& arc = arcs_[a];
  uint64_t dirty = arc.dirty_at;
  arc = Arc{};
  arc.dirty_at = dirty;
  arc.added_at = revision_;
  ends_[a] = ArcEnds{capacity, cost, tail, head};
  arc_alive_[a] = 1;
  Node& t = nodes_[tail];
  arc.next_out = t.first_out;
  if (t.first_out != kNoId) arcs_[t.first_out].prev_out = a;
  t.first_out = a;
  ++t.out_degree;
  Node& h = nodes_[head];
  arc.next_in = h.first_in;
  if (h.first_in != kNoId) arcs_[h.first_in].prev_in = a;
  h.first_in = a;
  ++h.in_degree;
  if (tail == head) ++h.self_loops;
  ++live_arcs_;
  MarkArc(a);
  return a;
}

void FlowGraph::RemoveArc(ArcId a) {
  assert(IsArc(a));
  Arc& arc = arcs_[a];
  const ArcEnds& ends = ends_[a];
  if (arc.prev_out != kNoId) {
    arcs_[arc.prev_out].next_out = arc.next_out;
  } else {
    nodes_[ends.tail].first_out = arc.next_out;
  }
  if (arc.next_out != kNoId) arcs_[arc.next_out].prev_out = arc.prev_out;
  if (arc.prev_in != kNoId) {
    arcs_[arc.prev_in].next_in = arc.next_in;
  } else {
    nodes_[ends.head].first_in = arc.next_in;
  }
  if (arc.next_in != kNoId) arcs_[arc.next_in].prev_in = arc.prev_in;
  --nodes_[ends.tail].out_degree;
  --nodes_[ends.head].in_degree;
  if (ends.tail == ends.head) --nodes_[ends.head].self_loops;
  if (arc.group != kNoGroup) LeaveGroup(a);
  arc_alive_[a] = 0;
  --live_arcs_;
  pending_free_arcs_.push_back(a);
  MarkArc(a);
}

void FlowGraph::SetCost(ArcId a, int64_t cost) {
  assert(IsArc(a));
  if (ends_[a].cost == cost) return;
  ends_[a].cost = cost;
  MarkArc(a);
}

void FlowGraph::SetCapacity(ArcId a, int64_t capacity) {
  assert(IsArc(a) && capacity >= 0);
  if (ends_[a].capacity == capacity) return;
  ends_[a].capacity = capacity;
  MarkArc(a);
}

GroupId FlowGraph::AddCostGroup() {
  groups_.emplace_back();
  return static_cast<GroupId>(groups_.size() - 1);
}

void FlowGraph::LeaveGroup(ArcId a) {
  Group& from = groups_[arcs_[a].group];
  from.bits[a / 64] &= ~(uint64_t{1} << (a % 64));
  --from.size;
  arcs_[a].group = kNoGroup;
}

void FlowGraph::SetCostGroup(ArcId a, GroupId group) {
  assert(IsArc(a) && group < groups_.size());
  if (arcs_[a].group == group) return;
  if (arcs_[a].group != kNoGroup) LeaveGroup(a);
  if (group != kNoGroup) {
    Group& to = groups_[group];
    if (to.bits.size() <= a / 64) to.bits.resize(a / 64 + 1, 0);
    to.bits[a / 64] |= uint64_t{1} << (a % 64);
    ++to.size;
    arcs_[a].group = group;
  }
  MarkArc(a);
}

void FlowGraph::ShiftCostGroup(GroupId group, int64_t delta) {
  assert(group != kNoGroup && group < groups_.size());
  if (delta == 0) return;
  ForEachGroupArc(group, [&](ArcId a) { ends_[a].cost += delta; });
  Group& g = groups_[group];
  g.offset += delta;
  ++edits_;
  if (g.shifted_at != revision_ + 1) {
    g.shifted_at = revision_ + 1;
    shifted_groups_.push_back(group);
  }
}

size_t FlowGraph::change_count() const {
  size_t n = changed_nodes_.size() + changed_arcs_.size();
  for (GroupId g : shifted_groups_) n += groups_[g].size;
  return n;
}

void FlowGraph::CommitChanges() {
  changed_nodes_.clear();
  changed_arcs_.clear();
  shifted_groups_.clear();
  free_nodes_.insert(free_nodes_.end(), pending_free_nodes_.begin(), pending_free_nodes_.end());
  free_arcs_.insert(free_arcs_.end(), pending_free_arcs_.begin(), pending_free_arcs_.end());
  pending_free_nodes_.clear();
  pending_free_arcs_.clear();
  edits_at_commit_ = edits_;
  ++revision_;
}

size_t FlowGraph::MemoryBytes() const {
  return nodes_.capacity() * sizeof(Node) + arcs_.capacity() * sizeof(Arc) +
         ends_.capacity() * sizeof(ArcEnds) + arc_alive_.capacity() +
         groups_.capacity() * sizeof(Group) + shifted_groups_.capacity() * sizeof(GroupId) +
         (free_nodes_.capacity() + pending_free_nodes_.capacity() + changed_nodes_.capacity() +
          free_arcs_.capacity() + pending_free_arcs_.capacity() + changed_arcs_.capacity()) *
             sizeof(uint32_t) +
         [this] {
           size_t bytes = 0;
           for (const Group& g : groups_) bytes += g.bits.capacity() * sizeof(uint64_t);
           return bytes;
         }();
}

}  // namespace copse::flow

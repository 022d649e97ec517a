// LeafSspSolver: kept state, sync from the change record, leaves, emit and
// the state check. The repair is in leaf_ssp_repair.cc, the searches in
// leaf_ssp_route.cc.
#include "scheduler/flow/leaf_ssp.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/reuse.h"
#include "scheduler/flow/stopwatch.h"

namespace copse::flow {

namespace {

Wide Abs(Wide v) { return v < 0 ? -v : v; }

}  // namespace

void LeafSspSolver::Resize(const FlowGraph& g) {
  const size_t arcs = g.arc_id_bound(), nodes = g.node_id_bound();
  GrowArcs(nodes, arcs);
  GrowTo(pot_, nodes, int64_t{0});
  GrowTo(excess_, nodes, int64_t{0});
  GrowTo(supply_, nodes, int64_t{0});
  GrowTo(node_alive_, nodes, uint8_t{0});
  GrowTo(leaf_, nodes, uint8_t{0});
  GrowTo(at_, nodes, kNoId);
  GrowTo(flags_, nodes, uint8_t{0});
  GrowTo(need_, nodes, int64_t{0});
  GrowTo(violations_, nodes, 0u);
  GrowTo(shift_, nodes, int64_t{0});
  GrowTo(label_, nodes, Label{});
  GrowTo(hint_, nodes, kNoId);
  GrowTo(slot_, nodes, LeafSlot{{}, 0, 0, 0, kNoId, 0});
  GrowTo(entered_mark_, nodes, 0u);
  GrowTo(entered_first_, nodes, kNoId);
  GrowTo(entered_next_, nodes, kNoId);
  GrowTo(level_, nodes, int32_t{-1});
  GrowTo(level_mark_, nodes, 0u);
  GrowTo(cursor_, nodes, Cursor{});
  GrowTo(in_plateau_, nodes, uint8_t{0});
  GrowTo(plateau_pos_, nodes, 0u);
  GrowTo(outside_listed_, nodes, uint8_t{0});
  GrowTo(kept_arc_, nodes, kNoId);
  GrowTo(kept_prev_, nodes, kNoId);
  GrowTo(kept_kind_, nodes, uint8_t{0});
  GrowTo(back_mark_, nodes, 0u);
  GrowTo(back_next_, nodes, kNoId);
  GrowTo(back_arc_, nodes, kNoId);
  GrowTo(back_kind_, nodes, uint8_t{0});
  hubs_.Resize(nodes);
}

void LeafSspSolver::Mark(std::vector<NodeId>& list, uint8_t flag, NodeId n) {
  if ((flags_[n] & flag) == 0) {
    flags_[n] |= flag;
    list.push_back(n);
  }
}

bool LeafSspSolver::LoadSolution(const FlowGraph& g, const FlowSolution& sol,
                                 const CancelFlag* cancel) {
  Resize(g);
  ResetTotals();
  pending_.clear();
  hubs_.Clear();
  ClearLists();
  std::fill(leaf_.begin(), leaf_.end(), uint8_t{0});
  leaf_count_ = 0;
  std::fill(at_.begin(), at_.end(), kNoId);
  std::fill(flags_.begin(), flags_.end(), uint8_t{0});
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    const bool live = g.IsNode(n);
    node_alive_[n] = live;
    supply_[n] = live ? g.supply(n) : 0;
    excess_[n] = supply_[n];
    pot_[n] = live && n < sol.potential.size() ? sol.potential[n] : 0;
    supply_sum_ += supply_[n];
    abs_supply_ += Abs(supply_[n]);
  }
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if ((a & 0xffff) == 0 && IsCancelled(cancel)) return false;
    ArcCopy& c = arcs_[a];
    if (!g.IsArc(a)) {
      c = ArcCopy{};
      continue;
    }
    c = ArcCopy{g.cost(a), g.capacity(a), 0, g.tail(a), g.head(a)};
    NoteCost(c.cost);
    capacity_ += c.capacity;
    int64_t f = a < sol.flow.size() ? std::clamp<int64_t>(sol.flow[a], 0, c.capacity) : 0;
    if (c.tail == c.head) f = c.cost < 0 ? c.capacity : 0;
    if (c.tail != c.head) LinkAdjacent(a);
    c.flow = f;
    cost_ += Wide{f} * c.cost;
    excess_[c.tail] -= f;
    excess_[c.head] += f;
  }
  // Leaves first (their arcs stay out of the flow-in lists), then the lists.
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (!node_alive_[n] || !LeafShape(n)) continue;
    leaf_[n] = 1;
    ++leaf_count_;
    for (ArcId a : out_[n]) {
      if (arcs_[a].flow > 0) at_[n] = a;
    }
  }
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    const ArcCopy& c = arcs_[a];
    if (c.alive() && c.flow > 0 && c.tail != c.head && !leaf_[c.tail]) LinkFlow(a);
  }
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (!leaf_[n]) continue;
    pot_[n] = 0;
    if (at_[n] != kNoId) hubs_.Insert(arcs_[at_[n]].head, n, Key(n));
  }
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (excess_[n] != 0) Pend(n);
  }
  revision_ = g.revision();
  edits_seen_ = g.edit_count();
  SeeGroups(g);
  has_state_ = true;
  repair_all_ = false;
  loaded_ = true;
  return true;
}

void LeafSspSolver::Adopt(const FlowGraph& /*g*/, const FlowSolution& solution) {
  CopyReuse(adopted_.flow, solution.flow);
  CopyReuse(adopted_.potential, solution.potential);
  adopt_pending_ = true;
  has_state_ = true;
}

void LeafSspSolver::SetFlow(ArcId a, int64_t f) {
  ArcCopy& c = arcs_[a];
  const int64_t d = f - c.flow;
  if (d == 0) return;
  if (c.tail != c.head && !leaf_[c.tail]) {
    if (c.flow == 0) LinkFlow(a);
    if (f == 0) UnlinkFlow(a);
  }
  c.flow = f;
  cost_ += Wide{d} * c.cost;
  if (c.tail == c.head) return;
  excess_[c.tail] -= d;
  excess_[c.head] += d;
  if (excess_[c.tail] != 0) Pend(c.tail);
  if (excess_[c.head] != 0) Pend(c.head);
}

// A leaf: no arc in (self-loops aside), a supply of one, at most one unit out.
bool LeafSspSolver::LeafShape(NodeId n) const {
  return in_[n].empty() && supply_[n] == 1 && excess_[n] >= 0 && excess_[n] <= 1;
}

LeafSspSolver::Exit LeafSspSolver::CheapestExit(NodeId w, ArcId except) const {
  // Arcs back into the hub `except` leads to are no exit: they only compete
  // with `except` itself on cost (RefreshLeaf keeps the cheapest).
  const NodeId hub = except != kNoId ? arcs_[except].head : kNoId;
  Exit best;
  for (ArcId a : out_[w]) {
    const ArcCopy& c = arcs_[a];
    if (a == except || c.head == hub || c.flow >= c.capacity) continue;
    const int64_t price = c.cost + pot_[c.head];
    if (best.arc == kNoId || price < best.price) best = Exit{a, price};
  }
  return best;
}

int64_t LeafSspSolver::Key(NodeId w) const {
  const Exit e = CheapestExit(w, at_[w]);
  return e.arc == kNoId ? kNoExit : e.price - arcs_[at_[w]].cost;
}

int64_t LeafSspSolver::LeafPotential(NodeId w) const {
  if (at_[w] != kNoId) return arcs_[at_[w]].cost + pot_[arcs_[at_[w]].head];
  const Exit e = CheapestExit(w, kNoId);
  return e.arc == kNoId ? 0 : e.price;
}

void LeafSspSolver::MoveLeaf(NodeId w, ArcId to) {
  if (at_[w] != kNoId) SetFlow(at_[w], 0);
  SetFlow(to, 1);
  at_[w] = to;
  slot_[w].mark = 0;  // its exits changed
}

void LeafSspSolver::MakeLeaf(NodeId n) {
  leaf_[n] = 1;
  ++leaf_count_;
  at_[n] = kNoId;
  for (ArcId a : out_[n]) {
    if (arcs_[a].flow <= 0) continue;
    UnlinkFlow(a);
    at_[n] = a;
  }
  pot_[n] = 0;
  Mark(dirty_, kDirty, n);
}

void LeafSspSolver::MakeCore(NodeId n) {
  hubs_.Remove(n);
  pot_[n] = LeafPotential(n);
  leaf_[n] = 0;
  --leaf_count_;
  at_[n] = kNoId;
  for (ArcId a : out_[n]) {
    if (arcs_[a].flow > 0) LinkFlow(a);
    check_.push_back(a);
  }
  if (excess_[n] != 0) Pend(n);
}

void LeafSspSolver::Classify(NodeId n) {
  if (!node_alive_[n]) return;
  const bool shape = LeafShape(n);
  if (shape && !leaf_[n]) {
    MakeLeaf(n);
  } else if (!shape && leaf_[n]) {
    MakeCore(n);
  }
}

void LeafSspSolver::SyncArc(const FlowGraph& g, ArcId a) {
  ++stats_.synced;
  ArcCopy& c = arcs_[a];
  const bool live = g.IsArc(a);
  if (c.alive() && (!live || g.tail(a) != c.tail || g.head(a) != c.head)) {
    const NodeId t = c.tail, h = c.head;
    if (leaf_[t] && at_[t] == a) {
      hubs_.Remove(t);
      at_[t] = kNoId;
    }
    SetFlow(a, 0);  // the flow leaves excess and deficit behind at its ends
    capacity_ -= c.capacity;
    DropCost(c.cost);
    if (t != h) UnlinkAdjacent(a);
    c = ArcCopy{};
    Mark(reclassify_, kReclassify, t);
    Mark(reclassify_, kReclassify, h);
    if (leaf_[t]) Mark(dirty_, kDirty, t);
  }
  if (!live) return;
  if (!c.alive()) {
    c = ArcCopy{g.cost(a), g.capacity(a), 0, g.tail(a), g.head(a)};
    capacity_ += c.capacity;
    NoteCost(c.cost);
    if (c.tail == c.head) {
      SetFlow(a, c.cost < 0 ? c.capacity : 0);
      return;
    }
    LinkAdjacent(a);
    Mark(reclassify_, kReclassify, c.tail);
    Mark(reclassify_, kReclassify, c.head);
  } else {
    const int64_t old_cost = c.cost;
    bool resized = false;
    if (g.cost(a) != c.cost) SetCopyCost(c, g.cost(a));
    if (g.capacity(a) != c.capacity) {
      capacity_ += Wide{g.capacity(a)} - c.capacity;
      c.capacity = g.capacity(a);
      if (c.flow > c.capacity) SetFlow(a, c.capacity);
      resized = true;
    }
    if (c.tail == c.head) {
      SetFlow(a, c.cost < 0 ? c.capacity : 0);
      return;
    }
    if (leaf_[c.tail] && !resized) {
      LeafCostChanged(a, old_cost);
      return;
    }
  }
  if (leaf_[c.tail]) {
    Mark(dirty_, kDirty, c.tail);
  } else {
    check_.push_back(a);
  }
}

// Each cost group's offset as the kept copies hold it.
void LeafSspSolver::SeeGroups(const FlowGraph& g) {
  seen_offset_.resize(size_t{g.group_count()} + 1);
  for (GroupId k = 1; k <= g.group_count(); ++k) seen_offset_[k] = g.group_offset(k);
}

// Each shifted group's arcs take the amount it moved since the last sync;
// nothing is read from the graph but the group's members, in id order (the
// kept copies and the tails' state are walked forwards). The leaves' logic
// is SyncArc's for a changed cost.
void LeafSspSolver::SyncShifts(const FlowGraph& g) {
  seen_offset_.resize(size_t{g.group_count()} + 1);
  for (GroupId k : g.shifted_groups()) {
    const int64_t delta = g.group_offset(k) - seen_offset_[k];
    seen_offset_[k] = g.group_offset(k);
    if (delta == 0) continue;
    // Each kept copy is a miss of its own (a task's arcs lie between two
    // members): the ids are listed first, and each copy fetched ahead.
    members_.clear();
    g.ForEachGroupArc(k, [&](ArcId a) { members_.push_back(a); });
    constexpr size_t kAhead = 24;
    for (size_t i = 0; i < members_.size(); ++i) {
      if (i + kAhead < members_.size()) __builtin_prefetch(&arcs_[members_[i + kAhead]]);
      const ArcId a = members_[i];
      ArcCopy& c = arcs_[a];
      if (!c.alive()) continue;  // added in this batch: synced from the graph
      ++stats_.shifted;
      const int64_t old_cost = c.cost;
      SetCopyCost(c, old_cost + delta);
      if (c.tail == c.head) {
        SetFlow(a, c.cost < 0 ? c.capacity : 0);
      } else if (leaf_[c.tail]) {
        LeafCostChanged(a, old_cost);
      } else {
        check_.push_back(a);
      }
    }
  }
}

// The cost of leaf arc `a` changed from `old_cost`, nothing else: the
// leaf's key is kept a lower bound in O(1) instead of rescanning its arcs.
// A dearer arc it sits on, or a cheaper exit, can undercut its hub: the hub
// is noted for the repair, with the largest rise of its leaves' arcs, by
// which it shifts all its keys at once (a clock tick raises every waiting
// task's cost of waiting alike). A cheaper arc it sits on, or a dearer
// exit, only raises its true key: nothing to do.
void LeafSspSolver::LeafCostChanged(ArcId a, int64_t old_cost) {
  const ArcCopy& c = arcs_[a];
  const NodeId w = c.tail;
  const ArcId at = at_[w];
  if (at == kNoId || hubs_.hub_of(w) == kNoId) {
    Mark(dirty_, kDirty, w);
    return;
  }
  const NodeId hub = arcs_[at].head;
  auto note = [&](int64_t rise) {
    if ((flags_[hub] & kShifted) == 0) shift_[hub] = 0;
    Mark(shifted_, kShifted, hub);
    shift_[hub] = std::max(shift_[hub], rise);
  };
  if (a == at) {
    if (c.cost > old_cost) note(c.cost - old_cost);
    return;
  }
  if (c.cost >= old_cost || c.head == hub || c.flow >= c.capacity) {
    // A cheaper arc into its own hub competes with the one it sits on.
    if (c.head == hub && c.cost < arcs_[at].cost && c.flow < c.capacity) {
      Mark(dirty_, kDirty, w);
    }
    return;
  }
  const int64_t key = c.cost + pot_[c.head] - arcs_[at].cost;
  if (key < hubs_.key(w)) hubs_.Update(w, key);
  if (key < pot_[hub]) note(0);
}

void LeafSspSolver::SyncNode(const FlowGraph& g, NodeId n) {
  ++stats_.synced;
  const bool live = g.IsNode(n);
  if (node_alive_[n] && !live) {
    // Its arcs were synced (removed) first, so its excess is its supply.
    hubs_.Remove(n);
    leaf_count_ -= leaf_[n];
    leaf_[n] = 0;
    at_[n] = kNoId;
    supply_sum_ -= supply_[n];
    abs_supply_ -= Abs(supply_[n]);
    supply_[n] = excess_[n] = pot_[n] = 0;
    node_alive_[n] = 0;
    return;
  }
  if (!live) return;
  if (!node_alive_[n]) {
    node_alive_[n] = 1;
    pot_[n] = 0;
    leaf_[n] = 0;
    at_[n] = kNoId;
    Mark(fresh_, kFresh, n);
    Mark(reclassify_, kReclassify, n);
  }
  const int64_t s = g.supply(n);
  if (s != supply_[n]) {
    supply_sum_ += Wide{s} - supply_[n];
    abs_supply_ += Abs(s) - Abs(supply_[n]);
    excess_[n] += s - supply_[n];
    supply_[n] = s;
    if (excess_[n] != 0) Pend(n);
    Mark(reclassify_, kReclassify, n);
  }
}

Status LeafSspSolver::Emit(const FlowGraph& g, FlowSolution* out) {
  if (!FitsInt64(cost_)) {
    return InvalidArgument("the optimal cost " + WideToString(cost_) + " does not fit in 64 bits");
  }
  const size_t arcs = g.arc_id_bound(), nodes = g.node_id_bound();
  ReserveWithSlack(out->potential, nodes);
  out->potential.resize(nodes);
  if (nodes > 0) std::memcpy(out->potential.data(), pot_.data(), nodes * sizeof(int64_t));
  // A leaf's potential is cost + p(hub) of the arc its unit is on: taken in
  // the one pass over the arcs that copies the flows (the arcs lie in id
  // order there; leaf by leaf, each leaf's arc is a miss of its own).
  ReserveWithSlack(out->flow, arcs);
  out->flow.resize(arcs);
  for (size_t a = 0; a < arcs; ++a) {
    const ArcCopy& c = arcs_[a];
    out->flow[a] = c.flow;
    if (c.flow > 0 && c.alive() && leaf_[c.tail] && at_[c.tail] == a) {
      out->potential[c.tail] = c.cost + pot_[c.head];
    }
  }
  for (NodeId n = 0; n < nodes; ++n) {
    if (leaf_[n] && at_[n] == kNoId) out->potential[n] = LeafPotential(n);
  }
  out->cost = static_cast<int64_t>(cost_);
  return Status::Ok();
}

Status LeafSspSolver::Solve(const FlowGraph& g, FlowSolution* out, const CancelFlag* cancel) {
  stats_ = Stats{};
  if (IsCancelled(cancel)) return Cancelled("solve cancelled");
  if (!has_state_) {
    COPSE_RETURN_IF_ERROR(cold_.Solve(g, out, cancel));
    LoadSolution(g, *out);
    return Status::Ok();
  }
  stats_.warm = true;
  auto t0 = SteadyClock::now();
  Resize(g);
  const bool all = repair_all_;
  // The change record covers the edits since the last commit: enough if the
  // last sync was in this revision, or in the one before and saw all of it.
  if (adopt_pending_) {
    // The adopted answer was optimal for the graph as it was then: loaded
    // into today's graph, every arc is checked by the repair.
    stats_.full_sync = true;
    if (!LoadAndCheckAll(g, adopted_, cancel)) return Cancelled("solve cancelled");
    adopt_pending_ = false;
  } else if (!all && (g.revision() == revision_ ||
                      (g.revision() == revision_ + 1 && g.edits_at_last_commit() == edits_seen_))) {
    // Shifted cost groups first, by the amount each moved: an arc whose
    // other numbers changed too is listed below and read from the graph.
    const auto shift_start = SteadyClock::now();
    SyncShifts(g);
    stats_.shift_ms = MsSince(shift_start);
    // Arcs before nodes: a removed node's arcs give back their flow before
    // it goes. The changed arcs lie all over both arc arrays: each is
    // fetched some arcs ahead, and its tail's leaf state a few arcs later.
    const std::vector<ArcId>& changed = g.changed_arcs();
    constexpr size_t kArcsAhead = 16, kTailsAhead = 8;
    for (size_t i = 0; i < changed.size(); ++i) {
      if (i + kArcsAhead < changed.size()) {
        g.Prefetch(changed[i + kArcsAhead]);
        __builtin_prefetch(&arcs_[changed[i + kArcsAhead]]);
      }
      if (i + kTailsAhead < changed.size()) {
        const NodeId t = arcs_[changed[i + kTailsAhead]].tail;
        if (t != kNoId) {
          __builtin_prefetch(&at_[t]);
          __builtin_prefetch(&leaf_[t]);
        }
      }
      SyncArc(g, changed[i]);
    }
    for (NodeId n : g.changed_nodes()) SyncNode(g, n);
  } else {
    // A lost record (or a solve that stopped before its repair): sync every
    // id, then load the state afresh from the kept flow and potentials.
    stats_.full_sync = true;
    for (ArcId a = 0; a < g.arc_id_bound(); ++a) SyncArc(g, a);
    for (NodeId n = 0; n < g.node_id_bound(); ++n) SyncNode(g, n);
    Reload(g);
  }
  revision_ = g.revision();
  edits_seen_ = g.edit_count();
  SeeGroups(g);
  auto t1 = SteadyClock::now();
  stats_.sync_ms = MsBetween(t0, t1);
  Status magnitudes = CheckMagnitudes(g);
  // Numbers too large to repair safely: the repair waits for a later solve.
  repair_all_ = magnitudes.code() == StatusCode::kInvalidArgument;
  if (repair_all_) return magnitudes;
  Repair();
  stats_.leaves = leaf_count_;
  if (!magnitudes.ok()) return magnitudes;  // supplies not summing to zero
  auto t2 = SteadyClock::now();
  stats_.repair_ms = MsBetween(t1, t2);
  COPSE_RETURN_IF_ERROR(Route(cancel));
  auto t3 = SteadyClock::now();
  stats_.route_ms = MsBetween(t2, t3);
  Status st = Emit(g, out);
  stats_.emit_ms = MsSince(t3);
  return st;
}

// Rebuilds everything from the kept flow and potentials (a full sync): the
// leaves' potentials are derived, so the kept solution is put in the
// FlowSolution shape LoadSolution reads, and every arc is checked by the
// repair that follows.
void LeafSspSolver::Reload(const FlowGraph& g) {
  FlowSolution kept;
  kept.flow.resize(g.arc_id_bound());
  kept.potential.resize(g.node_id_bound());
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) kept.flow[a] = arcs_[a].flow;
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    kept.potential[n] = leaf_[n] ? LeafPotential(n) : pot_[n];
  }
  LoadAndCheckAll(g, kept, nullptr);
}

// Loads the state from `kept`, a solution of this graph or an earlier
// version of it, and lists every arc and leaf for the repair.
bool LeafSspSolver::LoadAndCheckAll(const FlowGraph& g, const FlowSolution& kept,
                                    const CancelFlag* cancel) {
  // The sync's work lists go with the flags LoadSolution clears: every arc
  // is checked below instead.
  for (std::vector<NodeId>* list : {&reclassify_, &fresh_, &dirty_, &shifted_, &loose_}) {
    list->clear();
  }
  check_.clear();
  if (!LoadSolution(g, kept, cancel)) return false;
  // LoadSolution trusts its input; a lost record may hide any violation.
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!arcs_[a].alive()) continue;
    if (leaf_[arcs_[a].tail]) {
      Mark(dirty_, kDirty, arcs_[a].tail);
    } else {
      check_.push_back(a);
    }
  }
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (node_alive_[n] && leaf_[n] && at_[n] == kNoId) Mark(dirty_, kDirty, n);
  }
  return true;
}

Status LeafSspSolver::CheckState(const FlowGraph& g) const {
  auto fail = [](const std::string& what) { return Status(StatusCode::kInternal, what); };
  if (!has_state_ || adopt_pending_) return Status::Ok();  // nothing loaded yet
  if (arcs_.size() < g.arc_id_bound() || pot_.size() < g.node_id_bound()) {
    return fail("state arrays smaller than the graph's id bounds");
  }
  std::vector<int64_t> excess(g.node_id_bound(), 0);
  Wide cost = 0, capacity = 0, supply = 0;
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (static_cast<bool>(node_alive_[n]) != g.IsNode(n)) {
      return fail("node " + std::to_string(n) + " liveness differs");
    }
    if (!g.IsNode(n)) {
      if (excess_[n] != 0 || leaf_[n]) return fail("dead node " + std::to_string(n));
      continue;
    }
    if (supply_[n] != g.supply(n)) return fail("node " + std::to_string(n) + " supply differs");
    excess[n] = g.supply(n);
    supply += g.supply(n);
  }
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    const ArcCopy& c = arcs_[a];
    if (c.alive() != g.IsArc(a)) return fail("arc " + std::to_string(a) + " liveness differs");
    if (!g.IsArc(a)) continue;
    if (c.tail != g.tail(a) || c.head != g.head(a) || c.cost != g.cost(a) ||
        c.capacity != g.capacity(a)) {
      return fail("arc " + std::to_string(a) + " copy differs from the graph");
    }
    if (c.flow < 0 || c.flow > c.capacity) {
      return fail("arc " + std::to_string(a) + " flow out of bounds");
    }
    cost += Wide{c.flow} * c.cost;
    capacity += c.capacity;
    if (c.tail == c.head) continue;
    excess[c.tail] -= c.flow;
    excess[c.head] += c.flow;
    if (leaf_[c.head])
      return fail("arc " + std::to_string(a) + " enters leaf " + std::to_string(c.head));
    if (leaf_[c.tail]) continue;
    const int64_t rc = c.cost - pot_[c.tail] + pot_[c.head];
    if ((c.flow < c.capacity && rc < 0) || (c.flow > 0 && rc > 0)) {
      return fail("core arc " + std::to_string(a) + " violates reduced-cost optimality");
    }
  }
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (g.IsNode(n) && excess[n] != excess_[n]) {
      return fail("node " + std::to_string(n) + " excess differs");
    }
  }
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (!g.IsNode(n) || !leaf_[n]) continue;
    const std::string name = "leaf " + std::to_string(n);
    if (g.supply(n) != 1 || excess_[n] < 0 || excess_[n] > 1) return fail(name + " is no leaf");
    const ArcId at = at_[n];
    if ((at == kNoId) != (excess_[n] == 1)) return fail(name + "'s unit is not where at_ says");
    if (at == kNoId) {
      if (hubs_.hub_of(n) != kNoId) return fail(name + " without a unit is in a heap");
      continue;
    }
    if (arcs_[at].tail != n || arcs_[at].flow != 1) return fail(name + "'s arc is wrong");
    const NodeId hub = arcs_[at].head;
    if (hubs_.hub_of(n) != hub) return fail(name + " is not in its hub's heap");
    const int64_t key = Key(n);
    if (hubs_.key(n) > key) return fail(name + "'s key is above its true key");
    if (key < pot_[hub]) return fail(name + "'s cheapest exit undercuts its hub");
    for (ArcId a : out_[n]) {
      const ArcCopy& c = arcs_[a];
      if (a != at && c.head == hub && c.flow < c.capacity && c.cost < arcs_[at].cost) {
        return fail(name + " has a cheaper arc into its hub than the one it sits on");
      }
    }
  }
  for (NodeId n = 0; n < g.node_id_bound() && n < out_.size(); ++n) {
    if (!g.IsNode(n)) continue;
    if (std::string e = hubs_.HeapError(n); !e.empty()) return fail(e);
  }
  // Core arcs only: a leaf's unit is found through its hub's heap.
  const auto core = [&](ArcId a) { return !leaf_[arcs_[a].tail]; };
  if (std::string e = ListsError(g, core); !e.empty()) return fail(e);
  if (cost != cost_) return fail("total cost differs");
  if (capacity != capacity_) return fail("total capacity differs");
  if (supply != supply_sum_) return fail("supply sum differs");
  return Status::Ok();
}

}  // namespace copse::flow

#include "scheduler/flow/local_ssp.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/reuse.h"
#include "scheduler/flow/stopwatch.h"

namespace copse::flow {

namespace {

constexpr int64_t kPotMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kPotMin = std::numeric_limits<int64_t>::min();

Wide Abs(Wide v) { return v < 0 ? -v : v; }

}  // namespace

void LocalSspSolver::Resize(const FlowGraph& g) {
  const size_t arcs = g.arc_id_bound(), nodes = g.node_id_bound();
  GrowArcs(nodes, arcs);
  GrowTo(pot_, nodes, int64_t{0});
  GrowTo(excess_, nodes, int64_t{0});
  GrowTo(supply_, nodes, int64_t{0});
  GrowTo(node_alive_, nodes, uint8_t{0});
  GrowTo(touch_mark_, nodes, 0u);
  GrowTo(level_, nodes, int32_t{-1});
  GrowTo(level_mark_, nodes, 0u);
  GrowTo(cur_, nodes, kNoId);
  GrowTo(cur_back_, nodes, uint8_t{0});
  GrowTo(label_, nodes, Label{});
}

void LocalSspSolver::LoadSolution(const FlowGraph& g, const FlowSolution& sol) {
  Resize(g);
  ResetTotals();
  pending_.clear();
  ClearLists();
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
    arcs_[a].flow = f;
    if (f > 0 && c.tail != c.head) LinkFlow(a);
    cost_ += Wide{f} * c.cost;
    excess_[c.tail] -= f;
    excess_[c.head] += f;
  }
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (excess_[n] != 0) Pend(n);
  }
  revision_ = g.revision();
  edits_seen_ = g.edit_count();
  has_state_ = true;
  repair_all_ = false;
}

void LocalSspSolver::Adopt(const FlowGraph& g, const FlowSolution& solution) {
  LoadSolution(g, solution);
}

void LocalSspSolver::Touch(NodeId n) {
  if (touch_mark_[n] != epoch_) {
    touch_mark_[n] = epoch_;
    touched_.push_back(n);
  }
}

void LocalSspSolver::SetFlow(ArcId a, int64_t f) {
  ArcCopy& c = arcs_[a];
  int64_t d = f - arcs_[a].flow;
  if (d == 0) return;
  if (c.tail != c.head) {
    if (arcs_[a].flow == 0) LinkFlow(a);
    if (f == 0) UnlinkFlow(a);
  }
  arcs_[a].flow = f;
  cost_ += Wide{d} * c.cost;
  if (c.tail == c.head) return;
  excess_[c.tail] -= d;
  excess_[c.head] += d;
  Pend(c.head);
  Pend(c.tail);
}

void LocalSspSolver::SyncArc(const FlowGraph& g, ArcId a) {
  ++stats_.synced;
  ArcCopy& c = arcs_[a];
  const bool live = g.IsArc(a);
  if (c.alive() && (!live || g.tail(a) != c.tail || g.head(a) != c.head)) {
    SetFlow(a, 0);  // the flow leaves excess and deficit behind at its ends
    capacity_ -= c.capacity;
    DropCost(c.cost);
    if (c.tail != c.head) UnlinkAdjacent(a);
    c = ArcCopy{};
  }
  if (!live) return;
  if (!c.alive()) {
    c = ArcCopy{g.cost(a), g.capacity(a), 0, g.tail(a), g.head(a)};
    capacity_ += c.capacity;
    NoteCost(c.cost);
    if (c.tail == c.head) {
      SetFlow(a, c.cost < 0 ? c.capacity : 0);
    } else {
      LinkAdjacent(a);
      check_.push_back(a);
    }
    return;
  }
  if (g.cost(a) != c.cost) SetCopyCost(c, g.cost(a));
  if (g.capacity(a) != c.capacity) {
    capacity_ += Wide{g.capacity(a)} - c.capacity;
    c.capacity = g.capacity(a);
    if (arcs_[a].flow > c.capacity) SetFlow(a, c.capacity);
  }
  if (c.tail == c.head) {
    SetFlow(a, c.cost < 0 ? c.capacity : 0);
  } else {
    check_.push_back(a);
  }
}

void LocalSspSolver::SyncNode(const FlowGraph& g, NodeId n) {
  ++stats_.synced;
  const bool live = g.IsNode(n);
  if (node_alive_[n] && !live) {
    // Its arcs were synced (removed) first, so its excess is its supply.
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
    fresh_.push_back(n);
  }
  int64_t s = g.supply(n);
  if (s != supply_[n]) {
    supply_sum_ += Wide{s} - supply_[n];
    abs_supply_ += Abs(s) - Abs(supply_[n]);
    excess_[n] += s - supply_[n];
    supply_[n] = s;
    Pend(n);
  }
}

// Saturates whichever residual direction of arc `a` has a negative reduced cost.
void LocalSspSolver::FixArc(const FlowGraph& g, ArcId a) {
  (void)g;
  const ArcCopy& c = arcs_[a];
  if (c.tail == c.head) return;
  int64_t rc = c.cost - pot_[c.tail] + pot_[c.head];
  if (rc < 0 && arcs_[a].flow < c.capacity) {
    SetFlow(a, c.capacity);
    ++stats_.saturated_arcs;
  } else if (rc > 0 && arcs_[a].flow > 0) {
    SetFlow(a, 0);
    ++stats_.saturated_arcs;
  }
}

bool LocalSspSolver::Violated(ArcId a) const {
  const ArcCopy& c = arcs_[a];
  if (!c.alive() || c.tail == c.head) return false;
  int64_t rc = c.cost - pot_[c.tail] + pot_[c.head];
  return (rc < 0 && arcs_[a].flow < c.capacity) || (rc > 0 && arcs_[a].flow > 0);
}

// The interval of potentials for `u` under which every residual arc at `u`
// has a non-negative reduced cost; `low_side` is set when the current
// potential is below the interval's bottom.
void LocalSspSolver::Interval(const FlowGraph& g, NodeId u, int64_t& lower, int64_t& upper,
                              bool& low_side) const {
  upper = kPotMax;
  lower = kPotMin;
  (void)g;  // the kept copies and adjacency arrays are in step with it
  for (ArcId a : out_[u]) {
    const ArcCopy& c = arcs_[a];
    int64_t x = c.cost + pot_[c.head];
    if (arcs_[a].flow < c.capacity) upper = std::min(upper, x);  // forward: pot[u] <= x
    if (arcs_[a].flow > 0) lower = std::max(lower, x);           // backward: pot[u] >= x
  }
  for (ArcId a : in_[u]) {
    const ArcCopy& c = arcs_[a];
    int64_t x = pot_[c.tail] - c.cost;
    if (arcs_[a].flow < c.capacity) lower = std::max(lower, x);  // forward v->u: pot[u] >= x
    if (arcs_[a].flow > 0) upper = std::min(upper, x);           // backward u->v: pot[u] <= x
  }
  low_side = lower != kPotMin && pot_[u] < lower;
}

void LocalSspSolver::Repair(const FlowGraph& g) {
  int64_t lower, upper;
  bool low_side;
  // New nodes take the top of their interval (a new task: its cheapest arc).
  for (NodeId u : fresh_) {
    if (!node_alive_[u]) continue;
    Interval(g, u, lower, upper, low_side);
    if (lower > upper) continue;
    pot_[u] = upper != kPotMax ? upper : (lower != kPotMin ? lower : pot_[u]);
  }
  // Only a changed arc can be violated (flow and potentials of the others
  // did not change); one of its ends, the one with fewer arcs, moves.
  violated_.clear();
  for (ArcId a : check_) {
    if (!Violated(a)) continue;
    violated_.push_back(a);
    const ArcCopy& c = arcs_[a];
    Touch(g.out_degree(c.tail) + g.in_degree(c.tail) <= g.out_degree(c.head) + g.in_degree(c.head)
              ? c.tail
              : c.head);
  }
  if (options_.pull_potentials) {
    for (NodeId n : pending_) {
      if (n < node_alive_.size() && node_alive_[n] && excess_[n] != 0 &&
          g.out_degree(n) + g.in_degree(n) <= kPullDegree) {
        Touch(n);
      }
    }
  }
  // Moving a node's potential inside its interval keeps every arc at it
  // satisfied, so the moves below never create a violation. A node that a
  // rising cost pushed below its interval goes to the top, leaving slack for
  // the next rise (reduced-cost path lengths between other nodes do not
  // depend on it).
  for (NodeId u : touched_) {
    if (!node_alive_[u]) continue;
    Interval(g, u, lower, upper, low_side);
    if (lower > upper) continue;
    const int64_t pu = pot_[u];
    int64_t p = pu;
    if (pu < lower) {
      p = upper != kPotMax ? upper : lower;
    } else if (pu > upper) {
      p = upper;
    }
    if (options_.pull_potentials) {
      if (excess_[u] < 0 && lower != kPotMin) p = lower;
      if (excess_[u] > 0 && upper != kPotMax) p = upper;
    }
    if (p != pu) {
      pot_[u] = p;
      ++stats_.potential_moves;
    }
  }
  for (ArcId a : violated_) FixArc(g, a);
  if (options_.retract_deficits) RetractDeficits(g);
  if (options_.lookahead > 0) LookAhead(g);
}

// The node that bounds u's potential from above (the head of its tightest
// forward residual arc or the tail of its tightest backward one), kNoId if none.
NodeId LocalSspSolver::TightAbove(NodeId u) const {
  int64_t upper = kPotMax;
  NodeId w = kNoId;
  for (ArcId a : out_[u]) {
    const ArcCopy& c = arcs_[a];
    if (c.flow < c.capacity && c.cost + pot_[c.head] < upper) {
      upper = c.cost + pot_[c.head];
      w = c.head;
    }
  }
  for (ArcId a : in_[u]) {
    const ArcCopy& c = arcs_[a];
    if (c.flow > 0 && pot_[c.tail] - c.cost < upper) {
      upper = pot_[c.tail] - c.cost;
      w = c.tail;
    }
  }
  return w;
}

// Pulls each source (a node with excess) toward the deficits without moving
// flow: the node that bounds its potential from above (TightAbove) is raised
// to the top of its own interval, after that node's own bound, up to
// `lookahead` hops deep, and then the source. Raising a potential inside its
// interval keeps every arc at the node satisfied and changes no reduced-cost
// path length between other nodes, so each source's distance to the
// deficits drops by as much as its own potential rises. (At scale (c) a new
// task that will wait sits behind its job's unscheduled node, whose potential
// had been left far below the sink's: the backward search swept the whole
// graph to reach it.)
void LocalSspSolver::LookAhead(const FlowGraph& g) {
  int64_t lower, upper;
  bool low_side;
  for (NodeId s : pending_) {
    if (s >= node_alive_.size() || !node_alive_[s] || excess_[s] <= 0 ||
        out_[s].size() + in_[s].size() > kPullDegree) {
      continue;
    }
    chain_.clear();
    NodeId u = s;
    for (int k = 0; k < options_.lookahead; ++k) {
      NodeId w = TightAbove(u);
      if (w == kNoId || excess_[w] != 0 || out_[w].size() + in_[w].size() > kPullDegree) break;
      chain_.push_back(w);
      u = w;
    }
    std::reverse(chain_.begin(), chain_.end());
    chain_.push_back(s);
    for (NodeId w : chain_) {
      Interval(g, w, lower, upper, low_side);
      if (upper != kPotMax && upper > pot_[w] && lower <= upper) {
        pot_[w] = upper;
        ++stats_.lookahead_moves;
      }
    }
  }
}

// A deficit left where flow used to arrive (a finished task's computer, a
// task whose arc was saturated) is moved downstream by taking flow off an
// arc that carries flow out of the node, when the node's potential can then
// take a value that keeps every arc at it satisfied. Repeated, this carries
// a finished task's deficit to the sink, which new tasks reach within a hop
// or two, instead of leaving shortest-path searches to find it far away.
void LocalSspSolver::RetractDeficits(const FlowGraph& g) {
  work_.clear();
  for (NodeId n : pending_) {
    if (n < node_alive_.size() && node_alive_[n] && excess_[n] < 0) work_.push_back(n);
  }
  while (!work_.empty()) {
    NodeId u = work_.back();
    work_.pop_back();
    if (!node_alive_[u] || excess_[u] >= 0 || g.out_degree(u) + g.in_degree(u) > kPullDegree) {
      continue;
    }
    bool moved = true;
    while (moved && excess_[u] < 0) {
      moved = false;
      // The bounds on u's potential: upper, and the two largest lower bounds
      // with the arc of the largest (it goes when that arc's flow does).
      int64_t upper = kPotMax, low1 = kPotMin, low2 = kPotMin;
      ArcId low1_arc = kNoId;
      auto add_lower = [&](int64_t x, ArcId a) {
        if (x > low1) {
          low2 = low1;
          low1 = x;
          low1_arc = a;
        } else if (x > low2) {
          low2 = x;
        }
      };
      for (ArcId a : out_[u]) {
        const ArcCopy& c = arcs_[a];
        int64_t x = c.cost + pot_[c.head];
        if (arcs_[a].flow < c.capacity) upper = std::min(upper, x);
        if (arcs_[a].flow > 0) add_lower(x, a);
      }
      for (ArcId a : in_[u]) {
        const ArcCopy& c = arcs_[a];
        int64_t x = pot_[c.tail] - c.cost;
        if (arcs_[a].flow < c.capacity) add_lower(x, kNoId);
        if (arcs_[a].flow > 0) upper = std::min(upper, x);
      }
      for (ArcId a : out_[u]) {
        if (arcs_[a].flow <= 0) continue;
        NodeId v = arcs_[a].head;
        const int64_t x = arcs_[a].cost + pot_[v];
        const int64_t delta = std::min(arcs_[a].flow, -excess_[u]);
        const bool still = arcs_[a].flow > delta;
        int64_t lo = low1_arc == a ? low2 : low1;
        if (still) lo = std::max(lo, x);
        int64_t hi = std::min(upper, x);
        if (lo > hi) continue;
        pot_[u] = std::clamp(pot_[u], lo, hi);
        SetFlow(a, arcs_[a].flow - delta);
        ++stats_.retracted;
        work_.push_back(v);
        moved = true;
        break;  // the bounds changed: recompute them
      }
    }
  }
}

Status LocalSspSolver::Emit(const FlowGraph& g, FlowSolution* out) {
  if (!FitsInt64(cost_)) {
    return InvalidArgument("the optimal cost " + WideToString(cost_) + " does not fit in 64 bits");
  }
  const size_t arcs = g.arc_id_bound(), nodes = g.node_id_bound();
  ReserveWithSlack(out->flow, arcs);
  out->flow.resize(arcs);
  for (size_t a = 0; a < arcs; ++a) out->flow[a] = arcs_[a].flow;
  ReserveWithSlack(out->potential, nodes);
  out->potential.resize(nodes);
  if (nodes > 0) std::memcpy(out->potential.data(), pot_.data(), nodes * sizeof(int64_t));
  out->cost = static_cast<int64_t>(cost_);
  return Status::Ok();
}

Status LocalSspSolver::Solve(const FlowGraph& g, FlowSolution* out, const CancelFlag* cancel) {
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
  if (++epoch_ == 0) {
    std::fill(touch_mark_.begin(), touch_mark_.end(), 0u);
    epoch_ = 1;
  }
  touched_.clear();
  check_.clear();
  fresh_.clear();
  bool all = repair_all_;
  // The change record covers the edits since the last commit: enough if the
  // last sync was in this revision, or in the one before and saw all of it.
  if (g.revision() == revision_ ||
      (g.revision() == revision_ + 1 && g.edits_at_last_commit() == edits_seen_)) {
    // Arcs first: a removed node's arcs give back their flow before it goes.
    g.ForEachChangedArc([&](ArcId a) { SyncArc(g, a); });
    for (NodeId n : g.changed_nodes()) SyncNode(g, n);
  } else {
    stats_.full_sync = all = true;
    for (ArcId a = 0; a < g.arc_id_bound(); ++a) SyncArc(g, a);
    for (NodeId n = 0; n < g.node_id_bound(); ++n) SyncNode(g, n);
  }
  if (all) {  // every arc may be violated: check them all
    check_.clear();
    for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
      if (arcs_[a].alive()) check_.push_back(a);
    }
  }
  revision_ = g.revision();
  edits_seen_ = g.edit_count();
  auto t1 = SteadyClock::now();
  stats_.sync_ms = MsBetween(t0, t1);
  Status magnitudes = CheckMagnitudes(g);
  // Numbers too large to repair safely: the touched nodes wait for a later solve.
  repair_all_ = magnitudes.code() == StatusCode::kInvalidArgument;
  if (repair_all_) return magnitudes;
  Repair(g);
  stats_.touched = touched_.size();
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

Status LocalSspSolver::CheckState(const FlowGraph& g) const {
  auto fail = [](const std::string& what) { return Status(StatusCode::kInternal, what); };
  if (!has_state_) return Status::Ok();
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
      if (pot_[n] != 0 || excess_[n] != 0) return fail("dead node " + std::to_string(n));
      continue;
    }
    if (supply_[n] != g.supply(n)) return fail("node " + std::to_string(n) + " supply differs");
    excess[n] = g.supply(n);
    supply += g.supply(n);
  }
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    const ArcCopy& c = arcs_[a];
    if (c.alive() != g.IsArc(a)) return fail("arc " + std::to_string(a) + " liveness differs");
    if (!g.IsArc(a)) {
      if (arcs_[a].flow != 0) return fail("dead arc " + std::to_string(a) + " has flow");
      continue;
    }
    if (c.tail != g.tail(a) || c.head != g.head(a) || c.cost != g.cost(a) ||
        c.capacity != g.capacity(a)) {
      return fail("arc " + std::to_string(a) + " copy differs from the graph");
    }
    int64_t f = arcs_[a].flow;
    if (f < 0 || f > c.capacity) return fail("arc " + std::to_string(a) + " flow out of bounds");
    cost += Wide{f} * c.cost;
    capacity += c.capacity;
    if (c.tail == c.head) continue;
    excess[c.tail] -= f;
    excess[c.head] += f;
    int64_t rc = c.cost - pot_[c.tail] + pot_[c.head];
    if ((f < c.capacity && rc < 0) || (f > 0 && rc > 0)) {
      return fail("arc " + std::to_string(a) + " violates reduced-cost optimality");
    }
  }
  for (NodeId n = 0; n < g.node_id_bound(); ++n) {
    if (g.IsNode(n) && excess[n] != excess_[n]) {
      return fail("node " + std::to_string(n) + " excess differs");
    }
  }
  if (std::string e = ListsError(g, [](ArcId) { return true; }); !e.empty()) return fail(e);
  if (cost != cost_) return fail("total cost differs");
  if (capacity != capacity_) return fail("total capacity differs");
  if (supply != supply_sum_) return fail("supply sum differs");
  return Status::Ok();
}

}  // namespace copse::flow

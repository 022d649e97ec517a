// LeafSspSolver's repair: after the sync, brings every leaf and core arc
// back to reduced-cost optimality, moving flow only where a potential
// cannot absorb a change, and leaves the excesses it creates to the route.
#include <algorithm>
#include <limits>

#include "scheduler/flow/leaf_ssp.h"

namespace copse::flow {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

}  // namespace

// A new core node takes the top of the interval its arcs allow (all of them
// are new and empty, so the check of core arcs sees them next).
void LeafSspSolver::PlaceFresh(NodeId n) {
  int64_t upper = kMax, lower = kMin;
  for (ArcId a : out_[n]) {
    const ArcCopy& c = arcs_[a];
    if (c.flow < c.capacity) upper = std::min(upper, c.cost + pot_[c.head]);
  }
  for (ArcId a : in_[n]) {
    const ArcCopy& c = arcs_[a];
    if (c.flow < c.capacity && !leaf_[c.tail]) lower = std::max(lower, pot_[c.tail] - c.cost);
  }
  pot_[n] = upper != kMax ? upper : (lower != kMin ? lower : 0);
}

// Brings leaf `w` in step with its arcs: a unit whose arc went is loose; a
// leaf at a hub gets its exact key, and is noted when its cheapest exit
// undercuts the hub.
void LeafSspSolver::RefreshLeaf(NodeId w) {
  if (!node_alive_[w] || !leaf_[w]) return;
  ++stats_.dirty_leaves;
  if (at_[w] != kNoId && arcs_[at_[w]].flow == 0) {
    hubs_.Remove(w);
    at_[w] = kNoId;
  }
  if (at_[w] == kNoId) {
    Mark(loose_, kLoose, w);
    return;
  }
  const NodeId hub = arcs_[at_[w]].head;
  // Of several arcs into the hub, the unit takes the cheapest (no excess moves).
  for (ArcId a : out_[w]) {
    const ArcCopy& c = arcs_[a];
    if (c.head == hub && c.flow < c.capacity && c.cost < arcs_[at_[w]].cost) {
      SetFlow(at_[w], 0);
      SetFlow(a, 1);
      at_[w] = a;
    }
  }
  const int64_t key = Key(w);
  hubs_.Put(hub, w, key);
  if (key < pot_[hub]) NoteViolated(w, key);
}

// Leaf w's exact key undercuts its hub by (potential - key).
void LeafSspSolver::NoteViolated(NodeId w, int64_t key) {
  const NodeId hub = arcs_[at_[w]].head;
  violated_.push_back(w);
  if ((flags_[hub] & kHubHit) == 0) need_[hub] = violations_[hub] = 0;
  need_[hub] = std::max(need_[hub], pot_[hub] - key);
  ++violations_[hub];
  Mark(hubs_hit_, kHubHit, hub);
}

// Shifts hub u's keys down by the largest rise of its leaves' arcs (every
// key stays a lower bound), then finds the leaves that truly undercut it:
// those whose keys fall below its potential, taken off the heap's top and
// recomputed until the top stands clear.
void LeafSspSolver::CheckHub(NodeId u) {
  hubs_.Shift(u, -shift_[u]);
  size_t first = taken_.size();
  while (!hubs_.Empty(u)) {
    const NodeId w = hubs_.Top(u);
    const int64_t top_key = hubs_.TopKey(u);
    if (top_key >= pot_[u]) break;
    const int64_t key = Key(w);
    if (key > top_key) {
      hubs_.Update(w, key);
      continue;
    }
    hubs_.Remove(w);
    taken_.push_back(w);
    NoteViolated(w, key);
  }
  for (size_t i = first; i < taken_.size(); ++i) hubs_.Insert(u, taken_[i], Key(taken_[i]));
  taken_.resize(first);
}

// Lowers hub u's potential by up to `need`, as far as its other arcs allow:
// its leaves' exits then cost more relative to it, which absorbs a rise in
// what they pay to stay (a clock tick raises every waiting task's cost of
// staying unscheduled by the same amount). The leaves elsewhere with an arc
// into u see it cheaper: their keys are lowered to stay lower bounds. Hubs
// with more than kHubDegree arcs are left alone (the scan would cost more
// than moving their few violated leaves). Returns whether u moved.
bool LeafSspSolver::LowerHub(NodeId u, int64_t need) {
  if (in_[u].size() + out_[u].size() > kHubDegree) return false;
  int64_t lower = kMin;
  for (ArcId a : in_[u]) {
    const ArcCopy& c = arcs_[a];
    if (c.flow >= c.capacity) continue;
    const NodeId t = c.tail;
    if (!leaf_[t]) {
      lower = std::max(lower, pot_[t] - c.cost);  // t -> u stays >= 0
    } else if (at_[t] != kNoId && at_[t] != a) {
      // t's exit through u stays >= 0.
      const ArcCopy& at = arcs_[at_[t]];
      lower = std::max(lower, at.cost + pot_[at.head] - c.cost);
    }
  }
  for (ArcId a : out_[u]) {
    const ArcCopy& c = arcs_[a];
    if (c.flow > 0) lower = std::max(lower, c.cost + pot_[c.head]);  // the way back stays >= 0
  }
  const int64_t target = std::max(lower, pot_[u] - need);
  if (target >= pot_[u]) return false;
  pot_[u] = target;
  ++stats_.hub_moves;
  LowerKeysOfExitsInto(u);
  return true;
}

// Saturates or empties core arc `a` when its reduced cost says so.
// Every leaf at another hub, in that hub's heap, with an exit into u gets
// that exit's price as its key if it is lower: u became cheaper to reach
// (LowerHub), or its exit was left out of the key (LeavePlateau).
void LeafSspSolver::LowerKeysOfExitsInto(NodeId u) {
  for (ArcId a : in_[u]) {
    const ArcCopy& c = arcs_[a];
    const NodeId w = c.tail;
    if (!leaf_[w] || c.flow >= c.capacity) continue;
    const ArcId at = at_[w];
    if (at == kNoId || at == a) continue;
    const NodeId hub = arcs_[at].head;
    if (hub == u || hubs_.hub_of(w) != hub) continue;
    const int64_t price = c.cost + pot_[u] - arcs_[at].cost;
    if (price < hubs_.key(w)) hubs_.Update(w, price);
  }
}

void LeafSspSolver::FixCoreArc(ArcId a) {
  const ArcCopy& c = arcs_[a];
  if (!c.alive() || c.tail == c.head || leaf_[c.tail]) return;
  const int64_t rc = c.cost - pot_[c.tail] + pot_[c.head];
  if (rc < 0 && c.flow < c.capacity) {
    SetFlow(a, c.capacity);
    ++stats_.core_fixes;
  } else if (rc > 0 && c.flow > 0) {
    SetFlow(a, 0);
    ++stats_.core_fixes;
  }
}

// Moves deficits downstream: a deficit where flow used to arrive (a
// computer whose task finished) gives back flow on an arc it sends out on,
// when its potential can make that arc's reduced cost zero, and the deficit
// goes on from the arc's head. Repeated, a finished task's deficit reaches
// the sink, which every free slot leads to, instead of waiting at one
// computer that a search must find.
void LeafSspSolver::RetractDeficits() {
  work_.clear();
  for (NodeId n : pending_) {
    if (n < node_alive_.size() && node_alive_[n] && !leaf_[n] && excess_[n] < 0 &&
        (flags_[n] & kRetract) == 0) {
      flags_[n] |= kRetract;
      work_.push_back(n);
    }
  }
  for (size_t i = 0; i < work_.size(); ++i) {
    const NodeId u = work_[i];
    if (excess_[u] >= 0 || in_[u].size() + out_[u].size() > kRetractDegree) continue;
    for (size_t k = 0; k < out_[u].size() && excess_[u] < 0; ++k) {
      const ArcId a = out_[u][k];
      const ArcCopy& c = arcs_[a];
      if (c.flow <= 0) continue;
      const int64_t target = c.cost + pot_[c.head];
      if (pot_[u] > target) (void)LowerHub(u, pot_[u] - target);
      if (pot_[u] != target) continue;
      const int64_t delta = std::min(c.flow, -excess_[u]);
      SetFlow(a, c.flow - delta);
      ++stats_.retracted;
      if ((flags_[c.head] & kRetract) == 0) {
        flags_[c.head] |= kRetract;
        work_.push_back(c.head);
      }
    }
  }
  for (NodeId n : work_) flags_[n] &= static_cast<uint8_t>(~kRetract);
}

void LeafSspSolver::Repair() {
  for (NodeId n : reclassify_) {
    flags_[n] &= static_cast<uint8_t>(~kReclassify);
    Classify(n);
  }
  reclassify_.clear();
  for (NodeId n : fresh_) {
    flags_[n] &= static_cast<uint8_t>(~kFresh);
    if (node_alive_[n] && !leaf_[n]) PlaceFresh(n);
  }
  fresh_.clear();
  for (NodeId w : dirty_) {
    flags_[w] &= static_cast<uint8_t>(~kDirty);
    RefreshLeaf(w);
  }
  dirty_.clear();
  for (NodeId u : shifted_) {
    flags_[u] &= static_cast<uint8_t>(~kShifted);
    if (node_alive_[u] && !leaf_[u]) CheckHub(u);
  }
  shifted_.clear();
  // A hub is lowered when scanning its arcs costs less than moving its
  // violated leaves would (an unscheduled node, every one of whose waiting
  // tasks a tick touched; not a rack where a few tasks started).
  for (NodeId u : hubs_hit_) {
    flags_[u] &= static_cast<uint8_t>(~kHubHit);
    if (in_[u].size() + out_[u].size() <=
        std::max<size_t>(kRetractDegree, kScanPerViolation * violations_[u])) {
      (void)LowerHub(u, need_[u]);
    }
  }
  hubs_hit_.clear();
  // What the hubs could not absorb moves: each violated leaf takes its
  // cheapest exit, leaving a deficit at its hub and an excess at the exit.
  for (NodeId w : violated_) {
    if (!node_alive_[w] || !leaf_[w] || at_[w] == kNoId) continue;
    const Exit e = CheapestExit(w, at_[w]);
    const ArcCopy& at = arcs_[at_[w]];
    if (e.arc == kNoId || e.price >= at.cost + pot_[at.head]) continue;
    MoveLeaf(w, e.arc);
    hubs_.Put(arcs_[e.arc].head, w, Key(w));
    ++stats_.leaf_moves;
  }
  violated_.clear();
  // Leaves whose unit is on no arc (new ones, or theirs went) take their
  // cheapest exit; one without any stays loose and the route reports it.
  for (NodeId n : pending_) {
    if (n < leaf_.size() && leaf_[n] && excess_[n] > 0) Mark(loose_, kLoose, n);
  }
  for (NodeId w : loose_) {
    flags_[w] &= static_cast<uint8_t>(~kLoose);
    if (!node_alive_[w] || !leaf_[w] || at_[w] != kNoId) continue;
    const Exit e = CheapestExit(w, kNoId);
    if (e.arc == kNoId) continue;
    MoveLeaf(w, e.arc);
    hubs_.Insert(arcs_[e.arc].head, w, Key(w));
    ++stats_.placed;
  }
  loose_.clear();
  for (ArcId a : check_) FixCoreArc(a);
  check_.clear();
  RetractDeficits();
}

}  // namespace copse::flow

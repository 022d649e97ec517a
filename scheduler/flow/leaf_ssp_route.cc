// LeafSspSolver's route: successive shortest paths over the core, with each
// hub's leaves entering a search in the order of their keys.
#include <algorithm>
#include <tuple>

#include "scheduler/flow/leaf_ssp.h"
#include "scheduler/flow/stopwatch.h"

namespace copse::flow {

// A new stamp_: what the last one marked (labels, the leaves that entered
// a search) reads as unmarked; every mark is cleared when it wraps.
void LeafSspSolver::NextStamp() {
  if (++stamp_ != 0) return;
  for (Label& l : label_) l.seen = l.done = 0;
  std::fill(entered_mark_.begin(), entered_mark_.end(), 0u);
  stamp_ = 1;
}

// A deficit reached at the distance being settled is settled next, ahead
// of the ties already in the heap: any node at the smallest distance may
// be settled first, and this one ends the search soonest. Without it a
// deficit reached early at a plateau's distance (the sink, through the
// first free computer) waits behind every tie of the plateau (the cluster
// aggregator's thousands of computers): last in a wide search, and in a
// deep one whenever it was reached before the plateau was pushed.
void LeafSspSolver::Relax(NodeId v, int64_t dist, ArcId arc, NodeId prev, uint8_t kind) {
  Label& l = label_[v];
  if (l.done == stamp_) return;
  if (l.seen != stamp_ || dist < l.dist) {
    l.seen = stamp_;
    l.dist = dist;
    l.arc = arc;
    l.prev = prev;
    l.kind = kind;
    heap_.Push(dist, v);
  } else if (dist != l.dist) {
    return;
  }
  if (dist == current_ && excess_[v] < 0 && options_.eager_deficits) urgent_.push_back(v);
}

// The next leaf of settled hub u enters the search (popped at `key`): it
// is taken from u's heap for the rest of the search (HubHeaps::Take: a
// small hub's leaves stay in its heap, walked past) and each of its other
// arcs reaches its head at
//     dist(u) + cost(w, v) + p(v) - cost(w, u) - p(u).
// Its stored key is only a lower bound, so it may enter before leaves whose
// true keys are smaller; that is harmless (u is settled, and Dijkstra may
// relax a settled node's arcs in any order), and cheaper than checking: the
// one pass over its arcs relaxes them and yields its exact key, which it
// keeps after the search (Phase). A leaf whose cached exits lead to settled
// nodes only is put off instead (Defer).
//
// In a deep search ties come out last in, first out, so u's event pushed
// back at `key` would come out next unless a deficit is urgent: u lets in
// every leaf due by `key` in one go, in the same order, without the round
// trips through the heap.
void LeafSspSolver::LeafEvent(NodeId u, int64_t key) {
  if (hubs_.NothingToTake(u)) return;
  const int64_t base = label_[u].dist - pot_[u];
  while (true) {
    const NodeId w = hubs_.NextToTake(u);
    hubs_.Take(u);
    const bool more = !hubs_.NothingToTake(u);
    if (more) {
      const LeafSlot* slot = &slot_[hubs_.NextToTake(u)];
      __builtin_prefetch(slot);
      __builtin_prefetch(reinterpret_cast<const char*>(slot) + 64);
    }
    entered_.push_back(w);
    slot_[w].entry_hub = u;
    if (!Defer(w, u, key)) Enter(w, u);
    if (!more) return;
    const int64_t next = base + hubs_.NextKeyToTake(u);
    if (next > key || !heap_.lifo() || !urgent_.empty()) {
      heap_.Push(std::max(key, next), u | kEvent);
      return;
    }
  }
}

void LeafSspSolver::Enter(NodeId w, NodeId u) {
  ++stats_.leaf_events;
  const ArcId at = at_[w];
  const int64_t at_cost = arcs_[at].cost;
  const int64_t base = label_[u].dist - pot_[u] - at_cost;
  int64_t best = kNoExit;
  // The cheapest kCached exits by price, ascending; the rest's least price.
  // A leaf's first full entry in the route marks it, and its next fills its
  // cache. One whose cache was valid (the bound on the rest came within
  // reach) is marked again, and its next full entry refills the cache:
  // refilling at once sent the steady-state burst's searches along other
  // equal-cost paths, settling 17 % more nodes in 10-20 % more time.
  int64_t price[kCached] = {};
  LeafSlot* cache = nullptr;
  if (cache_on_) {
    if (slot_[w].mark == 2 * route_) {
      cache = &slot_[w];
    } else {
      slot_[w].mark = 2 * route_;
    }
  }
  if (cache != nullptr) {
    std::fill(std::begin(price), std::end(price), kNoExit);
    for (CachedExit& e : cache->exit) e.arc = kNoId;
    cache->rest = kNoExit;
    cache->at_cost = at_cost;
  }
  for (ArcId a : out_[w]) {
    const ArcCopy& c = arcs_[a];
    if (a == at || c.flow >= c.capacity || c.head == u) continue;
    const int64_t p = c.cost + pot_[c.head];
    best = std::min(best, p - at_cost);
    if (cache != nullptr && p < cache->rest) {
      int i = kCached - 1;
      if (p < price[i]) {
        cache->rest = price[i];
        for (; i > 0 && price[i - 1] > p; --i) {
          price[i] = price[i - 1];
          cache->exit[i] = cache->exit[i - 1];
        }
        price[i] = p;
        cache->exit[i] = CachedExit{c.cost, c.head, a};
      } else {
        cache->rest = p;
      }
    }
    Relax(c.head, base + p, a, u, kViaLeaf);
  }
  slot_[w].entry_key = best;
  if (cache != nullptr) slot_[w].mark = 2 * route_ + 1;
}

// A cached exit's cost is exact and its head's potential is read now, so
// its reach is exact; an exit not cached reaches no sooner than the bound
// on the rest says, and an exit to a settled node relaxes nothing. So w
// relaxes the cached exits that reach an unsettled node by d and need not
// come back before the next one could. Its key for going back into u's
// heap is the least of the cached prices and the bound, a lower bound.
bool LeafSspSolver::Defer(NodeId w, NodeId u, int64_t d) {
  if (!cache_on_ || slot_[w].mark != 2 * route_ + 1) return false;
  const LeafSlot& cache = slot_[w];
  const int64_t at_cost = cache.at_cost;
  const int64_t base = label_[u].dist - pot_[u] - at_cost;
  if (cache.rest < kNoExit && base + cache.rest <= d) return false;
  int64_t next = cache.rest < kNoExit ? base + cache.rest : kNoExit;
  int64_t least = cache.rest;
  for (const CachedExit& e : cache.exit) {
    if (e.arc == kNoId) break;
    const int64_t p = e.cost + pot_[e.head];
    least = std::min(least, p);
    if (label_[e.head].done == stamp_) continue;
    if (base + p <= d) {
      Relax(e.head, base + p, e.arc, u, kViaLeaf);
    } else {
      next = std::min(next, base + p);
    }
  }
  slot_[w].entry_key = least >= kNoExit ? kNoExit : least - at_cost;
  if (next < kNoExit) heap_.Push(next, w | kPutOff);
  ++stats_.deferred;
  return true;
}

// Multi-source Dijkstra over the core from sources_, stopping once the
// deficits settled can absorb `total`, or once no deficit has come for a
// while (with `finish`, either way once every node at that distance is
// settled too); settled nodes' potentials rise by
// (radius - distance), which keeps every reduced cost non-negative and makes
// the search tree's arcs zero. Returns false when no deficit was reached.
bool LeafSspSolver::Search(const std::vector<NodeId>& roots, int64_t total, bool finish,
                           const CancelFlag* cancel) {
  NextStamp();
  hubs_.StartTaking();
  heap_.Clear();
  settled_.clear();
  for (NodeId s : roots) {
    Label& l = label_[s];
    l.seen = stamp_;
    l.dist = 0;
    l.arc = kNoId;
    l.prev = kNoId;
    l.kind = kRoot;
    heap_.Push(0, s);
  }
  int64_t reached = 0;
  bool closing = false;     // enough deficit is settled: only the distance's ties are left
  size_t last_deficit = 0;  // settled_.size() when the last deficit was settled
  uint64_t scanned = 0;
  urgent_.clear();
  current_ = 0;
  while (!urgent_.empty() || !heap_.Empty()) {
    int64_t d;
    NodeId u;
    if (!urgent_.empty()) {
      u = urgent_.back();
      urgent_.pop_back();
      d = current_;
    } else {
      uint32_t item;
      std::tie(d, item) = heap_.Pop();
      if (closing && d > radius_) break;
      current_ = d;
      if ((item & kEvent) != 0) {
        LeafEvent(item & ~kEvent, d);
        continue;
      }
      if (cache_on_ && (item & kPutOff) != 0) {
        const NodeId w = item & ~kPutOff;
        if (!Defer(w, slot_[w].entry_hub, d)) Enter(w, slot_[w].entry_hub);
        continue;
      }
      u = item;
    }
    Label& lu = label_[u];
    if (lu.done == stamp_ || d > lu.dist) continue;
    lu.done = stamp_;
    settled_.push_back(u);
    radius_ = d;
    if ((settled_.size() & 0x3fff) == 0 && IsCancelled(cancel)) break;
    if (excess_[u] < 0) {
      reached += -excess_[u];
      last_deficit = settled_.size();
      if (reached >= total) {
        if (!finish) break;
        stats_.finished += !closing;
        closing = true;
      }
    } else if (!closing && reached > 0 && settled_.size() > 2 * last_deficit + kSearchSlack) {
      // No deficit for a while: route what was found (after the rest of
      // this distance, for the blocking flow, when finishing).
      if (!finish) break;
      ++stats_.finished;
      closing = true;
    }
    // In a deep search the arc the last augmenting path left u by is
    // relaxed after the others and after pushing u's next leaf's event:
    // ties come out last in, first out, so the search tries that way first
    // (LeafSspOptions::path_hints).
    const int64_t du = d - pot_[u];
    auto forward = [&](ArcId a) {
      const ArcCopy& c = arcs_[a];
      Relax(c.head, du + c.cost + pot_[c.head], a, u, kForward);
    };
    auto backward = [&](ArcId a) {
      const ArcCopy& c = arcs_[a];
      Relax(c.tail, du - c.cost + pot_[c.tail], a, u, kBackward);
    };
    const ArcId hint = options_.path_hints && heap_.lifo() ? hint_[u] : kNoId;
    ArcId later = kNoId;
    bool later_backward = false;
    for (ArcId a : out_[u]) {
      ++scanned;
      if (arcs_[a].flow >= arcs_[a].capacity) continue;
      if (a == hint) {
        later = a;
      } else {
        forward(a);
      }
    }
    for (ArcId a = fin_first_[u]; a != kNoId; a = fin_next_[a]) {
      ++scanned;
      if (a == hint) {
        later = a;
        later_backward = true;
      } else {
        backward(a);
      }
    }
    if (!hubs_.Empty(u)) heap_.Push(std::max(d, d + hubs_.TopKey(u) - pot_[u]), u | kEvent);
    if (later != kNoId) later_backward ? backward(later) : forward(later);
  }
  stats_.settled += settled_.size();
  stats_.scanned += scanned;
  if (reached == 0) return false;
  for (NodeId u : settled_) pot_[u] += radius_ - label_[u].dist;
  return true;
}

// Dijkstra backwards over the core, from every deficit at distance 0: each
// settled node's distance h(v) is its cheapest way to a deficit. Stops once
// the sources settled hold what the deficits want (after the rest of that
// distance), or when nothing is left. Then every live core node's potential
// rises by min(h, radius) — by the radius where it was not settled. A
// residual arc u -> v keeps a non-negative reduced cost, since h(u) <=
// reduced(u, v) + h(v) and an unsettled u is at least the radius away, and
// the arcs of each settled node's shortest way to a deficit become zero, so
// a search from every source finds its deficits at distance 0. Potentials
// only rise, so the leaves' keys stay lower bounds. The residual arcs into
// v are: a core arc (x, v) with room; a core arc (v, y) with flow, from y;
// and the exit (w, v) of a leaf w that sits at hub u != v, from u.
bool LeafSspSolver::ReverseSearch(const CancelFlag* cancel) {
  NextStamp();
  heap_.Clear();
  settled_.clear();
  auto relax = [&](NodeId u, int64_t dist) {
    Label& l = label_[u];
    if (l.done == stamp_ || (l.seen == stamp_ && l.dist <= dist)) return;
    l.seen = stamp_;
    l.dist = dist;
    heap_.Push(dist, u);
  };
  int64_t want = 0;
  for (NodeId n = 0; n < node_alive_.size(); ++n) {
    if (node_alive_[n] && !leaf_[n] && excess_[n] < 0) {
      want -= excess_[n];
      relax(n, 0);
    }
  }
  int64_t have = 0;
  int64_t radius = 0;
  bool closing = false;
  while (!heap_.Empty()) {
    const auto [d, v] = heap_.Pop();
    if (closing && d > radius) break;
    Label& lv = label_[v];
    if (lv.done == stamp_ || d > lv.dist) continue;
    lv.done = stamp_;
    settled_.push_back(v);
    radius = d;
    if ((settled_.size() & 0x3fff) == 0 && IsCancelled(cancel)) return false;
    if (excess_[v] > 0) {
      have += excess_[v];
      closing |= have >= want;
    }
    const int64_t at_v = d + pot_[v];
    const std::vector<ArcId>& in = in_[v];
    const size_t n_in = in.size();
    for (size_t i = 0; i < n_in; ++i) {
      // An aggregator's in-list is tens of thousands of tasks' arcs, each
      // step three loads apart (the arc, where its leaf sits, that arc):
      // each is fetched ahead.
      if (i + 16 < n_in) __builtin_prefetch(&arcs_[in[i + 16]]);
      if (i + 8 < n_in) __builtin_prefetch(&at_[arcs_[in[i + 8]].tail]);
      if (i + 4 < n_in) {
        const ArcId ahead = at_[arcs_[in[i + 4]].tail];
        if (ahead != kNoId) __builtin_prefetch(&arcs_[ahead]);
      }
      const ArcId a = in[i];
      const ArcCopy& c = arcs_[a];
      if (c.flow >= c.capacity) continue;
      const NodeId x = c.tail;
      if (!leaf_[x]) {
        if (x != v) relax(x, at_v + c.cost - pot_[x]);
        continue;
      }
      const ArcId at = at_[x];
      if (at == kNoId || at == a) continue;
      const ArcCopy& sit = arcs_[at];
      if (sit.head != v) relax(sit.head, at_v + c.cost - sit.cost - pot_[sit.head]);
    }
    for (ArcId a : out_[v]) {
      const ArcCopy& c = arcs_[a];
      if (c.flow > 0 && c.head != v) relax(c.head, at_v - c.cost - pot_[c.head]);
    }
  }
  stats_.reverse_settled += settled_.size();
  for (NodeId n = 0; n < node_alive_.size(); ++n) {
    if (!node_alive_[n] || leaf_[n]) continue;
    pot_[n] += label_[n].done == stamp_ ? label_[n].dist : radius;
  }
  return true;
}

int64_t LeafSspSolver::RootsFromEverySource() {
  int64_t total = 0;
  roots_.clear();
  for (NodeId r : sources_) {
    if (excess_[r] <= 0) continue;
    roots_.push_back(r);
    total += excess_[r];
  }
  return total;
}

Status LeafSspSolver::ReversePhase(const CancelFlag* cancel) {
  ++stats_.reversed;
  auto ts = SteadyClock::now();
  const bool done = ReverseSearch(cancel);
  const double ms = MsSince(ts);
  stats_.search_ms += ms;
  stats_.reverse_ms += ms;
  if (!done) return Cancelled("solve cancelled");
  int64_t total = RootsFromEverySource();
  const Status st = Phase(total, cancel);
  for (NodeId r : roots_) total -= excess_[r];
  stats_.reverse_units += total;
  return st;
}

// Whether the residual step into v from prev (kind, arc) has a zero
// reduced cost.
bool LeafSspSolver::StepTight(uint8_t kind, ArcId arc, NodeId prev, NodeId v) const {
  const ArcCopy& c = arcs_[arc];
  switch (kind) {
    case kForward:
      return c.cost + pot_[v] == pot_[prev];
    case kBackward:
      return c.cost + pot_[prev] == pot_[v];
    case kViaLeaf: {
      const ArcId at = at_[c.tail];
      return at != kNoId && c.cost + pot_[v] == arcs_[at].cost + pot_[prev];
    }
    default:
      return false;
  }
}

// How much more can go along the search-tree step into v.
int64_t LeafSspSolver::StepResidual(NodeId v) const {
  const Label& l = label_[v];
  return StepResidual(l.kind, l.arc, l.prev);
}

int64_t LeafSspSolver::StepResidual(uint8_t kind, ArcId arc, NodeId prev) const {
  if (kind == kRoot) return 0;
  const ArcCopy& c = arcs_[arc];
  switch (kind) {
    case kForward:
      return c.capacity - c.flow;
    case kBackward:
      return c.flow;
    case kViaLeaf: {
      // The leaf must still sit where the search found it.
      const ArcId at = at_[c.tail];
      return at != kNoId && arcs_[at].head == prev && c.flow < c.capacity ? 1 : 0;
    }
    default:
      return 0;
  }
}

// Sends delta along a residual step (kind, arc); a leaf step (delta 1)
// moves its leaf, which is returned (kNoId for a core arc).
NodeId LeafSspSolver::SendStep(uint8_t kind, ArcId a, int64_t delta) {
  switch (kind) {
    case kForward:
      SetFlow(a, arcs_[a].flow + delta);
      return kNoId;
    case kBackward:
      SetFlow(a, arcs_[a].flow - delta);
      return kNoId;
    default: {
      const NodeId w = arcs_[a].tail;
      MoveLeaf(w, a);
      return w;
    }
  }
}

// Sends flow from the sources down the search tree to every deficit it
// settled, each path as much as its ends and steps allow.
void LeafSspSolver::Augment() {
  for (NodeId x : settled_) {
    if (excess_[x] >= 0) continue;
    int64_t delta = -excess_[x];
    NodeId u = x;
    while (label_[u].kind != kRoot && delta > 0) {
      delta = std::min(delta, StepResidual(u));
      u = label_[u].prev;
    }
    if (delta <= 0 || label_[u].kind != kRoot) continue;
    // A root that holds nothing is a plateau node: the path goes on along
    // its kept steps back to a source, each checked to be still there and
    // of zero reduced cost (every plateau node's potential rose alike since
    // it joined, but a node may have left the plateau since).
    NodeId src = u;
    if (excess_[u] <= 0 && in_plateau_[u]) {
      const int64_t path = delta;
      size_t steps = 0;
      while (excess_[src] <= 0 && delta > 0) {
        // (A node that left and joined again may close a cycle of kept
        // steps: the walk is bounded, and WayBack takes over.)
        if (kept_kind_[src] == kRoot || ++steps > kWayBackNodes) {
          delta = 0;
          break;
        }
        if (!StepTight(kept_kind_[src], kept_arc_[src], kept_prev_[src], src)) {
          delta = 0;
          break;
        }
        delta = std::min(delta, StepResidual(kept_kind_[src], kept_arc_[src], kept_prev_[src]));
        src = kept_prev_[src];
      }
      if (delta <= 0) {
        // A kept step is gone, or the source ran dry: another way back.
        delta = path;
        src = WayBack(u, delta);
        if (src == kNoId) {
          // None near: the plateau is emptied and the source searches afresh.
          plateau_broken_ = true;
          continue;
        }
      }
    }
    delta = std::min(delta, excess_[src]);
    if (delta <= 0) continue;
    for (NodeId v = u; v != src; v = kept_prev_[v]) {
      const NodeId w = SendStep(kept_kind_[v], kept_arc_[v], delta);
      if (w != kNoId) PutOutside(w, v);  // v is in the plateau
    }
    for (NodeId v = x; label_[v].kind != kRoot; v = label_[v].prev) {
      const Label& l = label_[v];
      if (options_.path_hints && l.kind != kViaLeaf) hint_[l.prev] = l.arc;
      SendStep(l.kind, l.arc, delta);
    }
    ++stats_.paths;
  }
}

// Sends source u's excess out through its own leaves while their exits are
// its cheapest way out: u's potential rises to the next leaf's key (every
// other leaf's exit stays non-negative, and no core arc at u has a cheaper
// reduced cost), which makes that leaf's exit tight, and the leaf takes it.
// A job's unscheduled node whose tasks finished thus hands each unit to its
// best waiting task at once, instead of a search per unit from every job.
// A node that received drained units drains no more in this solve (two
// sources would otherwise hand one leaf back and forth).
void LeafSspSolver::Drain(NodeId u) {
  if (hubs_.Empty(u) || excess_[u] <= 0 || (flags_[u] & kReceived) != 0) return;
  int64_t upper = kNoExit;
  for (ArcId a : out_[u]) {
    const ArcCopy& c = arcs_[a];
    if (c.flow < c.capacity) upper = std::min(upper, c.cost + pot_[c.head]);
  }
  for (ArcId a = fin_first_[u]; a != kNoId; a = fin_next_[a]) {
    upper = std::min(upper, pot_[arcs_[a].tail] - arcs_[a].cost);
  }
  while (excess_[u] > 0 && !hubs_.Empty(u)) {
    const NodeId w = hubs_.Top(u);
    const int64_t key = Key(w);
    if (key > hubs_.TopKey(u)) {
      hubs_.Update(w, key);
      ++stats_.stale_keys;
      continue;
    }
    if (key >= kNoExit || key > upper) break;
    pot_[u] = std::max(pot_[u], key);
    const Exit e = CheapestExit(w, at_[w]);
    MoveLeaf(w, e.arc);
    const NodeId v = arcs_[e.arc].head;
    hubs_.Put(v, w, Key(w));
    Mark(received_, kReceived, v);
    ++stats_.drained;
  }
}

// One search from roots_ for `total` units of deficit and the flow it makes
// room for; kInfeasible when it reached no deficit. `backs_off`: a search
// of the single-source loop, whose blocking flow backs off
// (LeafSspOptions::blocking_flow_min_units); a reverse phase's and the
// searches from every source keep theirs.
Status LeafSspSolver::Phase(int64_t total, const CancelFlag* cancel, bool backs_off) {
  if (IsCancelled(cancel)) return Cancelled("solve cancelled");
  ++stats_.phases;
  entered_.clear();
  using When = LeafSspOptions::BlockingFlow;
  const bool single = roots_.size() == 1 || plateau_search_;
  backs_off = backs_off && single && options_.blocking_flow_min_units > 0;
  bool blocking = !single || options_.blocking_flow == When::kAlways ||
                  (options_.blocking_flow == When::kAfterDeepSearches && heap_.lifo());
  bool held_back = false;  // a blocking flow skipped for the back-off, and the finishing with it
  if (blocking && backs_off && unblocked_wait_ > 0) {
    --unblocked_wait_;
    held_back = true;
    blocking = false;
  }
  const bool finish =
      blocking && options_.finish_distance_units > 0 && total >= options_.finish_distance_units;
  auto ts = SteadyClock::now();
  const bool found = Search(roots_, total, finish, cancel);
  hubs_.EndTaking();  // the heaps change from here on
  stats_.search_ms += MsSince(ts);
  if (found && !IsCancelled(cancel)) {
    Augment();
    // The blocking flow finds what the tree paths could not: only when a
    // settled deficit is left and a root still has something to give.
    bool deficit = false;
    for (NodeId x : settled_) deficit |= excess_[x] < 0;
    int64_t held = 0;  // what the roots still hold (a root never goes below 0)
    for (NodeId r : roots_) held += excess_[r];
    if (deficit && held > 0 && held_back) ++stats_.unblocked;
    if (deficit && held > 0 && blocking) {
      ++stats_.blocking_flows;
      GroupEntered();
      while (BuildLevels()) BlockingFlow();
      int64_t sent = held;
      for (NodeId r : roots_) sent -= excess_[r];
      stats_.blocked_units += sent;
      if (backs_off) {
        if (sent < options_.blocking_flow_min_units) {
          unblocked_wait_ = unblocked_backoff_;
          unblocked_backoff_ *= 2;
        } else {
          unblocked_backoff_ = 1;
        }
      }
    }
  }
  if (plateau_search_ && found) {
    // A source of the plateau that ran dry is no longer at distance 0 from
    // one: it leaves (the kept steps of nodes behind it find another way
    // back when a path needs them).
    for (NodeId r : roots_) {
      if (in_plateau_[r] && excess_[r] <= 0 && kept_kind_[r] == kRoot) LeavePlateau(r);
    }
    GrowPlateau();
  }
  // The leaves that entered the search go back into their hubs' heaps, or
  // stay in them (a small hub's, HubHeaps::Take; Put updates those in
  // place). One still where it entered keeps the key it entered with
  // (exact for one that entered in full, a lower bound for one put off;
  // potentials have only risen since). A leaf marked in this route
  // (exit_cache) has not moved since it was marked, before it entered: it
  // is where it entered, and its arc need not be read.
  for (NodeId w : entered_) {
    const LeafSlot& slot = slot_[w];
    const NodeId hub = slot.mark >> 1 == route_ ? slot.entry_hub : arcs_[at_[w]].head;
    if (in_plateau_[hub]) {
      PutOutside(w, hub);
    } else {
      hubs_.Put(hub, w, hub == slot.entry_hub ? slot.entry_key : Key(w));
    }
  }
  entered_.clear();
  if (IsCancelled(cancel)) return Cancelled("solve cancelled");
  if (!found) return Infeasible("no feasible flow: some supply cannot reach any demand");
  return Status::Ok();
}

// Collects the nodes with excess among `sources_` and pending_ into
// sources_ (each once); a leaf with an excess has no exit left, and sets
// `stranded`. Returns the total excess.
int64_t LeafSspSolver::CollectSources(bool& stranded) {
  NextStamp();
  size_t k = 0;
  int64_t total = 0;
  auto take = [&](NodeId n) {
    if (n >= node_alive_.size() || !node_alive_[n] || excess_[n] <= 0 || label_[n].seen == stamp_) {
      return;
    }
    label_[n].seen = stamp_;
    if (leaf_[n]) {
      stranded = true;
      return;
    }
    sources_[k++] = n;
    total += excess_[n];
  };
  const size_t old = sources_.size();
  sources_.resize(old + pending_.size());
  for (size_t i = 0; i < old; ++i) take(sources_[i]);
  for (NodeId n : pending_) take(n);
  pending_.clear();
  sources_.resize(k);
  return total;
}

Status LeafSspSolver::Route(const CancelFlag* cancel) {
  // A new route number: the exit caches of the last route (whose arcs and
  // potentials may have changed since) read as empty.
  if (++route_ >= (1u << 31)) {
    for (LeafSlot& slot : slot_) slot.mark = 0;
    route_ = 1;
  }
  // A heap item tags a put-off leaf with kPutOff: node ids must fit beside it.
  cache_on_ = options_.exit_cache && node_alive_.size() <= kPutOff;
  unblocked_wait_ = 0;
  unblocked_backoff_ = 1;
  heap_.Clear();
  heap_.SetLifo(options_.deep_ties && !loaded_);
  loaded_ = false;
  sources_.clear();
  bool stranded = false;
  stats_.excess_units = CollectSources(stranded);
  Status result = Status::Ok();
  if (options_.single_source) {
    // Augmenting paths only carry excess from a source to deficits, so the
    // sources are found once (after the drain) and taken in turn.
    for (NodeId s : sources_) Drain(s);
    CollectSources(stranded);
    // A run of searches that moved no potential (each found its deficits
    // at distance 0) suggests the units left can go at today's potentials:
    // the next search starts from every source at once.
    int64_t flat = 0;
    // After enough wide searches, a reverse phase after each (LeafSspOptions);
    // after one that sent little, `wait` wide searches pass first.
    const bool reverse = options_.reverse_after_wide_searches > 0;
    size_t core = 0;
    for (NodeId n = 0; reverse && n < node_alive_.size(); ++n) {
      core += node_alive_[n] && !leaf_[n];
    }
    auto wide = [&] {
      return reverse && 4 * settled_.size() >= core &&
             settled_.size() >= options_.reverse_min_nodes;
    };
    bool was_wide = false;
    int64_t wide_searches = 0, wait = 0, backoff = 1;
    for (NodeId s : sources_) {
      while (result.ok() && excess_[s] > 0) {
        if (was_wide && wide_searches >= options_.reverse_after_wide_searches) {
          if (wait > 0) {
            --wait;
          } else {
            const int64_t before = stats_.reverse_units;
            ResetPlateau();
            result = ReversePhase(cancel);
            if (stats_.reverse_units - before < options_.reverse_min_units) {
              backoff *= 2;
              wait = backoff;
            } else {
              backoff = 1;
            }
            was_wide = false;
            continue;
          }
        }
        if (options_.batch_after_flat_searches > 0 && flat >= options_.batch_after_flat_searches) {
          flat = 0;
          ResetPlateau();
          const int64_t total = RootsFromEverySource();
          if (roots_.size() > 1) {
            ++stats_.batched;
            result = Phase(total, cancel);
            continue;
          }
        }
        // With the kept plateau its nodes are roots too, at distance 0
        // (LeafSspOptions::kept_plateau): for a source in it, or one that
        // holds enough units to start one; another source searches alone.
        const bool plateau =
            options_.kept_plateau && (in_plateau_[s] || excess_[s] >= options_.plateau_min_units);
        if (!plateau) ResetPlateau();
        roots_.clear();
        if (plateau) roots_ = plateau_;
        if (!in_plateau_[s]) roots_.push_back(s);
        plateau_search_ = plateau;
        plateau_broken_ = false;
        result = Phase(excess_[s], cancel, /*backs_off=*/true);
        plateau_search_ = false;
        if (plateau_broken_) {
          ++stats_.plateau_breaks;
          ResetPlateau();
        }
        flat = radius_ == 0 ? flat + 1 : 0;
        was_wide = wide();
        if (was_wide) {
          ++wide_searches;
          ++stats_.wide;
        }
      }
      if (!result.ok()) break;
    }
  } else {
    while (true) {
      for (NodeId s : sources_) Drain(s);
      const int64_t total = CollectSources(stranded);
      if (sources_.empty()) break;
      roots_ = sources_;
      result = Phase(total, cancel);
      if (!result.ok()) break;
    }
  }
  ResetPlateau();
  for (NodeId n : received_) flags_[n] &= static_cast<uint8_t>(~kReceived);
  received_.clear();
  if (stranded && result.ok()) {
    result = Infeasible("no feasible flow: a node's supply has no arc to leave by");
  }
  // What is left (cancelled or infeasible) is routed by a later solve.
  for (NodeId n : sources_) {
    if (excess_[n] > 0) Pend(n);
  }
  for (NodeId n = 0; stranded && n < node_alive_.size(); ++n) {
    if (node_alive_[n] && leaf_[n] && excess_[n] > 0) Pend(n);
  }
  return result;
}

// After a search from the plateau and a source (LeafSspOptions::kept_plateau)
// and its augmenting paths, every node it settled joins the plateau with the
// step it was reached by, if that step is still there and the node before it
// is in the plateau (or is the source, still holding excess): in settling
// order, so a node's predecessor is considered before it.
void LeafSspSolver::GrowPlateau() {
  for (NodeId v : settled_) {
    // Deficits and aggregators stay out: a search ends at the one, and the
    // other's in-list (every task's arc) is no way back (WayBack).
    if (in_plateau_[v] || excess_[v] < 0 || in_[v].size() + out_[v].size() > kHubDegree) continue;
    const Label& l = label_[v];
    bool ok;
    if (l.kind == kRoot) {
      ok = excess_[v] > 0;
    } else {
      ok = (in_plateau_[l.prev] != 0) && StepResidual(v) > 0;
    }
    if (!ok) continue;
    in_plateau_[v] = 1;
    plateau_pos_[v] = static_cast<uint32_t>(plateau_.size());
    plateau_.push_back(v);
    stats_.plateau = std::max<uint64_t>(stats_.plateau, plateau_.size());
    kept_arc_[v] = l.arc;
    kept_prev_[v] = l.prev;
    kept_kind_[v] = l.kind;
  }
}

// Empties the plateau. Every leaf keyed by its way out of it gets a key no
// larger than its true key again (one still listed that since moved to a
// hub outside it already has one; min keeps it).
void LeafSspSolver::ResetPlateau() {
  if (plateau_.empty() && outside_keyed_.empty()) return;
  ++stats_.plateau_resets;
  for (NodeId v : plateau_) in_plateau_[v] = 0;
  for (NodeId w : outside_keyed_) {
    outside_listed_[w] = 0;
    if (hubs_.hub_of(w) != kNoId) hubs_.Update(w, std::min(hubs_.key(w), Key(w)));
  }
  outside_keyed_.clear();
  plateau_.clear();
}

// Searches backwards from plateau node u, breadth first, over residual
// steps of zero reduced cost between plateau nodes, for the nearest one
// that holds excess (or the search's own source, a root outside the
// plateau). It expands only nodes with few arcs (a computer's in-list, not
// an aggregator's), at most kWayBackNodes of them. On success the steps
// found become the kept steps from that source to u (the source's own
// chain ends there), `delta` is cut to what they carry, and the source is
// returned; kNoId otherwise.
NodeId LeafSspSolver::WayBack(NodeId u, int64_t& delta) {
  if (++back_stamp_ == 0) {
    std::fill(back_mark_.begin(), back_mark_.end(), 0u);
    back_stamp_ = 1;
  }
  back_queue_.assign(1, u);
  back_mark_[u] = back_stamp_;
  NodeId src = kNoId;
  // A step h -> v found from v: h's next node toward u and the step.
  auto reach = [&](NodeId h, NodeId v, ArcId a, uint8_t kind) {
    // A plateau node, or the search's own source (a root outside it).
    const bool source = excess_[h] > 0 && label_[h].done == stamp_ && label_[h].kind == kRoot;
    if ((!in_plateau_[h] && !source) || back_mark_[h] == back_stamp_) return;
    back_mark_[h] = back_stamp_;
    back_next_[h] = v;
    back_arc_[h] = a;
    back_kind_[h] = kind;
    if (excess_[h] > 0 && src == kNoId) src = h;
    back_queue_.push_back(h);
  };
  for (size_t i = 0; i < back_queue_.size() && i < kWayBackNodes && src == kNoId; ++i) {
    const NodeId v = back_queue_[i];
    if (in_[v].size() + out_[v].size() > kHubDegree) continue;
    for (ArcId a : in_[v]) {
      const ArcCopy& c = arcs_[a];
      if (c.flow >= c.capacity || c.tail == v) continue;
      if (leaf_[c.tail]) {
        const ArcId at = at_[c.tail];
        if (at == kNoId || at == a) continue;
        const NodeId h = arcs_[at].head;
        if (h != v && StepTight(kViaLeaf, a, h, v)) reach(h, v, a, kViaLeaf);
      } else if (StepTight(kForward, a, c.tail, v)) {
        reach(c.tail, v, a, kForward);
      }
    }
    for (ArcId a : out_[v]) {
      const ArcCopy& c = arcs_[a];
      if (c.flow > 0 && c.head != v && !leaf_[c.head] && StepTight(kBackward, a, c.head, v)) {
        reach(c.head, v, a, kBackward);
      }
    }
  }
  if (src == kNoId) return kNoId;
  int64_t carry = delta;
  for (NodeId h = src; h != u; h = back_next_[h]) {
    carry = std::min(carry, StepResidual(back_kind_[h], back_arc_[h], h));
  }
  if (carry <= 0) return kNoId;
  delta = carry;
  ++stats_.plateau_way_backs;
  kept_kind_[src] = kRoot;
  for (NodeId h = src; h != u; h = back_next_[h]) {
    const NodeId v = back_next_[h];
    kept_prev_[v] = h;
    kept_arc_[v] = back_arc_[h];
    kept_kind_[v] = back_kind_[h];
  }
  return src;
}

// Takes u out of the plateau. A leaf keyed by its way out of the plateau
// while u was in it (at a plateau hub, or at one that has left since) was
// keyed without its exit into u: each leaf with such an exit gets that
// exit's price if it is lower, so its key is a lower bound again (a true
// key is no higher already). Leaves taken by the search are keyed when
// they go back (Phase). u's in-list is short: a plateau node has at most
// kHubDegree arcs.
void LeafSspSolver::LeavePlateau(NodeId u) {
  in_plateau_[u] = 0;
  const NodeId last = plateau_.back();
  plateau_[plateau_pos_[u]] = last;
  plateau_pos_[last] = plateau_pos_[u];
  plateau_.pop_back();
  ++stats_.plateau_left;
  LowerKeysOfExitsInto(u);
}

void LeafSspSolver::PutOutside(NodeId w, NodeId hub) {
  hubs_.Put(hub, w, OutsideKey(w, hub));
  if (!outside_listed_[w]) {
    outside_listed_[w] = 1;
    outside_keyed_.push_back(w);
  }
}

// Like Key(w), over w's exits to nodes outside the plateau only: the least
// cost(w, v) + p(v) of such an exit, less the cost of the arc w sits on (at
// `hub`); kNoExit when it has none. (Its exit cache would do for most
// leaves, but reading its arcs measured no slower on the burst.)
int64_t LeafSspSolver::OutsideKey(NodeId w, NodeId hub) const {
  const ArcId at = at_[w];
  int64_t best = kNoExit;
  for (ArcId a : out_[w]) {
    const ArcCopy& c = arcs_[a];
    if (a == at || c.flow >= c.capacity || c.head == hub || in_plateau_[c.head]) continue;
    best = std::min(best, c.cost + pot_[c.head]);
  }
  return best >= kNoExit ? kNoExit : best - arcs_[at].cost;
}

}  // namespace copse::flow

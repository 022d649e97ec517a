// LocalSspSolver's routing (local_ssp.h, step 3): successive shortest paths
// from the nodes with excess on the kept state — a multi-source Dijkstra in
// either direction, augmentation along its tree, then Dinic's blocking flow
// on the zero-reduced-cost arcs inside the settled region.
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "scheduler/flow/local_ssp.h"
#include "scheduler/flow/stopwatch.h"

namespace copse::flow {

void LocalSspSolver::NextStamp() {
  if (++stamp_ == 0) {
    for (Label& l : label_) l.seen = l.done = 0;
    stamp_ = 1;
  }
}

// Multi-source Dijkstra over reduced costs, on the kept copies and adjacency
// arrays. Forwards (kReverse false) from the sources over residual arcs: a
// node's label is its distance from the nearest source, and the search stops
// once the deficits settled can absorb `target` units (the total excess);
// settled nodes' potentials rise by (radius - label). Backwards from the
// deficits over residual arcs reversed: a node's label is its distance to
// the nearest deficit, the search stops once the sources settled hold
// `target` units (the total deficit), and settled nodes' potentials drop by
// (radius - label). Either way every residual arc stays non-negative and the
// shortest paths between the settled ends become zero-reduced-cost. Each
// label records the arc it was reached by, as a forward (back = 0) or a
// backward (back = 1) residual arc. Returns false when no end was reached.
template <bool kReverse>
bool LocalSspSolver::Search(int64_t target, const CancelFlag* cancel) {
  NextStamp();
  heap_.Clear();
  settled_list_.clear();
  for (NodeId r : kReverse ? deficits_ : sources_) {
    label_[r].dist = 0;
    label_[r].seen = stamp_;
    label_[r].parent = kNoId;
    heap_.Push(0, r);
  }
  int64_t reached = 0, radius = 0;
  auto relax = [&](NodeId v, int64_t nd, ArcId a, uint32_t back) {
    Label& l = label_[v];
    if (l.done == stamp_) return;
    if (l.seen != stamp_ || nd < l.dist) {
      l.seen = stamp_;
      l.dist = nd;
      l.parent = a;
      l.back = back;
      heap_.Push(nd, v);
    }
  };
  uint64_t scanned = 0;
  while (!heap_.Empty()) {
    auto [d, u] = heap_.Pop();
    if (label_[u].done == stamp_ || d > label_[u].dist) continue;
    label_[u].done = stamp_;
    settled_list_.push_back(u);
    radius = d;
    if ((settled_list_.size() & 0xffff) == 0 && IsCancelled(cancel)) break;
    // What u holds of what the search looks for: a source's excess
    // backwards, a deficit's demand forwards.
    const int64_t held = kReverse ? excess_[u] : -excess_[u];
    if (held > 0) {
      reached += held;
      if (reached >= target) break;
    }
    if constexpr (!kReverse) {
      // Residual arcs out of u: arcs out with room, arcs in carrying flow.
      const int64_t du = d - pot_[u];
      for (ArcId a : out_[u]) {
        ++scanned;
        const ArcCopy& c = arcs_[a];
        if (arcs_[a].flow >= c.capacity) continue;
        relax(c.head, du + c.cost + pot_[c.head], a, 0);
      }
      for (ArcId a = fin_first_[u]; a != kNoId; a = fin_next_[a]) {
        ++scanned;
        const ArcCopy& c = arcs_[a];
        relax(c.tail, du - c.cost + pot_[c.tail], a, 1);
      }
    } else {
      // Residual arcs into u: arcs in with room, arcs out carrying flow. A
      // residual arc w->u of reduced cost rc gives w the label d + rc.
      const int64_t du = d + pot_[u];
      for (ArcId a : in_[u]) {
        ++scanned;
        const ArcCopy& c = arcs_[a];
        if (arcs_[a].flow >= c.capacity) continue;
        relax(c.tail, du + c.cost - pot_[c.tail], a, 0);
      }
      for (ArcId a : out_[u]) {
        ++scanned;
        if (arcs_[a].flow <= 0) continue;
        const ArcCopy& c = arcs_[a];
        relax(c.head, du - c.cost - pot_[c.head], a, 1);
      }
    }
  }
  stats_.settled += settled_list_.size();
  stats_.scanned += scanned;
  if (reached == 0) return false;
  for (NodeId u : settled_list_) {
    if constexpr (kReverse) {
      pot_[u] -= radius - label_[u].dist;
    } else {
      pot_[u] += radius - label_[u].dist;
    }
  }
  return true;
}

// Residual arc `a` leaving `u` (forwards, or backwards when `back`) is
// admissible when it has residual capacity, zero reduced cost and ends at a
// node settled in this phase; `v` gets its other end.
bool LocalSspSolver::Admissible(NodeId u, ArcId a, bool back, NodeId& v) const {
  const ArcCopy& c = arcs_[a];
  if (back) {
    v = c.tail;
    return v != u && arcs_[a].flow > 0 && label_[v].done == stamp_ && pot_[v] - c.cost == pot_[u];
  }
  v = c.head;
  return v != u && arcs_[a].flow < c.capacity && label_[v].done == stamp_ &&
         c.cost + pot_[v] == pot_[u];
}

// Augments along the shortest-path tree of the last search, whose arcs have
// zero reduced cost once the potentials moved: after a forward search, from
// each settled deficit up its parent arcs to the source at the root; after a
// backward one, from each settled source along its parent arcs to the
// deficit at the root. Each path takes as much as its ends and arcs allow;
// whatever is left goes to the blocking flow.
void LocalSspSolver::TreeAugment(bool reverse) {
  for (NodeId x : settled_list_) {
    if (reverse ? excess_[x] <= 0 : excess_[x] >= 0) continue;
    path_.clear();
    NodeId u = x;
    int64_t delta = std::abs(excess_[x]);
    while (label_[u].parent != kNoId && delta > 0) {
      ArcId a = label_[u].parent;
      const ArcCopy& c = arcs_[a];
      const bool back = label_[u].back != 0;
      // A forward residual arc gains flow, a backward one loses it.
      delta = std::min(delta, back ? c.flow : c.capacity - c.flow);
      path_.push_back((uint64_t{a} << 1) | (back ? 1 : 0));
      // Forward search: the parent arc leads into u; backward: out of u.
      u = reverse != back ? c.head : c.tail;
    }
    if (delta <= 0 || label_[u].parent != kNoId) continue;
    delta = std::min(delta, reverse ? -excess_[u] : excess_[u]);
    if (delta <= 0) continue;
    for (uint64_t p : path_) {
      ArcId a = static_cast<ArcId>(p >> 1);
      SetFlow(a, (p & 1) != 0 ? arcs_[a].flow - delta : arcs_[a].flow + delta);
    }
    ++stats_.tree_paths;
  }
}

// Breadth-first levels over admissible arcs from the sources, up to the
// first level holding a deficit (deeper nodes cannot be on a shortest
// admissible path to it; a later round reaches the deficits beyond). Returns
// true if a deficit was reached.
bool LocalSspSolver::BuildLevels() {
  if (++level_stamp_ == 0) {
    std::fill(level_mark_.begin(), level_mark_.end(), 0u);
    level_stamp_ = 1;
  }
  queue_.clear();
  for (NodeId s : sources_) {
    if (excess_[s] <= 0 || level_mark_[s] == level_stamp_) continue;
    level_mark_[s] = level_stamp_;
    level_[s] = 0;
    queue_.push_back(s);
  }
  int32_t limit = std::numeric_limits<int32_t>::max();
  for (size_t qi = 0; qi < queue_.size(); ++qi) {
    NodeId u = queue_[qi];
    cur_[u] = 0;  // position in out_[u], then the flow-in list
    cur_back_[u] = 0;
    if (excess_[u] < 0) {
      limit = std::min(limit, level_[u]);
      continue;
    }
    if (level_[u] >= limit) continue;  // a dead end in this round
    NodeId v;
    for (ArcId a : out_[u]) {
      if (Admissible(u, a, false, v) && level_mark_[v] != level_stamp_) {
        level_mark_[v] = level_stamp_;
        level_[v] = level_[u] + 1;
        queue_.push_back(v);
      }
    }
    for (ArcId a = fin_first_[u]; a != kNoId; a = fin_next_[a]) {
      if (Admissible(u, a, true, v) && level_mark_[v] != level_stamp_) {
        level_mark_[v] = level_stamp_;
        level_[v] = level_[u] + 1;
        queue_.push_back(v);
      }
    }
  }
  if (limit == std::numeric_limits<int32_t>::max()) return false;
  // Nodes at or beyond the deficits' level lead nowhere in this round: the
  // blocking flow skips them instead of scanning their arcs.
  for (NodeId u : queue_) {
    if (level_[u] >= limit && excess_[u] >= 0) level_[u] = -2;
  }
  return true;
}

// Augments along level-increasing admissible paths from the sources to
// deficits until none is left (Dinic's blocking flow). Each node's current
// arc walks its out array by position, then its flow-in list.
void LocalSspSolver::BlockingFlow() {
  for (NodeId s : sources_) {
    if (level_mark_[s] != level_stamp_ || level_[s] != 0) continue;
    while (excess_[s] > 0) {
      path_.clear();
      NodeId u = s;
      bool found = false;
      while (true) {
        if (u != s && excess_[u] < 0) {
          found = true;
          break;
        }
        // Advance u's current arc to the next one leading a level deeper.
        NodeId v = kNoId;
        bool advanced = false;
        while (true) {
          ArcId a;
          const bool back = cur_back_[u] != 0;
          if (!back) {
            if (cur_[u] >= out_[u].size()) {
              cur_back_[u] = 1;
              cur_[u] = fin_first_[u];
              continue;
            }
            a = out_[u][cur_[u]];
          } else {
            if (cur_[u] == kNoId) break;
            a = cur_[u];
          }
          if (Admissible(u, a, back, v) && level_mark_[v] == level_stamp_ &&
              level_[v] == level_[u] + 1) {
            path_.push_back((uint64_t{a} << 1) | (back ? 1 : 0));
            advanced = true;
            break;
          }
          cur_[u] = back ? fin_next_[a] : cur_[u] + 1;
        }
        if (advanced) {
          u = v;
          continue;
        }
        level_[u] = -2;  // dead end
        if (path_.empty()) break;
        uint64_t p = path_.back();
        path_.pop_back();
        ArcId a = static_cast<ArcId>(p >> 1);
        u = (p & 1) != 0 ? arcs_[a].head : arcs_[a].tail;
      }
      if (!found) break;
      int64_t delta = std::min(excess_[s], -excess_[u]);
      for (uint64_t p : path_) {
        const ArcCopy& c = arcs_[static_cast<ArcId>(p >> 1)];
        delta = std::min(delta, (p & 1) != 0 ? c.flow : c.capacity - c.flow);
      }
      for (uint64_t p : path_) {
        ArcId a = static_cast<ArcId>(p >> 1);
        SetFlow(a, (p & 1) != 0 ? arcs_[a].flow - delta : arcs_[a].flow + delta);
      }
    }
  }
}

Status LocalSspSolver::Route(const CancelFlag* cancel) {
  // Sources and deficits: every pending node with a nonzero excess, once.
  NextStamp();
  sources_.clear();
  deficits_.clear();
  for (NodeId n : pending_) {
    if (n < node_alive_.size() && node_alive_[n] && excess_[n] != 0 && label_[n].seen != stamp_) {
      label_[n].seen = stamp_;
      (excess_[n] > 0 ? sources_ : deficits_).push_back(n);
    }
  }
  pending_.clear();
  for (NodeId s : sources_) stats_.excess_units += excess_[s];
  auto prune = [&](std::vector<NodeId>& list, int64_t sign) {
    int64_t total = 0;
    size_t k = 0;
    for (NodeId n : list) {
      if (sign * excess_[n] > 0) {
        list[k++] = n;
        total += sign * excess_[n];
      }
    }
    list.resize(k);
    return total;
  };
  Status result = Status::Ok();
  while (true) {
    const int64_t total = prune(sources_, 1);
    const int64_t need = prune(deficits_, -1);
    if (sources_.empty()) break;
    if (IsCancelled(cancel)) {
      result = Cancelled("solve cancelled");
      break;
    }
    ++stats_.phases;
    // Search from whichever side has fewer nodes: from one sink-like deficit
    // backwards, every source reached gets a zero-reduced-cost path to it in
    // one phase, where a forward search would stop at the first source's
    // distance.
    bool reverse = options_.reverse_search && !deficits_.empty() &&
                   deficits_.size() * kReverseRatio < sources_.size();
    stats_.reverse_phases += reverse;
    auto ts = SteadyClock::now();
    const bool found = reverse ? Search<true>(need, cancel) : Search<false>(total, cancel);
    auto tf = SteadyClock::now();
    stats_.search_ms += MsBetween(ts, tf);
    if (!found) {
      result = Infeasible("no feasible flow: some supply cannot reach any demand");
      break;
    }
    if (IsCancelled(cancel)) {
      result = Cancelled("solve cancelled");
      break;
    }
    if (options_.tree_augment) TreeAugment(reverse);
    while (BuildLevels()) BlockingFlow();
    stats_.flow_ms += MsSince(tf);
  }
  // What is left (cancelled or infeasible) is routed by a later solve.
  pending_.clear();
  for (NodeId n : sources_) {
    if (excess_[n] > 0) Pend(n);
  }
  for (NodeId n : deficits_) {
    if (excess_[n] < 0) Pend(n);
  }
  return result;
}

}  // namespace copse::flow

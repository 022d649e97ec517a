// LeafSspSolver's blocking flow: after a search has made the shortest paths
// zero-reduced-cost, sends as much as they carry from every source at once
// (Dinic's levels and current arcs), leaves' exits included. The search
// tree alone gives each deficit one source: a cluster node short of 250
// units reached first by one computer with a unit to give took one unit a
// search.
#include <limits>

#include "scheduler/flow/leaf_ssp.h"

namespace copse::flow {

// Lists the leaves that entered the last search under their hubs.
void LeafSspSolver::GroupEntered() {
  for (NodeId w : entered_) {
    const NodeId hub = arcs_[at_[w]].head;
    if (entered_mark_[hub] != stamp_) {
      entered_mark_[hub] = stamp_;
      entered_first_[hub] = kNoId;
    }
    entered_next_[w] = entered_first_[hub];
    entered_first_[hub] = w;
  }
}

// Residual arc `a` of kind `kind` leaving u is admissible when it has room,
// zero reduced cost, and ends at a node the search settled; `v` gets that node.
bool LeafSspSolver::Admissible(NodeId u, ArcId a, uint8_t kind, NodeId& v) const {
  const ArcCopy& c = arcs_[a];
  switch (kind) {
    case kForward:
      v = c.head;
      return c.flow < c.capacity && label_[v].done == stamp_ && c.cost + pot_[v] == pot_[u];
    case kBackward:
      v = c.tail;
      return c.flow > 0 && label_[v].done == stamp_ && pot_[v] - c.cost == pot_[u];
    default: {
      // An exit of leaf w = tail(a), which must still sit at u.
      v = c.head;
      const ArcId at = at_[c.tail];
      return v != u && at != kNoId && arcs_[at].head == u && a != at && c.flow < c.capacity &&
             label_[v].done == stamp_ && c.cost + pot_[v] == arcs_[at].cost + pot_[u];
    }
  }
}

// Walks u's current arc to its next residual arc (out arcs, then the
// flow-in list, then the exits of the leaves that entered at u); returns
// false when u has none left.
bool LeafSspSolver::NextArc(NodeId u, ArcId& a, uint8_t& kind) {
  Cursor& cur = cursor_[u];
  while (true) {
    switch (cur.stage) {
      case 0:
        if (cur.pos < out_[u].size()) {
          a = out_[u][cur.pos++];
          kind = kForward;
          return true;
        }
        cur.stage = 1;
        cur.pos = fin_first_[u];
        break;
      case 1:
        if (cur.pos != kNoId) {
          a = cur.pos;
          cur.pos = fin_next_[a];
          kind = kBackward;
          return true;
        }
        cur.stage = 2;
        cur.leaf = entered_mark_[u] == stamp_ ? entered_first_[u] : kNoId;
        cur.pos = 0;
        cur.cached = OnlyCachedExits(cur.leaf, u);
        break;
      default:
        if (cur.leaf == kNoId) return false;
        if (cur.cached) {
          if (cur.pos < kCached && slot_[cur.leaf].exit[cur.pos].arc != kNoId) {
            a = slot_[cur.leaf].exit[cur.pos++].arc;
            kind = kViaLeaf;
            ++stats_.exits_walked;
            return true;
          }
        } else if (cur.pos < out_[cur.leaf].size()) {
          a = out_[cur.leaf][cur.pos++];
          kind = kViaLeaf;
          ++stats_.exits_walked;
          return true;
        }
        cur.leaf = entered_next_[cur.leaf];
        cur.pos = 0;
        cur.cached = OnlyCachedExits(cur.leaf, u);
        break;
    }
  }
}

// Whether leaf w's exits that its cache leaves out can have no zero reduced
// cost from hub u: an exit is admissible at the price at_cost + p(u), and
// the bound on the rest's prices (which only rise within a route) is above
// it. Then walking its cached exits finds every admissible one.
bool LeafSspSolver::OnlyCachedExits(NodeId w, NodeId u) const {
  if (w == kNoId || !cache_on_ || slot_[w].mark != 2 * route_ + 1) return false;
  const LeafSlot& c = slot_[w];
  return c.rest > c.at_cost + pot_[u];
}

// Breadth-first levels over admissible arcs from the sources, up to the
// first level holding a deficit. Returns true if a deficit was reached.
bool LeafSspSolver::BuildLevels() {
  if (++level_stamp_ == 0) {
    std::fill(level_mark_.begin(), level_mark_.end(), 0u);
    level_stamp_ = 1;
  }
  queue_.clear();
  for (NodeId s : roots_) {
    if (excess_[s] <= 0 || level_mark_[s] == level_stamp_) continue;
    level_mark_[s] = level_stamp_;
    level_[s] = 0;
    queue_.push_back(s);
  }
  int32_t limit = std::numeric_limits<int32_t>::max();
  for (size_t qi = 0; qi < queue_.size(); ++qi) {
    const NodeId u = queue_[qi];
    cursor_[u] = Cursor{};
    if (excess_[u] < 0) {
      limit = std::min(limit, level_[u]);
      continue;
    }
    if (level_[u] >= limit) continue;
    ArcId a;
    uint8_t kind;
    NodeId v;
    while (NextArc(u, a, kind)) {
      if (Admissible(u, a, kind, v) && level_mark_[v] != level_stamp_) {
        level_mark_[v] = level_stamp_;
        level_[v] = level_[u] + 1;
        queue_.push_back(v);
      }
    }
    cursor_[u] = Cursor{};
  }
  if (limit == std::numeric_limits<int32_t>::max()) return false;
  // Nodes at or beyond the deficits' level lead nowhere in this round.
  for (NodeId u : queue_) {
    if (level_[u] >= limit && excess_[u] >= 0) level_[u] = -2;
  }
  return true;
}

void LeafSspSolver::BlockingFlow() {
  for (NodeId s : roots_) {
    if (level_mark_[s] != level_stamp_ || level_[s] != 0) continue;
    while (excess_[s] > 0) {
      steps_.clear();
      NodeId u = s;
      bool found = false;
      while (true) {
        if (u != s && excess_[u] < 0) {
          found = true;
          break;
        }
        ArcId a;
        uint8_t kind;
        NodeId v = kNoId;
        bool advanced = false;
        while (NextArc(u, a, kind)) {
          if (Admissible(u, a, kind, v) && level_mark_[v] == level_stamp_ &&
              level_[v] == level_[u] + 1) {
            steps_.push_back(Step{a, kind, u});
            advanced = true;
            // Stay on this arc: it may carry more after this path.
            Cursor& cur = cursor_[u];
            if (kind == kBackward) {
              cur.stage = 1;
              cur.pos = a;
            } else {
              --cur.pos;
            }
            break;
          }
        }
        if (advanced) {
          u = v;
          continue;
        }
        level_[u] = -2;  // dead end
        if (steps_.empty()) break;
        u = steps_.back().from;
        steps_.pop_back();
        // Move past the arc that led into the dead end.
        Cursor& cur = cursor_[u];
        if (cur.stage == 1) {
          cur.pos = fin_next_[cur.pos];
        } else {
          ++cur.pos;
        }
      }
      if (!found) break;
      int64_t delta = std::min(excess_[s], -excess_[u]);
      for (const Step& st : steps_) {
        const ArcCopy& c = arcs_[st.arc];
        delta = std::min(delta, st.kind == kForward    ? c.capacity - c.flow
                                : st.kind == kBackward ? c.flow
                                                       : int64_t{1});
      }
      for (const Step& st : steps_) {
        if (st.kind == kForward) {
          SetFlow(st.arc, arcs_[st.arc].flow + delta);
        } else if (st.kind == kBackward) {
          SetFlow(st.arc, arcs_[st.arc].flow - delta);
        } else {
          MoveLeaf(arcs_[st.arc].tail, st.arc);
        }
      }
      ++stats_.paths;
    }
  }
}

}  // namespace copse::flow

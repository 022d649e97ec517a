#include "bench/flow/network_simplex.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/reuse.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {

namespace {

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The capacity of an artificial arc: above any real capacity or flow (their
// sum is below 2^62, checked), and cap - flow cannot overflow.
constexpr int64_t kInfCap = int64_t{3} << 61;
// A hinted potential is used only below this magnitude, so that artificial
// costs stay below 2^60 and potentials below 2^61 (reduced costs then fit).
constexpr int64_t kMaxHintPi = int64_t{1} << 60;
constexpr int64_t kNoHint = std::numeric_limits<int64_t>::min();

template <typename T>
void Size(std::vector<T>& v, size_t n) {
  ReserveWithSlack(v, n);
  v.resize(n);
}

}  // namespace

void NetworkSimplexSolver::Attach(uint32_t child, uint32_t parent) {
  uint32_t head = first_child_[parent];
  next_sib_[child] = head;
  prev_sib_[child] = kNoId;
  if (head != kNoId) prev_sib_[head] = child;
  first_child_[parent] = child;
  parent_[child] = parent;
}

void NetworkSimplexSolver::Detach(uint32_t child) {
  uint32_t prev = prev_sib_[child], next = next_sib_[child];
  if (prev != kNoId) {
    next_sib_[prev] = next;
  } else {
    first_child_[parent_[child]] = next;
  }
  if (next != kNoId) prev_sib_[next] = prev;
}

void NetworkSimplexSolver::Preorder() {
  order_.clear();
  const uint32_t root = n_;
  order_.push_back(root);
  for (uint32_t x = first_child_[root]; x != kNoId; x = NextInSubtree(x, root)) {
    order_.push_back(x);
  }
}

// Hangs u from the root through its artificial arc, carrying `flow` (> 0:
// out of u's subtree, < 0: into it).
void NetworkSimplexSolver::SetRootArc(uint32_t u, int64_t flow) {
  const uint32_t a = m_ + u;
  pred_[u] = a;
  state_[a] = kTree;
  if (flow >= 0) {
    src_[a] = u, dst_[a] = n_, up_[u] = 1, flow_[a] = flow;
  } else {
    src_[a] = n_, dst_[a] = u, up_[u] = 0, flow_[a] = -flow;
  }
  // Without flow, the cost that keeps u's potential at its hint (an arc up
  // to the root: cost + pi[u] - pi[root] = 0).
  bool hinted = flow == 0 && u < hint_nodes_ && hint_pi_[u] != kNoHint &&
                hint_pi_[u] >= -kMaxHintPi && hint_pi_[u] <= kMaxHintPi;
  cost_[a] = hinted ? -hint_pi_[u] : art_;
  if (hinted && cost_[a] != art_) cheap_art_ = true;
}

void NetworkSimplexSolver::ComputePotentials() {
  const uint32_t root = n_;
  pi_[root] = 0;
  depth_[root] = 0;
  for (uint32_t x = first_child_[root]; x != kNoId; x = NextInSubtree(x, root)) {
    const uint32_t p = parent_[x], e = pred_[x];
    pi_[x] = up_[x] ? pi_[p] - cost_[e] : pi_[p] + cost_[e];
    depth_[x] = depth_[p] + 1;
  }
}

Status NetworkSimplexSolver::Build(const FlowGraph& g) {
  n_ = g.node_id_bound();
  m_ = g.arc_id_bound();
  const uint32_t root = n_, nodes = n_ + 1, arcs = m_ + n_;
  Size(src_, arcs), Size(dst_, arcs), Size(cap_, arcs), Size(cost_, arcs), Size(flow_, arcs);
  Size(state_, arcs);
  Size(parent_, nodes), Size(pred_, nodes), Size(up_, nodes), Size(depth_, nodes);
  Size(first_child_, nodes), Size(next_sib_, nodes), Size(prev_sib_, nodes);
  Size(pi_, nodes), Size(net_, nodes);
  stats_.warm = hint_nodes_ > 0 || hint_arcs_ > 0;
  cheap_art_ = false;

  // Arcs: ends, numbers, and the hinted flow where the id still joins the
  // same two nodes.
  Wide capacity = 0;
  int64_t max_cost = 0;
  for (uint32_t a = 0; a < m_; ++a) {
    if (!g.IsArc(a)) {
      src_[a] = dst_[a] = root;
      cap_[a] = cost_[a] = flow_[a] = 0;
      state_[a] = kTree;  // never priced
      continue;
    }
    const uint32_t t = g.tail(a), h = g.head(a);
    const int64_t k = g.capacity(a), c = g.cost(a);
    src_[a] = t, dst_[a] = h, cap_[a] = k, cost_[a] = c;
    capacity += k;
    max_cost = std::max(max_cost, AbsCost(c));
    int64_t f = 0;
    if (t == h) {
      f = c < 0 ? k : 0;  // a self-loop closes its own cycle
    } else if (a < hint_arcs_ && hint_tail_[a] == t && hint_head_[a] == h) {
      f = std::clamp<int64_t>(hint_flow_[a], 0, k);
    }
    flow_[a] = f;
    state_[a] = kLower;  // settled below
  }
  Wide supply_sum = 0, abs_supply = 0;
  for (uint32_t u = 0; u < n_; ++u) {
    if (!g.IsNode(u)) continue;
    supply_sum += g.supply(u);
    abs_supply += g.supply(u) < 0 ? -Wide{g.supply(u)} : Wide{g.supply(u)};
  }
  COPSE_RETURN_IF_ERROR(
      CheckMagnitudes(max_cost, g.node_count(), capacity + abs_supply, supply_sum));
  art_ = (int64_t{g.node_count()} + 1) * max_cost + 1;

  // Nodes: the hinted parent where the tree arc to it still exists.
  for (uint32_t u = 0; u <= n_; ++u) first_child_[u] = kNoId;
  parent_[root] = pred_[root] = kNoId;
  for (uint32_t u = 0; u < n_; ++u) {
    const uint32_t a = m_ + u;
    src_[a] = u, dst_[a] = root, cap_[a] = kInfCap, cost_[a] = art_, flow_[a] = 0;
    if (!g.IsNode(u)) {
      parent_[u] = kNoId;
      src_[a] = root;
      state_[a] = kTree;  // never priced
      continue;
    }
    state_[a] = kLower;
    net_[u] = g.supply(u);
    // A non-tree artificial arc keeps its direction (its reduced cost is
    // then what it was); a new node's points the way its supply would go.
    if (u < hint_nodes_ ? !hint_art_up_[u] : g.supply(u) < 0) src_[a] = root, dst_[a] = u;
    uint32_t e = u < hint_nodes_ ? hint_pred_[u] : kNoId;
    uint32_t p = e == kNoId ? kNoId : hint_parent_[u];
    bool kept = e < m_ && g.IsArc(e) && src_[e] != dst_[e] &&
                ((src_[e] == u && dst_[e] == p) || (src_[e] == p && dst_[e] == u));
    if (kept) {
      parent_[u] = p, pred_[u] = e, up_[u] = src_[e] == u;
      state_[e] = kTree;
    } else {
      parent_[u] = root, pred_[u] = a, up_[u] = 1;
    }
  }
  net_[root] = 0;
  // Non-tree arcs sit at a bound; their flow is fixed, the tree carries the rest.
  for (uint32_t a = 0; a < m_; ++a) {
    if (state_[a] == kTree) continue;
    int64_t f = flow_[a];
    if (f != cap_[a]) f = 0;
    flow_[a] = f;
    state_[a] = f == 0 ? kLower : kUpper;
    if (f != 0) net_[src_[a]] -= f, net_[dst_[a]] += f;
  }
  for (uint32_t u = 0; u < n_; ++u) {
    if (parent_[u] != kNoId) Attach(u, parent_[u]);
  }

  // Tree flows bottom-up. An arc whose flow would leave its bounds, or that
  // would break strong feasibility (every node can send flow to the root
  // along its tree path), leaves the tree at its bound; its subtree hangs
  // from the root.
  Preorder();
  stats_.cuts = 0;
  for (size_t i = order_.size(); i-- > 1;) {
    const uint32_t u = order_[i], p = parent_[u];
    int64_t s = net_[u];
    if (p == root) {
      SetRootArc(u, s);
      continue;
    }
    const uint32_t e = pred_[u];
    const int64_t f = up_[u] ? s : -s;
    if (f >= 0 && f <= cap_[e] && (up_[u] ? f < cap_[e] : f > 0)) {
      flow_[e] = f;
      net_[p] += s;
      continue;
    }
    const int64_t b = std::clamp<int64_t>(f, 0, cap_[e]);
    flow_[e] = b;
    state_[e] = b == 0 ? kLower : kUpper;
    const int64_t to_parent = up_[u] ? b : -b;
    net_[p] += to_parent;
    Detach(u);
    Attach(u, root);
    SetRootArc(u, s - to_parent);
    ++stats_.cuts;
  }
  stats_.hung = 0;
  for (uint32_t x = first_child_[root]; x != kNoId; x = next_sib_[x]) ++stats_.hung;
  ComputePotentials();
  SettleHung(g);
  block_ = std::max<uint32_t>(10, static_cast<uint32_t>(std::sqrt(static_cast<double>(arcs))));
  // At most the number of arcs, so that every column of the order has an arc.
  const uint32_t skip = std::min(std::max<uint32_t>(arcs / nodes, 3), std::max<uint32_t>(arcs, 1));
  if (skip != skip_ || row_ * skip_ + col_ >= arcs) skip_ = skip, row_ = 0, col_ = 0;
  return Status::Ok();
}

// A subtree hanging from the root through an artificial arc without flow
// can take any potential shift: that arc's cost follows. Each such subtree
// of at most kMaxSettle nodes moves by the smallest shift that satisfies
// every non-tree arc crossing its boundary, when one exists, so that a cost
// change that did not make the flow suboptimal is absorbed without pivots
// (as a waiting task's rising wait cost is).
void NetworkSimplexSolver::SettleHung(const FlowGraph& g) {
  constexpr size_t kMaxSettle = 64;
  const uint32_t root = n_;
  Size(mark_, n_ + 1);  // new entries are 0, below any stamp in use
  stats_.settled = 0;
  for (uint32_t r = first_child_[root]; r != kNoId; r = next_sib_[r]) {
    if (flow_[m_ + r] != 0) continue;
    sub_.clear();
    sub_.push_back(r);
    for (uint32_t x = first_child_[r]; x != kNoId && sub_.size() <= kMaxSettle;
         x = NextInSubtree(x, r)) {
      sub_.push_back(x);
    }
    if (sub_.size() > kMaxSettle) continue;
    if (++stamp_ == 0) {
      std::fill(mark_.begin(), mark_.end(), 0);
      stamp_ = 1;
    }
    for (uint32_t x : sub_) mark_[x] = stamp_;
    int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
    auto bound = [&](uint32_t a, bool x_is_src) {
      if (state_[a] == kTree) return;
      const int64_t rc = cost_[a] + pi_[src_[a]] - pi_[dst_[a]];
      // After the shift s: rc + s if x is the tail, rc - s if the head.
      if ((state_[a] == kLower) == x_is_src) {
        lo = std::max(lo, x_is_src ? -rc : rc);
      } else {
        hi = std::min(hi, x_is_src ? -rc : rc);
      }
    };
    for (uint32_t x : sub_) {
      for (ArcId a = g.first_out(x); a != kNoId; a = g.next_out(a)) {
        if (mark_[dst_[a]] != stamp_) bound(a, true);
      }
      for (ArcId a = g.first_in(x); a != kNoId; a = g.next_in(a)) {
        if (mark_[src_[a]] != stamp_) bound(a, false);
      }
      if (x != r) bound(m_ + x, src_[m_ + x] == x);  // either direction (Build)
    }
    if (lo > hi) continue;
    const int64_t shift = std::clamp<int64_t>(0, lo, hi);
    if (shift == 0) continue;
    const int64_t moved = pi_[r] + shift;
    if (moved < -kMaxHintPi || moved > kMaxHintPi) continue;
    for (uint32_t x : sub_) pi_[x] += shift;
    cost_[m_ + r] = -pi_[r];
    if (cost_[m_ + r] != art_) cheap_art_ = true;
    ++stats_.settled;
  }
}

// Block search: the most violated arc of the first block of about
// sqrt(arcs) arcs that has one, resuming where the last search stopped.
uint32_t NetworkSimplexSolver::Price() {
  const uint32_t arcs = m_ + n_;
  int64_t best = 0;
  uint32_t best_arc = kNoId, left = block_;
  for (uint32_t i = 0; i < arcs; ++i) {
    const uint32_t a = row_ * skip_ + col_;
    if (++row_ * skip_ + col_ >= arcs) {
      row_ = 0;
      if (++col_ == skip_) col_ = 0;
    }
    const int8_t s = state_[a];
    if (s != kTree) {
      const int64_t rc = s * (cost_[a] + pi_[src_[a]] - pi_[dst_[a]]);
      if (rc < best) {
        if (cap_[a] == 0) {
          state_[a] = static_cast<int8_t>(-s);  // at both bounds: no pivot needed
        } else {
          best = rc, best_arc = a;
        }
      }
    }
    if (--left == 0) {
      if (best_arc != kNoId) return best_arc;
      left = block_;
    }
  }
  return best_arc;
}

void NetworkSimplexSolver::Pivot(uint32_t in) {
  const int8_t st = state_[in];
  // The cycle: along `in` from first to second, up from second to the
  // apex (join), down from the apex to first.
  const uint32_t first = st == kLower ? src_[in] : dst_[in];
  const uint32_t second = st == kLower ? dst_[in] : src_[in];
  uint32_t u = first, v = second;
  while (u != v) {
    if (depth_[u] > depth_[v]) {
      u = parent_[u];
    } else if (depth_[v] > depth_[u]) {
      v = parent_[v];
    } else {
      u = parent_[u], v = parent_[v];
    }
  }
  const uint32_t join = u;
  // Leaving arc: the last blocking arc going round from the apex (strict on
  // the first side, non-strict on the second).
  int64_t delta = cap_[in];
  int side = 0;
  uint32_t u_out = kNoId;
  for (u = first; u != join; u = parent_[u]) {
    const uint32_t e = pred_[u];
    const int64_t d = up_[u] ? flow_[e] : cap_[e] - flow_[e];
    if (d < delta) delta = d, u_out = u, side = 1;
  }
  for (u = second; u != join; u = parent_[u]) {
    const uint32_t e = pred_[u];
    const int64_t d = up_[u] ? cap_[e] - flow_[e] : flow_[e];
    if (d <= delta) delta = d, u_out = u, side = 2;
  }
  if (delta > 0) {
    flow_[in] += st * delta;
    for (u = first; u != join; u = parent_[u]) flow_[pred_[u]] += up_[u] ? -delta : delta;
    for (u = second; u != join; u = parent_[u]) flow_[pred_[u]] += up_[u] ? delta : -delta;
  } else {
    ++stats_.degenerate;
  }
  if (side == 0) {  // `in` itself blocks: it moves to its other bound
    state_[in] = static_cast<int8_t>(-st);
    return;
  }
  const uint32_t out = pred_[u_out];
  state_[out] = flow_[out] == 0 ? kLower : kUpper;
  state_[in] = kTree;
  // Re-hang the subtree cut off by `out` from the other end of `in`,
  // reversing the stem from u_in up to u_out.
  const uint32_t u_in = side == 1 ? first : second, v_in = side == 1 ? second : first;
  uint32_t w = u_in, new_parent = v_in, new_arc = in;
  uint8_t new_up = src_[in] == u_in;
  for (;;) {
    const uint32_t old_parent = parent_[w], old_arc = pred_[w];
    const uint8_t old_up = up_[w];
    Detach(w);
    Attach(w, new_parent);
    pred_[w] = new_arc, up_[w] = new_up;
    if (w == u_out) break;
    new_parent = w, new_arc = old_arc, new_up = !old_up, w = old_parent;
  }
  // The subtree's potentials move together; its depths are recomputed.
  const int64_t pi_new = up_[u_in] ? pi_[v_in] - cost_[in] : pi_[v_in] + cost_[in];
  const int64_t sigma = pi_new - pi_[u_in];
  pi_[u_in] = pi_new;
  depth_[u_in] = depth_[v_in] + 1;
  for (uint32_t x = first_child_[u_in]; x != kNoId; x = NextInSubtree(x, u_in)) {
    pi_[x] += sigma;
    depth_[x] = depth_[parent_[x]] + 1;
  }
}

void NetworkSimplexSolver::KeepHints(const FlowGraph& g) {
  hint_arcs_ = m_;
  hint_nodes_ = n_;
  Size(hint_tail_, m_), Size(hint_head_, m_), Size(hint_flow_, m_);
  for (uint32_t a = 0; a < m_; ++a) {
    bool live = g.IsArc(a);
    hint_tail_[a] = live ? src_[a] : kNoId;
    hint_head_[a] = live ? dst_[a] : kNoId;
    hint_flow_[a] = flow_[a];
  }
  Size(hint_parent_, n_), Size(hint_pred_, n_), Size(hint_pi_, n_), Size(hint_art_up_, n_);
  for (uint32_t u = 0; u < n_; ++u) {
    bool real = parent_[u] != kNoId && parent_[u] != n_;
    hint_parent_[u] = real ? parent_[u] : kNoId;
    hint_pred_[u] = real ? pred_[u] : kNoId;
    hint_pi_[u] = parent_[u] != kNoId ? pi_[u] : kNoHint;
    hint_art_up_[u] = dst_[m_ + u] == n_;
  }
}

Status NetworkSimplexSolver::Solve(const FlowGraph& g, FlowSolution* out,
                                   const CancelFlag* cancel) {
  stats_ = Stats{};
  if (IsCancelled(cancel)) return Cancelled("network simplex cancelled");
  auto t0 = Clock::now();
  Status built = Build(g);
  stats_.build_ms = MsSince(t0);
  if (!built.ok()) {
    Reset();
    return built;
  }
  auto t1 = Clock::now();
  for (;;) {
    const uint32_t in = Price();
    if (in == kNoId) {
      bool artificial_flow = false;
      for (uint32_t u = 0; u < n_ && !artificial_flow; ++u) {
        artificial_flow = parent_[u] != kNoId && flow_[m_ + u] != 0;
      }
      if (!artificial_flow) break;
      if (!cheap_art_) {
        stats_.pivot_ms = MsSince(t1);
        KeepHints(g);
        return Infeasible("no feasible flow: the supplies cannot all reach the demands");
      }
      // Stage two: every artificial arc at ART decides feasibility.
      stats_.stage_two = true;
      cheap_art_ = false;
      for (uint32_t u = 0; u < n_; ++u) cost_[m_ + u] = art_;
      ComputePotentials();
      continue;
    }
    Pivot(in);
    if ((++stats_.pivots & 255) == 0 && IsCancelled(cancel)) {
      KeepHints(g);
      return Cancelled("network simplex cancelled");
    }
  }
  stats_.pivot_ms = MsSince(t1);

  auto t2 = Clock::now();
  Wide cost = 0;
  Size(out->flow, m_);
  for (uint32_t a = 0; a < m_; ++a) {
    out->flow[a] = flow_[a];
    cost += Wide{flow_[a]} * cost_[a];
  }
  if (!FitsInt64(cost)) {
    return InvalidArgument("the optimal cost " + WideToString(cost) + " does not fit in 64 bits");
  }
  out->cost = static_cast<int64_t>(cost);
  Size(out->potential, n_);
  for (uint32_t u = 0; u < n_; ++u) out->potential[u] = parent_[u] != kNoId ? -pi_[u] : 0;
  KeepHints(g);
  stats_.emit_ms = MsSince(t2);
  return Status::Ok();
}

}  // namespace copse::flow

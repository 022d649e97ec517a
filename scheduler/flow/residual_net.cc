#include "scheduler/flow/residual_net.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <string>

#include "scheduler/flow/layered.h"
#include "scheduler/flow/reuse.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {

namespace {

// Arcs ahead whose reverse-arc slot Build prefetches (those writes land in
// random rows: hub rows and 12,500 computers' rows at scale (c)).
constexpr uint32_t kPrefetch = 16;

// `total`: the sum of the capacities and of the |supplies|; `supply_sum`: the
// sum of the supplies (both gathered by Build's passes over the graph).
Status CheckMagnitudes(int64_t max_abs_cost, uint32_t nodes, Wide total, Wide supply_sum) {
  if (max_abs_cost > kMaxCostTimesNodes / (int64_t{nodes} + 1)) {
    return InvalidArgument("arc costs up to " + std::to_string(max_abs_cost) +
                           " are too large for a graph of " + std::to_string(nodes) +
                           " nodes (|cost| * (nodes + 1) must stay below 2^60)");
  }
  if (total > kMaxTotalCapacity) {
    return InvalidArgument("capacities and supplies sum beyond 2^62");
  }
  if (supply_sum != 0) {
    return Infeasible("supplies sum to " + WideToString(supply_sum) + ", not 0");
  }
  return Status::Ok();
}

}  // namespace

// One pass over the nodes and one over the arcs: the rows are sized from
// the graph's degree counts, and the magnitudes are gathered while the arcs
// are copied (at scale (c) a separate counting pass over the graph's 64-byte
// arcs took about a third of the build; docs/flow.md, run 6).
Status ResidualNet::Build(const FlowGraph& g, const std::vector<int64_t>* init_flow,
                          bool skip_new_arcs) {
  return BuildImpl(g, init_flow, skip_new_arcs, false);
}

Status ResidualNet::BuildSaturatingNegative(const FlowGraph& g) {
  return BuildImpl(g, nullptr, false, true);
}

Status ResidualNet::BuildImpl(const FlowGraph& g, const std::vector<int64_t>* init_flow,
                              bool skip_new_arcs, bool saturate_negative) {
  n_ = g.node_count();
  ReserveWithSlack(dense_, g.node_id_bound());
  dense_.resize(g.node_id_bound());
  ReserveWithSlack(node_id_, n_);
  node_id_.resize(n_);
  ReserveWithSlack(first_, size_t{n_} + 2);
  first_.resize(size_t{n_} + 2);
  ReserveWithSlack(excess_, n_);
  excess_.resize(n_);
  // first_[u + 1] is where u's row starts; it advances as the row fills, so
  // that afterwards first_[u] is the start of row u.
  first_[0] = 0;
  uint32_t k = 0, residual_arcs = 0;
  Wide total = 0, supply_sum = 0;
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (!g.IsNode(v)) {
      dense_[v] = kNoId;
      continue;
    }
    dense_[v] = k;
    node_id_[k] = v;
    const int64_t s = g.supply(v);
    excess_[k] = s;
    supply_sum += s;
    total += s < 0 ? -Wide{s} : Wide{s};
    first_[k + 1] = residual_arcs;
    residual_arcs += g.residual_degree(v);
    ++k;
  }
  first_[n_ + 1] = residual_arcs;
  ReserveWithSlack(arcs_, residual_arcs);
  arcs_.resize(residual_arcs);
  ReserveWithSlack(arc_pos_, g.arc_id_bound());
  arc_pos_.resize(g.arc_id_bound());
  max_abs_cost_ = 0;
  // While the running total of |supplies| and capacities stays within
  // kMaxTotalCapacity no excess can overflow; past it the build fails anyway.
  bool in_range = total <= kMaxTotalCapacity;
  const ArcId bound = g.arc_id_bound();
  for (ArcId a = 0; a < bound; ++a) {
    if (a + kPrefetch < bound && g.IsArc(a + kPrefetch)) {
      const NodeId ph = g.head(a + kPrefetch);
      if (g.IsNode(ph)) __builtin_prefetch(&arcs_[first_[dense_[ph] + 1]], 1);
    }
    arc_pos_[a] = kNoId;
    if (!g.IsArc(a)) continue;
    const int64_t cap = g.capacity(a), cost = g.cost(a);
    max_abs_cost_ = std::max(max_abs_cost_, std::abs(cost));
    total += cap;
    in_range = in_range && total <= kMaxTotalCapacity;
    const NodeId tail = g.tail(a), head = g.head(a);
    if (tail == head) continue;
    const uint32_t t = dense_[tail], h = dense_[head];
    const uint32_t fa = first_[t + 1]++;
    const uint32_t ra = first_[h + 1]++;
    int64_t f = saturate_negative && cost < 0 ? cap : 0;
    if (init_flow != nullptr && a < init_flow->size() && !(skip_new_arcs && g.IsNewArc(a))) {
      f = std::clamp<int64_t>((*init_flow)[a], 0, cap);
    }
    arcs_[fa] = ResidualArc{cap - f, cost, h, ra};
    arcs_[ra] = ResidualArc{f, -cost, t, fa};
    if (f != 0 && in_range) {
      excess_[t] -= f;
      excess_[h] += f;
    }
    arc_pos_[a] = fa;
  }
  return CheckMagnitudes(max_abs_cost_, n_, total, supply_sum);
}

// The flow of a graph arc is its capacity less the residual capacity of its
// forward arc: one read of the forward arc, which lies in its tail's row (in
// arc-id order for arcs added together), instead of a second, random read of
// the reverse arc in its head's row.
Status ResidualNet::Extract(const FlowGraph& g, const std::vector<int64_t>& pot,
                            FlowSolution* out) const {
  const uint32_t arcs = g.arc_id_bound();
  ReserveWithSlack(out->flow, arcs);
  out->flow.resize(arcs);
  AssignReuse(out->potential, g.node_id_bound(), int64_t{0});
  Wide cost = 0;
  for (ArcId a = 0; a < arcs; ++a) {
    int64_t f = 0;
    if (g.IsArc(a)) {
      const int64_t cap = g.capacity(a), c = g.cost(a);
      const uint32_t pos = arc_pos_[a];
      f = pos == kNoId ? (c < 0 ? cap : 0) : cap - arcs_[pos].resid;
      if (f != 0) cost += Wide{f} * c;
    }
    out->flow[a] = f;
  }
  for (uint32_t u = 0; u < n_; ++u) out->potential[node_id_[u]] = pot[u];
  if (!FitsInt64(cost)) {
    return InvalidArgument("the optimal cost " + WideToString(cost) + " does not fit in 64 bits");
  }
  out->cost = static_cast<int64_t>(cost);
  return Status::Ok();
}

size_t ResidualNet::MemoryBytes() const {
  return first_.capacity() * 4 + arcs_.capacity() * sizeof(ResidualArc) + excess_.capacity() * 8 +
         dense_.capacity() * 4 + node_id_.capacity() * 4 + arc_pos_.capacity() * 4;
}

Status MakeFeasible(ResidualNet& net, const CancelFlag* cancel) {
  thread_local internal::LayerWorkspace ws;  // kept between calls (reuse.h)
  thread_local std::vector<uint32_t> sources;
  ws.Resize(net.node_count());
  auto all = [](uint32_t, uint32_t) { return true; };
  while (true) {
    if (IsCancelled(cancel)) return Cancelled("solve cancelled");
    sources.clear();
    for (uint32_t u = 0; u < net.node_count(); ++u) {
      if (net.excess(u) > 0) sources.push_back(u);
    }
    if (sources.empty()) return Status::Ok();
    if (!internal::BuildLevels(net, sources, ws, all)) {
      return Infeasible("no feasible flow: some supply cannot reach any demand");
    }
    internal::BlockingFlow(net, sources, ws, all);
  }
}

bool FixPotentials(const ResidualNet& net, std::vector<int64_t>& pot, int64_t tolerance,
                   uint64_t max_scans, const CancelFlag* cancel,
                   const std::vector<uint32_t>* start) {
  const uint32_t n = net.node_count();
  // Kept per thread between calls (reuse.h explains why).
  thread_local std::vector<uint32_t> queue;
  thread_local std::vector<uint8_t> queued;
  queue.clear();
  AssignReuse(queued, n, uint8_t{0});
  if (start == nullptr) {
    queue.resize(n);
    for (uint32_t u = 0; u < n; ++u) queue[u] = u;
    std::fill(queued.begin(), queued.end(), 1);
  } else {
    for (uint32_t u : *start) {
      if (!queued[u]) {
        queued[u] = 1;
        queue.push_back(u);
      }
    }
  }
  size_t head = 0;
  uint64_t scans = 0;
  while (head < queue.size()) {
    uint32_t u = queue[head++];
    queued[u] = 0;
    if (head > n && head * 2 > queue.size()) {  // compact the FIFO
      queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    if (max_scans != 0 && ++scans > max_scans) return false;
    if ((scans & 0xfff) == 0 && IsCancelled(cancel)) return false;
    int64_t best = pot[u];
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      const ResidualArc& r = net.arc(a);
      if (r.resid > 0) best = std::min(best, r.cost + pot[r.head] + tolerance);
    }
    if (best >= pot[u]) continue;
    pot[u] = best;
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      const ResidualArc& r = net.arc(a);
      if (net.arc(r.rev).resid > 0 && !queued[r.head]) {
        queued[r.head] = 1;
        queue.push_back(r.head);
      }
    }
  }
  return true;
}

int64_t SaturateNegativeArcs(ResidualNet& net, const std::vector<int64_t>& pot) {
  int64_t worst = 0;
  for (uint32_t u = 0; u < net.node_count(); ++u) {
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      const ResidualArc& r = net.arc(a);
      if (r.resid <= 0) continue;
      int64_t rc = r.cost - pot[u] + pot[r.head];
      if (rc < 0) {
        worst = std::max(worst, -rc);
        net.Push(a, r.resid);
      }
    }
  }
  return worst;
}

}  // namespace copse::flow

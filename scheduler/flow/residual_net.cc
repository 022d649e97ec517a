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

Status ResidualNet::Build(const FlowGraph& g, const std::vector<int64_t>* init_flow,
                          bool skip_new_arcs) {
  n_ = g.node_count();
  AssignReuse(dense_, g.node_id_bound(), kNoId);
  ReserveWithSlack(node_id_, n_);
  node_id_.resize(n_);
  uint32_t k = 0;
  Wide total = 0, supply_sum = 0;
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (!g.IsNode(v)) continue;
    dense_[v] = k;
    node_id_[k++] = v;
    const int64_t s = g.supply(v);
    supply_sum += s;
    total += s < 0 ? -Wide{s} : Wide{s};
  }
  AssignReuse(first_, size_t{n_} + 2, 0u);
  max_abs_cost_ = 0;
  uint32_t residual_arcs = 0;
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!g.IsArc(a)) continue;
    max_abs_cost_ = std::max(max_abs_cost_, std::abs(g.cost(a)));
    total += g.capacity(a);
    if (g.tail(a) == g.head(a)) continue;
    ++first_[dense_[g.tail(a)] + 2];
    ++first_[dense_[g.head(a)] + 2];
    residual_arcs += 2;
  }
  COPSE_RETURN_IF_ERROR(CheckMagnitudes(max_abs_cost_, n_, total, supply_sum));
  for (uint32_t u = 0; u < n_; ++u) first_[u + 2] += first_[u + 1];
  ReserveWithSlack(arcs_, residual_arcs);
  arcs_.resize(residual_arcs);
  AssignReuse(arc_pos_, g.arc_id_bound(), kNoId);
  ReserveWithSlack(excess_, n_);
  excess_.resize(n_);
  for (uint32_t u = 0; u < n_; ++u) excess_[u] = g.supply(node_id_[u]);
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!g.IsArc(a) || g.tail(a) == g.head(a)) continue;
    uint32_t t = dense_[g.tail(a)], h = dense_[g.head(a)];
    uint32_t fa = first_[t + 1]++;
    uint32_t ra = first_[h + 1]++;
    int64_t f = 0;
    if (init_flow != nullptr && a < init_flow->size() && !(skip_new_arcs && g.IsNewArc(a))) {
      f = std::clamp<int64_t>((*init_flow)[a], 0, g.capacity(a));
    }
    arcs_[fa] = ResidualArc{g.capacity(a) - f, g.cost(a), h, ra};
    arcs_[ra] = ResidualArc{f, -g.cost(a), t, fa};
    excess_[t] -= f;
    excess_[h] += f;
    arc_pos_[a] = fa;
  }
  return Status::Ok();
}

Status ResidualNet::Extract(const FlowGraph& g, const std::vector<int64_t>& pot,
                            FlowSolution* out) const {
  AssignReuse(out->flow, g.arc_id_bound(), int64_t{0});
  AssignReuse(out->potential, g.node_id_bound(), int64_t{0});
  Wide cost = 0;
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!g.IsArc(a)) continue;
    int64_t f;
    if (arc_pos_[a] == kNoId) {
      f = g.cost(a) < 0 ? g.capacity(a) : 0;
    } else {
      f = arcs_[arcs_[arc_pos_[a]].rev].resid;
    }
    out->flow[a] = f;
    cost += Wide{f} * g.cost(a);
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

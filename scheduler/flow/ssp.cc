#include "scheduler/flow/ssp.h"

#include <algorithm>
#include <functional>

#include "scheduler/flow/reuse.h"

namespace copse::flow {

void ShortestPathEngine::NextStamp(uint32_t n) {
  if (dist_.size() < n) {
    ReserveWithSlack(dist_, n);
    ReserveWithSlack(seen_, n);
    ReserveWithSlack(settled_, n);
    dist_.resize(n);
    seen_.assign(n, 0);
    settled_.assign(n, 0);
    stamp_ = 0;
  }
  if (++stamp_ == 0) {
    std::fill(seen_.begin(), seen_.end(), 0);
    std::fill(settled_.begin(), settled_.end(), 0);
    stamp_ = 1;
  }
}

bool ShortestPathEngine::Dijkstra(const ResidualNet& net, std::vector<int64_t>& pot,
                                  int64_t total_excess, const CancelFlag* cancel) {
  NextStamp(net.node_count());
  heap_.clear();
  settled_list_.clear();
  auto cmp = std::greater<>();
  for (uint32_t s : sources_) {
    dist_[s] = 0;
    seen_[s] = stamp_;
    heap_.emplace_back(0, s);
  }
  std::make_heap(heap_.begin(), heap_.end(), cmp);
  int64_t reached = 0;
  int64_t radius = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    auto [d, u] = heap_.back();
    heap_.pop_back();
    if (settled_[u] == stamp_ || d > dist_[u]) continue;
    settled_[u] = stamp_;
    settled_list_.push_back(u);
    radius = d;
    if ((settled_list_.size() & 0xffff) == 0 && IsCancelled(cancel)) return true;
    if (net.excess(u) < 0) {
      reached += -net.excess(u);
      if (reached >= total_excess) break;
    }
    const int64_t pu = pot[u];
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      const ResidualArc& r = net.arc(a);
      if (r.resid <= 0) continue;
      uint32_t v = r.head;
      if (settled_[v] == stamp_) continue;
      int64_t nd = d + r.cost - pu + pot[v];
      if (seen_[v] != stamp_ || nd < dist_[v]) {
        seen_[v] = stamp_;
        dist_[v] = nd;
        heap_.emplace_back(nd, v);
        std::push_heap(heap_.begin(), heap_.end(), cmp);
      }
    }
  }
  stats_.settled += settled_list_.size();
  if (reached == 0) return false;
  for (uint32_t u : settled_list_) pot[u] += radius - dist_[u];
  return true;
}

void ShortestPathEngine::Augment(ResidualNet& net, const std::vector<int64_t>& pot) {
  layers_.Resize(net.node_count());
  auto admissible = [&](uint32_t u, uint32_t a) {
    const ResidualArc& r = net.arc(a);
    return settled_[r.head] == stamp_ && r.cost - pot[u] + pot[r.head] == 0;
  };
  while (internal::BuildLevels(net, sources_, layers_, admissible)) {
    internal::BlockingFlow(net, sources_, layers_, admissible);
  }
  layers_.Clear();
}

Status ShortestPathEngine::Route(ResidualNet& net, std::vector<int64_t>& pot,
                                 const CancelFlag* cancel) {
  stats_ = Stats{};
  sources_.clear();
  for (uint32_t u = 0; u < net.node_count(); ++u) {
    if (net.excess(u) > 0) sources_.push_back(u);
  }
  while (true) {
    int64_t total = 0;
    size_t k = 0;
    for (uint32_t s : sources_) {
      if (net.excess(s) > 0) {
        sources_[k++] = s;
        total += net.excess(s);
      }
    }
    sources_.resize(k);
    if (k == 0) return Status::Ok();
    if (IsCancelled(cancel)) return Cancelled("solve cancelled");
    ++stats_.phases;
    if (!Dijkstra(net, pot, total, cancel)) {
      return Infeasible("no feasible flow: some supply cannot reach any demand");
    }
    if (IsCancelled(cancel)) return Cancelled("solve cancelled");
    Augment(net, pot);
  }
}

Status SuccessiveShortestPathSolver::Solve(const FlowGraph& graph, FlowSolution* out,
                                           const CancelFlag* cancel) {
  COPSE_RETURN_IF_ERROR(net_.BuildSaturatingNegative(graph));
  std::vector<int64_t> pot(net_.node_count(), 0);
  COPSE_RETURN_IF_ERROR(engine_.Route(net_, pot, cancel));
  return net_.Extract(graph, pot, out);
}

}  // namespace copse::flow

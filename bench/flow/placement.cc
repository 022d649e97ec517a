#include "bench/flow/placement.h"

#include <algorithm>

namespace copse::flow {

std::vector<Placement> ExtractPlacements(const FlowGraph& g, const std::vector<int64_t>& flow,
                                         const std::vector<NodeId>& machines,
                                         const std::vector<uint8_t>& is_task) {
  std::vector<std::vector<NodeId>> tokens(g.node_id_bound());
  std::vector<int64_t> moved(g.arc_id_bound(), 0);
  std::vector<uint8_t> queued(g.node_id_bound(), 0);
  std::vector<NodeId> queue;
  std::vector<Placement> out;
  for (NodeId m : machines) {
    if (!g.IsNode(m)) continue;
    int64_t inflow = 0;
    for (ArcId a = g.first_in(m); a != kNoId; a = g.next_in(a)) inflow += flow[a];
    tokens[m].assign(static_cast<size_t>(std::max<int64_t>(inflow, 0)), m);
    if (!queued[m]) {
      queued[m] = 1;
      queue.push_back(m);
    }
  }
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    NodeId u = queue[qi];
    queued[u] = 0;
    std::vector<NodeId>& have = tokens[u];
    if (u < is_task.size() && is_task[u]) {
      for (NodeId m : have) out.push_back({u, m});
      have.clear();
      continue;
    }
    for (ArcId a = g.first_in(u); a != kNoId && !have.empty(); a = g.next_in(a)) {
      int64_t k = std::min<int64_t>(flow[a] - moved[a], static_cast<int64_t>(have.size()));
      if (k <= 0) continue;
      NodeId w = g.tail(a);
      std::vector<NodeId>& dst = tokens[w];
      dst.insert(dst.end(), have.end() - k, have.end());
      have.resize(have.size() - static_cast<size_t>(k));
      moved[a] += k;
      if (!queued[w]) {
        queued[w] = 1;
        queue.push_back(w);
      }
    }
  }
  return out;
}

}  // namespace copse::flow

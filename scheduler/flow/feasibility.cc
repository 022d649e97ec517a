#include "scheduler/flow/feasibility.h"

namespace copse::flow {

Status MakeFeasible(ResidualNet& net, FeasibilityWorkspace& ws, const CancelFlag* cancel) {
  ws.layers.Resize(net.node_count());
  auto all = [](uint32_t, uint32_t) { return true; };
  while (true) {
    if (IsCancelled(cancel)) return Cancelled("solve cancelled");
    ws.sources.clear();
    for (uint32_t u = 0; u < net.node_count(); ++u) {
      if (net.excess(u) > 0) ws.sources.push_back(u);
    }
    if (ws.sources.empty()) return Status::Ok();
    if (!internal::BuildLevels(net, ws.sources, ws.layers, all)) {
      return Infeasible("no feasible flow: some supply cannot reach any demand");
    }
    internal::BlockingFlow(net, ws.sources, ws.layers, all);
  }
}

}  // namespace copse::flow

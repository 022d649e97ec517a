#include "scheduler/flow/verify.h"

#include <string>
#include <vector>

#include "scheduler/flow/wide.h"

namespace copse::flow {

namespace {

Status CheckArcs(const FlowGraph& g, const FlowSolution& s, std::vector<Wide>& balance,
                 Wide& cost) {
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!g.IsArc(a)) continue;
    int64_t f = s.flow[a];
    if (f < 0 || f > g.capacity(a)) {
      return Internal("arc " + std::to_string(a) + " has flow " + std::to_string(f) +
                      " outside [0, " + std::to_string(g.capacity(a)) + "]");
    }
    NodeId u = g.tail(a), v = g.head(a);
    Wide rc = Wide{g.cost(a)} - s.potential[u] + s.potential[v];
    if ((f < g.capacity(a) && rc < 0) || (f > 0 && rc > 0)) {
      return Internal("arc " + std::to_string(a) + " (flow " + std::to_string(f) + " of " +
                      std::to_string(g.capacity(a)) + ") has reduced cost " + WideToString(rc) +
                      ": not optimal");
    }
    balance[u] -= f;
    balance[v] += f;
    cost += Wide{f} * g.cost(a);
  }
  return Status::Ok();
}

}  // namespace

Status CheckSolution(const FlowGraph& g, const FlowSolution& s) {
  if (s.flow.size() < g.arc_id_bound() || s.potential.size() < g.node_id_bound()) {
    return Internal("solution vectors are smaller than the graph's id bounds");
  }
  std::vector<Wide> balance(g.node_id_bound(), 0);
  Wide cost = 0;
  COPSE_RETURN_IF_ERROR(CheckArcs(g, s, balance, cost));
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (!g.IsNode(v)) continue;
    if (balance[v] + g.supply(v) != 0) {
      return Internal("node " + std::to_string(v) + " is out of balance by " +
                      WideToString(balance[v] + g.supply(v)));
    }
  }
  if (cost != s.cost) {
    return Internal("reported cost " + std::to_string(s.cost) + " but the flow costs " +
                    WideToString(cost));
  }
  return Status::Ok();
}

}  // namespace copse::flow

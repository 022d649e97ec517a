// Compiled as C++17 (see the header).
#include "scheduler/flow/lemon/lemon_reference.h"

#include <lemon/capacity_scaling.h>
#include <lemon/cost_scaling.h>
#include <lemon/network_simplex.h>
#include <lemon/smart_graph.h>

#include <chrono>

namespace copse::flow::lemon_ref {

namespace {

using Digraph = lemon::SmartDigraph;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Model {
  Digraph g;
  Digraph::ArcMap<int64_t> cap{g};
  Digraph::ArcMap<int64_t> cost{g};
  Digraph::NodeMap<int64_t> supply{g};
  std::vector<Digraph::Arc> arc_of;  // by ArcId
  int64_t supply_sum = 0;
};

void BuildModel(const FlowGraph& fg, Model& m) {
  std::vector<Digraph::Node> node_of(fg.node_id_bound());
  m.g.reserveNode(static_cast<int>(fg.node_count()));
  m.g.reserveArc(static_cast<int>(fg.arc_count()));
  for (NodeId v = 0; v < fg.node_id_bound(); ++v) {
    if (!fg.IsNode(v)) continue;
    node_of[v] = m.g.addNode();
    m.supply[node_of[v]] = fg.supply(v);
    m.supply_sum += fg.supply(v);
  }
  m.arc_of.assign(fg.arc_id_bound(), lemon::INVALID);
  for (ArcId a = 0; a < fg.arc_id_bound(); ++a) {
    if (!fg.IsArc(a)) continue;
    Digraph::Arc e = m.g.addArc(node_of[fg.tail(a)], node_of[fg.head(a)]);
    m.cap[e] = fg.capacity(a);
    m.cost[e] = fg.cost(a);
    m.arc_of[a] = e;
  }
}

template <typename Alg>
void Collect(const FlowGraph& fg, const Model& m, Alg& alg, LemonResult& r) {
  r.cost = alg.template totalCost<int64_t>();
  r.flow.assign(fg.arc_id_bound(), 0);
  for (ArcId a = 0; a < fg.arc_id_bound(); ++a) {
    if (fg.IsArc(a)) r.flow[a] = alg.flow(m.arc_of[a]);
  }
}

template <typename Alg, typename Run>
void RunAlg(const FlowGraph& fg, Model& m, LemonResult& r, Run run) {
  Alg alg(m.g);
  alg.upperMap(m.cap).costMap(m.cost).supplyMap(m.supply);
  auto t = Clock::now();
  auto status = run(alg);
  r.solve_ms = MsSince(t);
  r.feasible = status == Alg::OPTIMAL;
  if (r.feasible) Collect(fg, m, alg, r);
}

}  // namespace

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kNetworkSimplex:
      return "lemon_network_simplex";
    case Algorithm::kCostScaling:
      return "lemon_cost_scaling";
    case Algorithm::kCapacityScaling:
      return "lemon_capacity_scaling";
  }
  return "?";
}

LemonResult Solve(const FlowGraph& fg, Algorithm algorithm) {
  LemonResult r;
  auto t = Clock::now();
  Model m;
  BuildModel(fg, m);
  r.build_ms = MsSince(t);
  if (m.supply_sum != 0) return r;
  switch (algorithm) {
    case Algorithm::kNetworkSimplex: {
      using NS = lemon::NetworkSimplex<Digraph, int64_t, int64_t>;
      // Supplies sum to zero, so LEMON's default GEQ constraints are equalities.
      RunAlg<NS>(fg, m, r, [](NS& ns) { return ns.run(); });
      break;
    }
    case Algorithm::kCostScaling: {
      using CS = lemon::CostScaling<Digraph, int64_t, int64_t>;
      RunAlg<CS>(fg, m, r, [](CS& cs) { return cs.run(); });
      break;
    }
    case Algorithm::kCapacityScaling: {
      using CP = lemon::CapacityScaling<Digraph, int64_t, int64_t>;
      RunAlg<CP>(fg, m, r, [](CP& cp) { return cp.run(); });
      break;
    }
  }
  return r;
}

}  // namespace copse::flow::lemon_ref

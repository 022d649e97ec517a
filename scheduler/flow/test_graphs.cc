#include "scheduler/flow/test_graphs.h"

#include <algorithm>
#include <vector>

namespace copse::flow::testing {

namespace {

struct ShapeParams {
  double arcs_per_node;
  int64_t max_cap;
  int64_t min_cost, max_cost;
  double zero_cap_share;
};

ShapeParams ParamsFor(Shape s) {
  switch (s) {
    case Shape::kSparse:
      return {2.5, 20, 0, 100, 0};
    case Shape::kDense:
      return {12, 10, 0, 1000, 0};
    case Shape::kZeroCostCycles:
      return {4, 15, 0, 0, 0};
    case Shape::kZeroCapacity:
      return {4, 10, -20, 50, 0.3};
    case Shape::kNegativeCosts:
      return {4, 10, -1000, 1000, 0};
    case Shape::kLargeCosts:
      return {4, 10, -(int64_t{1} << 40), int64_t{1} << 40, 0};
    case Shape::kBipartite:
      return {0, 1, 0, 500, 0};
    case Shape::kInfeasible:
      return {2, 5, 0, 100, 0};
  }
  return {3, 10, 0, 100, 0};
}

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Sets supplies to those of a random flow on the current arcs.
void SuppliesFromRandomFlow(FlowGraph& g, std::mt19937_64& rng) {
  std::vector<int64_t> bal(g.node_id_bound(), 0);
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!g.IsArc(a) || Uniform(rng, 0, 2) == 0) continue;
    int64_t f = Uniform(rng, 0, g.capacity(a));
    bal[g.tail(a)] += f;
    bal[g.head(a)] -= f;
  }
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (g.IsNode(v)) g.SetSupply(v, bal[v]);
  }
}

FlowGraph BipartiteGraph(int nodes, std::mt19937_64& rng) {
  // Tasks -> machines -> sink, with an "unscheduled" bypass: an assignment shape.
  FlowGraph g;
  int tasks = std::max(2, nodes * 2 / 3), machines = std::max(1, nodes / 3);
  NodeId sink = g.AddNode(-tasks);
  NodeId unsched = g.AddNode(0);
  g.AddArc(unsched, sink, tasks, 0);
  std::vector<NodeId> ms;
  for (int i = 0; i < machines; ++i) {
    ms.push_back(g.AddNode(0));
    g.AddArc(ms.back(), sink, Uniform(rng, 1, 2), 0);
  }
  for (int t = 0; t < tasks; ++t) {
    NodeId v = g.AddNode(1);
    g.AddArc(v, unsched, 1, Uniform(rng, 0, 500));
    for (int k = Uniform(rng, 1, 4); k > 0; --k) {
      g.AddArc(v, ms[Uniform(rng, 0, machines - 1)], 1, Uniform(rng, 0, 400) - 100);
    }
  }
  return g;
}

}  // namespace

std::string ShapeName(Shape s) {
  static const char* kNames[] = {"sparse",   "dense",       "zero_cost_cycles", "zero_capacity",
                                 "negative", "large_costs", "bipartite",        "infeasible"};
  return kNames[static_cast<int>(s)];
}

FlowGraph RandomGraph(Shape shape, int nodes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (shape == Shape::kBipartite) return BipartiteGraph(nodes, rng);
  ShapeParams p = ParamsFor(shape);
  FlowGraph g;
  std::vector<NodeId> ids;
  for (int i = 0; i < nodes; ++i) ids.push_back(g.AddNode(0));
  int arcs = static_cast<int>(p.arcs_per_node * nodes);
  for (int i = 0; i < arcs; ++i) {
    NodeId u = ids[Uniform(rng, 0, nodes - 1)], v = ids[Uniform(rng, 0, nodes - 1)];
    int64_t cap = std::uniform_real_distribution<double>(0, 1)(rng) < p.zero_cap_share
                      ? 0
                      : Uniform(rng, 0, p.max_cap);
    g.AddArc(u, v, cap, Uniform(rng, p.min_cost, p.max_cost));
  }
  SuppliesFromRandomFlow(g, rng);
  if (shape == Shape::kInfeasible) {
    // An isolated node that must send flow: no feasible flow exists.
    NodeId lonely = g.AddNode(3);
    g.SetSupply(ids[0], g.supply(ids[0]) - 3);
    (void)lonely;
  }
  return g;
}

void RandomChanges(FlowGraph& g, int count, std::mt19937_64& rng, bool keep_feasible) {
  std::vector<NodeId> nodes;
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (g.IsNode(v)) nodes.push_back(v);
  }
  auto random_arc = [&]() -> ArcId {
    for (int tries = 0; tries < 50 && g.arc_id_bound() > 0; ++tries) {
      ArcId a = static_cast<ArcId>(Uniform(rng, 0, g.arc_id_bound() - 1));
      if (g.IsArc(a)) return a;
    }
    return kNoId;
  };
  for (int i = 0; i < count; ++i) {
    int kind = static_cast<int>(Uniform(rng, 0, 9));
    ArcId a = random_arc();
    if (kind <= 4 && a != kNoId) {
      g.SetCost(a, g.cost(a) + Uniform(rng, -50, 50));
    } else if (kind == 5 && a != kNoId) {
      g.SetCapacity(a, Uniform(rng, 0, 12));
    } else if (kind == 6 && a != kNoId) {
      g.RemoveArc(a);
    } else if (kind == 7 && nodes.size() > 1) {
      g.AddArc(nodes[Uniform(rng, 0, nodes.size() - 1)], nodes[Uniform(rng, 0, nodes.size() - 1)],
               Uniform(rng, 0, 10), Uniform(rng, -20, 200));
    } else if (kind == 8) {
      NodeId v = g.AddNode(0);
      for (int k = 0; k < 3; ++k) {
        NodeId w = nodes[Uniform(rng, 0, nodes.size() - 1)];
        if (k % 2 == 0) {
          g.AddArc(v, w, Uniform(rng, 1, 5), Uniform(rng, 0, 100));
        } else {
          g.AddArc(w, v, Uniform(rng, 1, 5), Uniform(rng, 0, 100));
        }
      }
      nodes.push_back(v);
    } else if (nodes.size() > 4) {
      size_t k = Uniform(rng, 0, nodes.size() - 1);
      g.RemoveNode(nodes[k]);
      nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  if (keep_feasible) {
    SuppliesFromRandomFlow(g, rng);
  } else {
    int64_t sum = 0;
    for (NodeId v : nodes) sum += g.supply(v);
    if (!nodes.empty()) g.SetSupply(nodes[0], g.supply(nodes[0]) - sum);
  }
}

void RandomGroupShifts(FlowGraph& g, int count, std::mt19937_64& rng) {
  while (g.group_count() < 3) g.AddCostGroup();
  for (int i = 0; i < count && g.arc_id_bound() > 0; ++i) {
    ArcId a = static_cast<ArcId>(Uniform(rng, 0, g.arc_id_bound() - 1));
    if (g.IsArc(a)) g.SetCostGroup(a, static_cast<GroupId>(Uniform(rng, 0, 3)));
  }
  for (GroupId k = 1; k <= g.group_count(); ++k) {
    if (Uniform(rng, 0, 3) != 0) g.ShiftCostGroup(k, Uniform(rng, -40, 40));
  }
}

}  // namespace copse::flow::testing

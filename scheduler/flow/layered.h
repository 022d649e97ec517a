// Internal helpers for the solvers: breadth-first levels and blocking flows
// on a subgraph of a ResidualNet picked by a predicate (Dinic's algorithm).
// Used by MakeFeasible (all residual arcs) and by successive shortest paths
// (zero-reduced-cost arcs inside the settled region). Header-only because the
// predicate is a template parameter. Thread-safety: none.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/reuse.h"

namespace copse::flow::internal {

struct LayerWorkspace {
  std::vector<int32_t> level;  // -1: not reached; -2: dead end
  std::vector<uint32_t> cur;   // current arc per node
  std::vector<uint32_t> touched;
  std::vector<uint32_t> queue;
  std::vector<uint32_t> path;

  void Resize(uint32_t n) {
    if (level.size() < n) {
      AssignReuse(level, n, -1);
      AssignReuse(cur, n, 0u);
    }
  }
  void Clear() {
    for (uint32_t v : touched) level[v] = -1;
    touched.clear();
  }
};

// Levels from `sources` (nodes with positive excess) over residual arcs with
// adm(u, a) true. Returns true if a node with negative excess was reached.
template <typename Adm>
bool BuildLevels(const ResidualNet& net, const std::vector<uint32_t>& sources, LayerWorkspace& ws,
                 Adm adm) {
  ws.Clear();
  ws.queue.clear();
  for (uint32_t s : sources) {
    if (net.excess(s) <= 0 || ws.level[s] != -1) continue;
    ws.level[s] = 0;
    ws.touched.push_back(s);
    ws.queue.push_back(s);
  }
  bool reached = false;
  for (size_t qi = 0; qi < ws.queue.size(); ++qi) {
    uint32_t u = ws.queue[qi];
    ws.cur[u] = net.begin(u);
    if (net.excess(u) < 0) {
      reached = true;
      continue;  // paths end at the first deficit
    }
    for (uint32_t a = net.begin(u), e = net.end(u); a < e; ++a) {
      const ResidualArc& r = net.arc(a);
      if (r.resid <= 0 || ws.level[r.head] != -1 || !adm(u, a)) continue;
      ws.level[r.head] = ws.level[u] + 1;
      ws.touched.push_back(r.head);
      ws.queue.push_back(r.head);
    }
  }
  return reached;
}

// Augments along level-increasing admissible paths from the sources to
// deficit nodes until none is left (a blocking flow). Returns the units moved.
template <typename Adm>
int64_t BlockingFlow(ResidualNet& net, const std::vector<uint32_t>& sources, LayerWorkspace& ws,
                     Adm adm) {
  int64_t moved = 0;
  for (uint32_t s : sources) {
    if (ws.level[s] != 0) continue;
    while (net.excess(s) > 0) {
      ws.path.clear();
      uint32_t u = s;
      bool found = false;
      while (true) {
        if (u != s && net.excess(u) < 0) {
          found = true;
          break;
        }
        uint32_t e = net.end(u);
        uint32_t& c = ws.cur[u];
        while (c < e) {
          const ResidualArc& r = net.arc(c);
          if (r.resid > 0 && ws.level[r.head] == ws.level[u] + 1 && adm(u, c)) break;
          ++c;
        }
        if (c < e) {
          ws.path.push_back(c);
          u = net.arc(c).head;
          continue;
        }
        ws.level[u] = -2;
        if (ws.path.empty()) break;
        u = net.tail(ws.path.back());
        ws.path.pop_back();
      }
      if (!found) break;
      int64_t delta = std::min(net.excess(s), -net.excess(u));
      for (uint32_t a : ws.path) delta = std::min(delta, net.arc(a).resid);
      for (uint32_t a : ws.path) net.Push(a, delta);
      moved += delta;
    }
  }
  return moved;
}

}  // namespace copse::flow::internal

// Successive shortest paths (primal-dual) for min-cost flow.
//
// ShortestPathEngine routes the excess of a pseudoflow that already satisfies
// reduced-cost optimality: each phase runs one Dijkstra from all excess nodes
// at once over reduced costs, stopping as soon as the deficit nodes it has
// reached can absorb all the excess, raises the potentials of the settled
// nodes, and then augments along zero-reduced-cost paths inside the settled
// region (a blocking flow). The incremental solver uses the same engine after
// repairing the previous solution.
//
// SuccessiveShortestPathSolver is the from-scratch solver: zero potentials,
// negative-cost arcs saturated, then the engine.
// Thread-safety: one thread per object.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/flow/layered.h"
#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/solver.h"

namespace copse::flow {

class ShortestPathEngine {
 public:
  struct Stats {
    uint64_t phases = 0;
    uint64_t settled = 0;
  };

  // Routes all excess to deficits, keeping every residual reduced cost >= 0.
  // REQUIRES: every residual arc has reduced cost >= 0 under `pot`.
  // Returns kInfeasible if some excess cannot reach any deficit.
  Status Route(ResidualNet& net, std::vector<int64_t>& pot, const CancelFlag* cancel);

  const Stats& stats() const { return stats_; }

 private:
  // One Dijkstra phase; returns false if no deficit was reachable.
  bool Dijkstra(const ResidualNet& net, std::vector<int64_t>& pot, int64_t total_excess,
                const CancelFlag* cancel);
  void Augment(ResidualNet& net, const std::vector<int64_t>& pot);
  void NextStamp(uint32_t n);

  std::vector<int64_t> dist_;
  std::vector<uint32_t> seen_;     // == stamp_: dist_ is set this phase
  std::vector<uint32_t> settled_;  // == stamp_: settled this phase
  uint32_t stamp_ = 0;
  std::vector<std::pair<int64_t, uint32_t>> heap_;
  std::vector<uint32_t> settled_list_;
  std::vector<uint32_t> sources_;
  internal::LayerWorkspace layers_;
  Stats stats_;
};

class SuccessiveShortestPathSolver final : public FlowSolver {
 public:
  std::string_view name() const override { return "ssp"; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;

 private:
  ResidualNet net_;
  ShortestPathEngine engine_;
};

}  // namespace copse::flow

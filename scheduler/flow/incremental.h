// IncrementalSolver: re-solves after a batch of changes starting from the
// previous optimal flow and potentials instead of from scratch (Firmament
// §5.2, §6.2).
//
// The first solve (or any solve without a previous solution) runs cost
// scaling or relaxation (IncrementalOptions::cold_relaxation). Later solves rebuild the residual
// network with the previous flow (clamped to the new capacities; new arcs start empty) and the
// previous potentials (new nodes get the largest potential their outgoing arcs allow), then repair
// it: every node with a violated arc first tries to move its own potential into the interval its
// arcs allow (this absorbs most cost changes, such as a waiting task's rising wait cost, without
// moving flow), and arcs still violated are saturated. The result satisfies reduced-cost optimality
// and only the excesses created by the changes remain; an engine routes them:
//   kShortestPaths — successive shortest paths (multi-source Dijkstra that
//                    stops once enough deficit is reached; the default);
//   kRelaxation    — relaxation with arc prioritisation;
//   kCostScaling   — cost scaling from the previous potentials: the previous
//                    flow is made feasible and epsilon starts at the largest
//                    violation left (or, with local_cost_scaling, refines
//                    start from the repaired pseudoflow);
//   kAuto          — successive shortest paths on graphs with fewer than
//                    `ssp_below_arcs` arcs, cost scaling on larger ones (the
//                    measured winners at those sizes, bench/flow/journal.md runs 2-3).
// Thread-safety: one thread per object.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/relaxation.h"
#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/solver.h"
#include "scheduler/flow/ssp.h"

namespace copse::flow {

struct IncrementalOptions {
  enum class Engine { kShortestPaths, kRelaxation, kCostScaling, kAuto };
  Engine engine = Engine::kShortestPaths;
  // kAuto only: graphs with fewer arcs than this use successive shortest paths.
  uint32_t ssp_below_arcs = 100000;
  // The algorithm for a solve without a previous solution: relaxation (fast
  // on uncontended graphs) or cost scaling (robust).
  bool cold_relaxation = false;
  // kCostScaling only: refine from the repaired pseudoflow touching only the
  // nodes near the excesses (CostScalingEngine::RunWarm) instead of making
  // the previous flow feasible and scaling over the whole graph. Measured
  // slower on the Quincy benchmarks (bench/flow/journal.md, "What bounds it"), so off by default.
  bool local_cost_scaling = false;
  CostScalingOptions cost_scaling;
};

class IncrementalSolver final : public FlowSolver {
 public:
  struct Stats {
    bool warm = false;             // started from a previous solution
    uint64_t potential_moves = 0;  // nodes whose potential absorbed a change
    uint64_t saturated_arcs = 0;   // violated arcs saturated by the repair
    int64_t excess_units = 0;      // units of excess left for the engine
    uint64_t phases = 0;           // shortest-path phases (or refines)
    uint64_t settled = 0;          // nodes settled by Dijkstra
    // The cost-scaling engine's refines, when it ran (cold or warm).
    std::vector<CostScalingEngine::Stats::Refine> refines;
  };

  explicit IncrementalSolver(IncrementalOptions options = {});
  std::string_view name() const override { return name_; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  void Adopt(const FlowGraph& graph, const FlowSolution& solution) override;
  const Stats& stats() const { return stats_; }
  // Forgets the previous solution; the next solve starts from scratch.
  void Reset() { has_prev_ = prev_in_net_ = false; }

 private:
  Status SolveCold(const FlowGraph& graph, std::vector<int64_t>& pot, const CancelFlag* cancel);
  Status SolveWarm(const FlowGraph& graph, std::vector<int64_t>& pot, const CancelFlag* cancel);
  void InitPotentials(const FlowGraph& graph, std::vector<int64_t>& pot);
  // Returns the largest violation it had to saturate.
  int64_t Repair(std::vector<int64_t>& pot);

  IncrementalOptions options_;
  std::string name_;
  ResidualNet net_;
  ShortestPathEngine ssp_;
  RelaxationEngine relax_;
  CostScalingEngine cs_;
  // Materializes prev_flow_/prev_pot_ from net_ and pot_ when they hold it.
  void LoadPrevious();

  bool has_prev_ = false;
  // After a successful solve the previous solution stays in net_ and pot_
  // (graph ids up to prev_arc_bound_) and is copied out by id only when a
  // warm solve needs it, so that a one-shot solve does not pay for the copy.
  bool prev_in_net_ = false;
  uint32_t prev_arc_bound_ = 0;
  uint32_t prev_node_bound_ = 0;
  std::vector<int64_t> prev_flow_;  // by ArcId
  std::vector<int64_t> prev_pot_;   // by NodeId
  std::vector<int64_t> pot_;        // dense potentials of the current solve
  std::vector<uint8_t> fresh_;      // InitPotentials: nodes without a previous potential
  Stats stats_;
};

}  // namespace copse::flow

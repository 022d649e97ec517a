// Cost scaling (Goldberg's push-relabel with epsilon-scaling, as in Quincy's
// cs2 and Firmament §4): costs are multiplied by (nodes + 1), epsilon starts
// at the largest violation and is divided by the scaling factor after each
// refine until it is 1, at which point the flow is optimal. Heuristics:
// global price updates (a bucket-based backward search from the deficits at
// the start of each refine and after every `nodes` relabels) and price
// refine (optional, off by default: before a refine, try to make the flow
// epsilon-optimal by changing potentials alone; skip the refine if that works).
//
// Arithmetic runs in int64 with an overflow guard on potentials; if the guard
// trips the solve is redone in 128-bit arithmetic.
//
// CostScalingSolver solves from scratch. IncrementalSolver (incremental.h)
// uses CostScalingEngine to continue from a previous solution.
// Each engine owns the arrays its runs work in and keeps them between runs,
// so that a re-solve reuses their pages instead of faulting in fresh ones
// (reuse.h); they live as long as the engine (and the solver holding it).
// Thread-safety: one thread per object; engines share nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/solver.h"

namespace copse::flow {

struct CostScalingOptions {
  int scaling_factor = 16;  // epsilon is divided by this after each refine (>= 2)
  // Try to skip refines by changing potentials alone (label correcting with a
  // budget of 4 scans per dirty node). Off by default: on the Quincy graphs
  // the failed attempts cost more than the refines they save (from scratch
  // at scale (b) the core took 201 ms with it against 147 ms without, and
  // at (a) about twice as long; bench/flow/journal.md, run 4).
  bool price_refine = false;
  bool force_wide = false;  // use 128-bit arithmetic from the start (tests)
  // Once a refine leaves epsilon below this many original cost units (0:
  // never), stop scaling: round the potentials down, saturate the residual
  // arcs whose reduced cost is then negative, and route the excess this
  // leaves by successive shortest paths (ssp.h), which ends with exact
  // potentials. Replaces the refines below one cost unit, which on the
  // over-subscribed scale (e) took 1-2 s of a 5 s solve (bench/flow/journal.md,
  // run 7). Applies to a whole-graph run (not price refine, not RunWarm).
  int64_t ssp_finish_below = 1;
};

class CostScalingEngine {
 public:
  struct Stats {
    uint64_t refines = 0;
    uint64_t skipped_by_price_refine = 0;
    uint64_t relabels = 0;
    uint64_t global_updates = 0;
    uint64_t optimality_checks = 0;  // cold run: is the flow optimal already?
    uint64_t proved_optimal = 0;     // ... and it was (the later refines skipped)
    bool used_wide = false;
    bool ssp_finished = false;  // ended by ssp_finish_below
    uint64_t ssp_phases = 0;
    // One entry per refine, in order (bench/flow/journal.md, "What bounds it").
    struct Refine {
      double eps = 0;  // in original cost units (the scaled epsilon / (nodes + 1))
      double ms = 0;
      uint64_t relabels = 0;
      uint64_t global_updates = 0;
    };
    std::vector<Refine> refine_log;
  };

  explicit CostScalingEngine(CostScalingOptions options = {});
  ~CostScalingEngine();
  CostScalingEngine(CostScalingEngine&&) noexcept;
  CostScalingEngine& operator=(CostScalingEngine&&) noexcept;
  CostScalingEngine(const CostScalingEngine&) = delete;
  CostScalingEngine& operator=(const CostScalingEngine&) = delete;

  // Makes the flow in `net` optimal. `pot` (dense, original cost units) is
  // the starting guess for the potentials and receives exact optimal ones.
  // The flow in `net` may be any pseudoflow; it is first made feasible.
  // Returns kInfeasible, kCancelled, or Ok.
  Status Run(ResidualNet& net, std::vector<int64_t>& pot, const CancelFlag* cancel);

  // Continues from a pseudoflow whose residual reduced costs under `pot` are
  // all >= 0 (as the incremental repair leaves it): refines at epsilon `eps`
  // (original units, e.g. the largest violation the repair saw) and scales
  // down, touching only the nodes near the excesses. Returns kInfeasible when
  // an excess provably cannot reach a deficit.
  Status RunWarm(ResidualNet& net, std::vector<int64_t>& pot, int64_t eps,
                 const CancelFlag* cancel);

  const Stats& stats() const { return stats_; }

  // The working arrays of Run and RunWarm (cost_scaling.cc).
  struct Workspace;

 private:
  CostScalingOptions options_;
  Stats stats_;
  std::unique_ptr<Workspace> ws_;  // owned; null only once moved from
};

class CostScalingSolver final : public FlowSolver {
 public:
  explicit CostScalingSolver(CostScalingOptions options = {}) : engine_(options) {}
  std::string_view name() const override { return "cost_scaling"; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  const CostScalingEngine::Stats& stats() const { return engine_.stats(); }

 private:
  ResidualNet net_;
  std::vector<int64_t> pot_;  // kept between solves (reuse.h)
  CostScalingEngine engine_;
};

}  // namespace copse::flow

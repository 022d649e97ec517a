// Relaxation (Bertsekas and Tseng's RELAX, the algorithm Firmament found
// fastest on uncontended scheduling graphs, §4): keeps reduced-cost
// optimality and works towards feasibility. From a node with excess it grows
// a tree over zero-reduced-cost residual arcs; when the tree reaches a
// deficit node it augments along the tree path, and when the tree's excess
// exceeds the capacity of the zero-reduced-cost arcs leaving it, it saturates
// those arcs and raises the tree's potentials (a dual ascent).
//
// Arc prioritisation (Firmament §5.3.1): arcs leading to deficit nodes go to
// the front of the queue of arcs that extend the tree, so the search runs
// depth-first towards demand and breadth-first otherwise.
// The engine owns its working arrays and keeps them between runs (reuse.h).
// Thread-safety: one thread per object.
#pragma once

#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "scheduler/flow/feasibility.h"
#include "scheduler/flow/residual_net.h"
#include "scheduler/flow/solver.h"

namespace copse::flow {

struct RelaxationOptions {
  bool arc_prioritisation = true;
};

class RelaxationEngine {
 public:
  struct Stats {
    uint64_t augmentations = 0;
    uint64_t ascents = 0;
    uint64_t tree_nodes = 0;
  };

  explicit RelaxationEngine(RelaxationOptions options = {}) : options_(options) {}

  // Routes all excess. REQUIRES: every residual reduced cost >= 0 under `pot`.
  Status Run(ResidualNet& net, std::vector<int64_t>& pot, const CancelFlag* cancel);

  const Stats& stats() const { return stats_; }

 private:
  enum class Step { kAugmented, kAscended, kInfeasible, kCancelled };
  Step GrowTree(ResidualNet& net, std::vector<int64_t>& pot, uint32_t s);
  void AddToTree(ResidualNet& net, const std::vector<int64_t>& pot, uint32_t v, int64_t& cut);
  Step Ascend(ResidualNet& net, std::vector<int64_t>& pot);
  // Called when the potentials have risen further than any feasible problem
  // needs to have seen so far: checks feasibility once, on a copy of `net`.
  Status CheckFeasibleOnce(const ResidualNet& net);
  void Augment(ResidualNet& net, uint32_t s, uint32_t t);
  void Activate(uint32_t v);

  RelaxationOptions options_;
  Stats stats_;
  const CancelFlag* cancel_ = nullptr;
  bool cancelled_ = false;
  // Once a potential passes alarm_, feasibility is checked (once per run):
  // on an infeasible problem the dual is unbounded and ascents never end.
  int64_t alarm_ = 0;
  bool checked_feasible_ = false;
  std::vector<uint32_t> in_tree_;  // == stamp_ when in the current tree
  uint32_t stamp_ = 0;
  std::vector<uint32_t> pred_;
  std::vector<uint32_t> tree_;
  std::deque<uint32_t> candidates_;
  std::vector<uint32_t> active_;
  std::vector<uint8_t> queued_;
  FeasibilityWorkspace feasibility_;  // CheckFeasibleOnce's, kept like the rest
};

class RelaxationSolver final : public FlowSolver {
 public:
  // Where the last solve's time went (wall clock, for benchmarks only).
  struct Stats {
    double sync_ms = 0;     // syncing the kept network and resetting its flow
    double run_ms = 0;      // the relaxation itself
    double extract_ms = 0;  // copying the answer out
  };

  explicit RelaxationSolver(RelaxationOptions options = {}) : engine_(options) {}
  std::string_view name() const override { return "relaxation"; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  const Stats& stats() const { return stats_; }

 private:
  ResidualNet net_;
  RelaxationEngine engine_;
  Stats stats_;
};

}  // namespace copse::flow

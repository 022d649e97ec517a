// The min-cost-flow solver interface shared by every algorithm in this folder
// (cost scaling, relaxation, successive shortest paths, incremental, racing).
//
// A solution is a flow per arc and a potential per node such that the flow
// is feasible (conservation at every node, 0 <= flow <= capacity) and every
// residual arc has a non-negative reduced cost
//     cost(u, v) - potential(u) + potential(v) >= 0,
// which proves it optimal. Problems without a feasible flow return
// StatusCode::kInfeasible; a cancelled solve returns kCancelled; inputs whose
// numbers could overflow 64-bit arithmetic return kInvalidArgument.
//
// Thread-safety: a solver object is used by one thread at a time; Solve only
// reads the graph, so two solvers may solve the same graph concurrently. The
// cancel flag may be set from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

#include "copse/status.h"
#include "scheduler/flow/flow_graph.h"

namespace copse::flow {

// A cooperative cancellation flag. Solvers poll cancelled() in their loops; a
// flag may have a parent, so that cancelling a race's caller also cancels the
// race's contestants.
class CancelFlag {
 public:
  explicit CancelFlag(const CancelFlag* parent = nullptr) : parent_(parent) {}
  CancelFlag(const CancelFlag&) = delete;
  CancelFlag& operator=(const CancelFlag&) = delete;

  void Cancel() { flag_.store(true, std::memory_order_relaxed); }
  void Reset() { flag_.store(false, std::memory_order_relaxed); }
  bool cancelled() const {
    return flag_.load(std::memory_order_relaxed) || (parent_ != nullptr && parent_->cancelled());
  }

 private:
  std::atomic<bool> flag_{false};
  const CancelFlag* parent_;
};

inline bool IsCancelled(const CancelFlag* c) { return c != nullptr && c->cancelled(); }

struct FlowSolution {
  int64_t cost = 0;
  std::vector<int64_t> flow;       // indexed by ArcId; 0 for dead ids
  std::vector<int64_t> potential;  // indexed by NodeId; 0 for dead ids
};

class FlowSolver {
 public:
  virtual ~FlowSolver() = default;

  // A short name such as "cost_scaling", used by the CLI and benchmarks.
  virtual std::string_view name() const = 0;

  // Solves `graph` into `*out` (overwritten). Incremental solvers start from
  // the last solution they produced or adopted, using the graph's change
  // record; `graph` must then be the same graph, edited only through its
  // methods, with CommitChanges() called after each solve. `cancel` may be
  // null; when it becomes true the solve returns kCancelled soon after.
  virtual Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) = 0;

  // Tells an incremental solver that `solution` (found by another solver for
  // the current `graph`) is the one to start from next time. No-op otherwise.
  virtual void Adopt(const FlowGraph& graph, const FlowSolution& solution) {
    (void)graph;
    (void)solution;
  }
};

}  // namespace copse::flow

// TieredSolver: one incremental solver for small graphs, another for large
// ones, switched by the graph's live arc count at each solve.
//
// Below `below_arcs` the small solver re-solves from its kept state; it is
// loaded (Adopt) from the large solver's answer after any solve the large
// solver made, except the object's first (so a one-shot solve does not pay
// for the copy), so it never starts cold: the first two solves of a small
// graph are the large solver's. Each answer the
// small solver gives is also adopted by the large solver, so that a graph
// growing past the threshold continues from the last solution instead of a
// stale one. The default race uses it with the persistent incremental_local
// (LocalSspSolver) below kSoloBelowArcs and incremental_auto everywhere else
// (docs/flow.md, "How race runs").
//
// Thread-safety: one thread per object; the graph is only read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "scheduler/flow/solver.h"

namespace copse::flow {

class TieredSolver final : public FlowSolver {
 public:
  TieredSolver(std::string name, std::unique_ptr<FlowSolver> small,
               std::unique_ptr<FlowSolver> large, uint32_t below_arcs);
  std::string_view name() const override { return name_; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  void Adopt(const FlowGraph& graph, const FlowSolution& solution) override;

  // Which solver answered the last solve (for tests and benchmarks).
  bool last_was_small() const { return last_was_small_; }

 private:
  std::string name_;
  std::unique_ptr<FlowSolver> small_;
  std::unique_ptr<FlowSolver> large_;
  uint32_t below_arcs_;
  bool small_current_ = false;  // the small solver holds the last solution
  bool last_was_small_ = false;
  uint64_t solves_ = 0;  // by the large solver
};

}  // namespace copse::flow

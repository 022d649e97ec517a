#include "scheduler/flow/tiered.h"

#include <utility>

namespace copse::flow {

TieredSolver::TieredSolver(std::string name, std::unique_ptr<FlowSolver> small,
                           std::unique_ptr<FlowSolver> large, uint32_t below_arcs)
    : name_(std::move(name)),
      small_(std::move(small)),
      large_(std::move(large)),
      below_arcs_(below_arcs) {}

Status TieredSolver::Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) {
  const bool small = graph.arc_count() < below_arcs_;
  last_was_small_ = small && small_current_;
  if (last_was_small_) {
    Status st = small_->Solve(graph, out, cancel);
    // An infeasible or cancelled solve leaves the small solver a valid
    // pseudoflow to continue from; the large one keeps its last solution.
    if (st.ok()) large_->Adopt(graph, *out);
    return st;
  }
  Status st = large_->Solve(graph, out, cancel);
  small_current_ = st.ok() && small;
  if (small_current_) small_->Adopt(graph, *out);
  return st;
}

void TieredSolver::Adopt(const FlowGraph& graph, const FlowSolution& solution) {
  large_->Adopt(graph, solution);
  small_current_ = graph.arc_count() < below_arcs_;
  if (small_current_) small_->Adopt(graph, solution);
}

}  // namespace copse::flow

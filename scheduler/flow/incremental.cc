#include "scheduler/flow/incremental.h"

#include <algorithm>
#include <limits>

#include "scheduler/flow/reuse.h"

namespace copse::flow {

namespace {

std::string EngineName(IncrementalOptions::Engine e) {
  switch (e) {
    case IncrementalOptions::Engine::kShortestPaths:
      return "incremental";
    case IncrementalOptions::Engine::kRelaxation:
      return "incremental_relax";
    case IncrementalOptions::Engine::kCostScaling:
      return "incremental_cs";
    case IncrementalOptions::Engine::kAuto:
      return "incremental_auto";
  }
  return "incremental";
}

}  // namespace

IncrementalSolver::IncrementalSolver(IncrementalOptions options)
    : options_(options), name_(EngineName(options.engine)), cs_(options.cost_scaling) {
  if (options.engine == IncrementalOptions::Engine::kCostScaling) {
    if (options.local_cost_scaling) name_ += "_local";
    if (options.cost_scaling.ssp_finish_below == 0) name_ += "_nofinish";
  }
}

void IncrementalSolver::InitPotentials(const FlowGraph& g, std::vector<int64_t>& pot) {
  const uint32_t n = net_.node_count();
  AssignReuse(pot, n, int64_t{0});
  std::vector<uint8_t>& fresh = fresh_;
  AssignReuse(fresh, n, uint8_t{0});
  for (uint32_t u = 0; u < n; ++u) {
    NodeId id = net_.node_id(u);
    if (id < prev_pot_.size() && !g.IsNewNode(id)) {
      pot[u] = prev_pot_[id];
    } else {
      fresh[u] = 1;
    }
  }
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  for (uint32_t u = 0; u < n; ++u) {
    if (!fresh[u]) continue;
    int64_t upper = kNone, lower = std::numeric_limits<int64_t>::min();
    for (uint32_t a = net_.begin(u); a < net_.end(u); ++a) {
      const ResidualArc& r = net_.arc(a);
      if (fresh[r.head]) continue;
      int64_t x = r.cost + pot[r.head];
      if (r.resid > 0) upper = std::min(upper, x);
      if (net_.arc(r.rev).resid > 0) lower = std::max(lower, x);
    }
    if (upper != kNone) {
      pot[u] = upper;
    } else if (lower != std::numeric_limits<int64_t>::min()) {
      pot[u] = lower;
    }
  }
}

int64_t IncrementalSolver::Repair(std::vector<int64_t>& pot) {
  int64_t worst = 0;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (uint32_t u = 0; u < net_.node_count(); ++u) {
    bool violated = false;
    int64_t upper = kMax, lower = kMin;
    for (uint32_t a = net_.begin(u), e = net_.end(u); a < e; ++a) {
      const ResidualArc& r = net_.arc(a);
      int64_t x = r.cost + pot[r.head];
      if (r.resid > 0) {
        upper = std::min(upper, x);
        violated |= x < pot[u];
      }
      if (net_.arc(r.rev).resid > 0) {
        lower = std::max(lower, x);
        violated |= x > pot[u];
      }
    }
    if (violated && lower <= upper) {
      pot[u] = std::clamp(pot[u], lower, upper);
      ++stats_.potential_moves;
    }
  }
  for (uint32_t u = 0; u < net_.node_count(); ++u) {
    for (uint32_t a = net_.begin(u), e = net_.end(u); a < e; ++a) {
      const ResidualArc& r = net_.arc(a);
      int64_t rc = r.cost - pot[u] + pot[r.head];
      if (r.resid > 0 && rc < 0) {
        worst = std::max(worst, -rc);
        net_.Push(a, r.resid);
        ++stats_.saturated_arcs;
      }
    }
  }
  return worst;
}

Status IncrementalSolver::SolveCold(const FlowGraph& g, std::vector<int64_t>& pot,
                                    const CancelFlag* cancel) {
  if (options_.cold_relaxation) {
    COPSE_RETURN_IF_ERROR(net_.BuildSaturatingNegative(g));
    AssignReuse(pot, net_.node_count(), int64_t{0});
    return relax_.Run(net_, pot, cancel);
  }
  COPSE_RETURN_IF_ERROR(net_.Build(g));
  AssignReuse(pot, net_.node_count(), int64_t{0});
  Status st = cs_.Run(net_, pot, cancel);
  stats_.refines = cs_.stats().refine_log;
  return st;
}

void IncrementalSolver::LoadPrevious() {
  if (!prev_in_net_) return;
  prev_in_net_ = false;
  AssignReuse(prev_flow_, prev_arc_bound_, int64_t{0});
  for (ArcId a = 0; a < prev_arc_bound_; ++a) {
    const uint32_t pos = net_.forward(a);  // kNoId: dead arc or self-loop
    if (pos != kNoId) prev_flow_[a] = net_.arc(net_.arc(pos).rev).resid;
  }
  AssignReuse(prev_pot_, prev_node_bound_, int64_t{0});
  for (uint32_t u = 0; u < net_.node_count(); ++u) prev_pot_[net_.node_id(u)] = pot_[u];
}

Status IncrementalSolver::SolveWarm(const FlowGraph& g, std::vector<int64_t>& pot,
                                    const CancelFlag* cancel) {
  LoadPrevious();
  COPSE_RETURN_IF_ERROR(net_.Build(g, &prev_flow_, /*skip_new_arcs=*/true));
  InitPotentials(g, pot);
  IncrementalOptions::Engine engine = options_.engine;
  if (engine == IncrementalOptions::Engine::kAuto) {
    engine = g.arc_count() < options_.ssp_below_arcs ? IncrementalOptions::Engine::kShortestPaths
                                                     : IncrementalOptions::Engine::kCostScaling;
  }
  if (engine == IncrementalOptions::Engine::kCostScaling && !options_.local_cost_scaling) {
    Status st = cs_.Run(net_, pot, cancel);
    stats_.phases = cs_.stats().refines;
    stats_.refines = cs_.stats().refine_log;
    stats_.settled = cs_.stats().relabels;
    return st;
  }
  int64_t worst = Repair(pot);
  for (uint32_t u = 0; u < net_.node_count(); ++u) {
    stats_.excess_units += std::max<int64_t>(0, net_.excess(u));
  }
  if (IsCancelled(cancel)) return Cancelled("solve cancelled");
  if (engine == IncrementalOptions::Engine::kCostScaling) {
    Status st = cs_.RunWarm(net_, pot, worst, cancel);
    stats_.phases = cs_.stats().refines;
    stats_.refines = cs_.stats().refine_log;
    stats_.settled = cs_.stats().relabels;
    return st;
  }
  if (engine == IncrementalOptions::Engine::kRelaxation) {
    return relax_.Run(net_, pot, cancel);
  }
  Status st = ssp_.Route(net_, pot, cancel);
  stats_.phases = ssp_.stats().phases;
  stats_.settled = ssp_.stats().settled;
  return st;
}

Status IncrementalSolver::Solve(const FlowGraph& g, FlowSolution* out, const CancelFlag* cancel) {
  stats_ = Stats{};
  stats_.warm = has_prev_;
  std::vector<int64_t>& pot = pot_;
  COPSE_RETURN_IF_ERROR(has_prev_ ? SolveWarm(g, pot, cancel) : SolveCold(g, pot, cancel));
  // A race's loser stops here rather than extracting a solution nobody reads.
  if (IsCancelled(cancel)) return Cancelled("solve cancelled");
  COPSE_RETURN_IF_ERROR(net_.Extract(g, pot, out));
  prev_in_net_ = true;
  prev_arc_bound_ = g.arc_id_bound();
  prev_node_bound_ = g.node_id_bound();
  has_prev_ = true;
  return Status::Ok();
}

void IncrementalSolver::Adopt(const FlowGraph& g, const FlowSolution& solution) {
  (void)g;
  CopyReuse(prev_flow_, solution.flow);
  CopyReuse(prev_pot_, solution.potential);
  prev_in_net_ = false;
  has_prev_ = true;
}

}  // namespace copse::flow

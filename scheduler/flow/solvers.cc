#include "scheduler/flow/solvers.h"

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/ssp.h"

namespace copse::flow {

std::vector<std::string> SolverNames() { return {"ssp", "cost_scaling", "cost_scaling_wide"}; }

Result<std::unique_ptr<FlowSolver>> MakeSolver(std::string_view name) {
  if (name == "cost_scaling") return std::unique_ptr<FlowSolver>(new CostScalingSolver());
  if (name == "cost_scaling_wide") {
    CostScalingOptions o;
    o.force_wide = true;
    o.scaling_factor = 4;
    return std::unique_ptr<FlowSolver>(new CostScalingSolver(o));
  }
  if (name == "ssp") return std::unique_ptr<FlowSolver>(new SuccessiveShortestPathSolver());
  std::string known;
  for (const auto& n : SolverNames()) known += (known.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown algorithm '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace copse::flow

#include "scheduler/flow/solvers.h"

#include "scheduler/flow/ssp.h"

namespace copse::flow {

std::vector<std::string> SolverNames() { return {"ssp"}; }

Result<std::unique_ptr<FlowSolver>> MakeSolver(std::string_view name) {
  if (name == "ssp") return std::unique_ptr<FlowSolver>(new SuccessiveShortestPathSolver());
  std::string known;
  for (const auto& n : SolverNames()) known += (known.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown algorithm '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace copse::flow

#include "scheduler/flow/solvers.h"

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/incremental.h"
#include "scheduler/flow/racing.h"
#include "scheduler/flow/relaxation.h"
#include "scheduler/flow/ssp.h"

namespace copse::flow {

std::vector<std::string> SolverNames() { return {"race",        "race_scratch",      "incremental",      "incremental_cs",
          "incremental_relax", "cost_scaling", "cost_scaling_wide", "relaxation",
          "relaxation_fifo",   "ssp"}; }

Result<std::unique_ptr<FlowSolver>> MakeSolver(std::string_view name) {
  if (name == "cost_scaling") return std::unique_ptr<FlowSolver>(new CostScalingSolver());
  if (name == "cost_scaling_wide") {
    CostScalingOptions o;
    o.force_wide = true;
    o.scaling_factor = 4;
    return std::unique_ptr<FlowSolver>(new CostScalingSolver(o));
  }
  if (name == "relaxation") return std::unique_ptr<FlowSolver>(new RelaxationSolver());
  if (name == "relaxation_fifo") {
    return std::unique_ptr<FlowSolver>(new RelaxationSolver(RelaxationOptions{false}));
  }
  using Engine = IncrementalOptions::Engine;
  auto incremental = [](Engine e) {
    IncrementalOptions o;
    o.engine = e;
    return std::unique_ptr<FlowSolver>(new IncrementalSolver(o));
  };
  if (name == "incremental") return incremental(Engine::kShortestPaths);
  if (name == "incremental_cs") return incremental(Engine::kCostScaling);
  if (name == "incremental_relax") return incremental(Engine::kRelaxation);
  if (name == "race") {
    return std::unique_ptr<FlowSolver>(new RacingSolver(
        "race", incremental(Engine::kShortestPaths), incremental(Engine::kCostScaling)));
  }
  if (name == "race_scratch") {
    return std::unique_ptr<FlowSolver>(new RacingSolver(
        "race_scratch", std::make_unique<RelaxationSolver>(), std::make_unique<CostScalingSolver>()));
  }
  if (name == "ssp") return std::unique_ptr<FlowSolver>(new SuccessiveShortestPathSolver());
  std::string known;
  for (const auto& n : SolverNames()) known += (known.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown algorithm '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace copse::flow

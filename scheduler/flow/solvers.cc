#include "scheduler/flow/solvers.h"

#include <utility>

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/incremental.h"
#include "scheduler/flow/leaf_ssp.h"
#include "scheduler/flow/local_ssp.h"
#include "scheduler/flow/relaxation.h"
#include "scheduler/flow/tiered.h"

namespace copse::flow {

namespace {

std::unique_ptr<FlowSolver> Incremental(IncrementalOptions::Engine engine) {
  IncrementalOptions o;
  o.engine = engine;
  o.ssp_below_arcs = kSoloBelowArcs;
  return std::make_unique<IncrementalSolver>(o);
}

// The persistent incremental_local below kSoloBelowArcs (measured 2.3-2.5x
// faster than incremental cost scaling at scale (a), slower above:
// bench/flow/journal.md, run 4i), loaded from the first answers of the incremental
// solver with the kAuto engine, which solves above.
std::unique_ptr<FlowSolver> Tiered() {
  return std::make_unique<TieredSolver>("incremental_tiered", std::make_unique<LocalSspSolver>(),
                                        Incremental(IncrementalOptions::Engine::kAuto),
                                        kSoloBelowArcs);
}

}  // namespace

std::vector<std::string> SolverNames() {
  return {"race",
          "incremental",
          "incremental_cs",
          "incremental_local",
          "incremental_leaf",
          "incremental_tiered",
          "cost_scaling",
          "relaxation"};
}

RaceOptions DefaultRaceOptions() {
  RaceOptions race;
  race.hedge_factor = kHedgeFactor;
  race.probe_every = kProbeEvery;
  // RaceOptions::first_leader stays off: measured, it helps (b) and costs
  // (c) from scratch (bench/flow/journal.md, run 3b).
  race.solo_below_arcs = kSoloBelowArcs;
  race.solo = 1;
  // Relaxation (contestant 0) crawls on congested problems: the hedged
  // races keep it out of them (racing.h; bench/flow/journal.md, run 4).
  race.crawler = 0;
  return race;
}

std::unique_ptr<FlowSolver> MakeFirmamentRace(std::string name, RaceOptions options) {
  return std::make_unique<RacingSolver>(std::move(name), std::make_unique<RelaxationSolver>(),
                                        Tiered(), options);
}

Result<std::unique_ptr<FlowSolver>> MakeSolver(std::string_view name) {
  using Engine = IncrementalOptions::Engine;
  // Firmament's pair: graphs below kSoloBelowArcs go to the incremental
  // contestant alone (incremental_tiered: the persistent incremental_local
  // there, loaded from a cold successive-shortest-paths solve), larger
  // races are hedged (the last winner starts alone, the other joins after
  // kHedgeFactor times its last time; docs/flow.md has it measured).
  if (name == "race") return MakeFirmamentRace("race", DefaultRaceOptions());
  if (name == "incremental") return Incremental(Engine::kShortestPaths);
  if (name == "incremental_cs") return Incremental(Engine::kCostScaling);
  if (name == "incremental_local") return std::unique_ptr<FlowSolver>(new LocalSspSolver());
  if (name == "incremental_leaf") return std::unique_ptr<FlowSolver>(new LeafSspSolver());
  if (name == "incremental_tiered") return Tiered();
  if (name == "cost_scaling") return std::unique_ptr<FlowSolver>(new CostScalingSolver());
  if (name == "relaxation") return std::unique_ptr<FlowSolver>(new RelaxationSolver());
  std::string known;
  for (const auto& n : SolverNames()) {
    if (!known.empty()) known.append(", ");
    known.append(n);
  }
  return InvalidArgument("unknown algorithm '" + std::string(name) + "' (known: " + known +
                         "; the experiment variants are `copse bench flow`'s)");
}

}  // namespace copse::flow

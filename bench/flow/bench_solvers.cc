#include "bench/flow/bench_solvers.h"

#include <functional>
#include <utility>

#include "bench/flow/network_simplex.h"
#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/incremental.h"
#include "scheduler/flow/leaf_ssp.h"
#include "scheduler/flow/local_ssp.h"
#include "scheduler/flow/racing.h"
#include "scheduler/flow/relaxation.h"
#include "scheduler/flow/solvers.h"
#include "scheduler/flow/ssp.h"

namespace copse::bench {
namespace {

using flow::FlowSolver;
using Engine = flow::IncrementalOptions::Engine;

struct Variant {
  std::string name;
  std::function<std::unique_ptr<FlowSolver>()> make;
};

std::unique_ptr<FlowSolver> Incremental(Engine engine, bool cold_relaxation = false) {
  flow::IncrementalOptions o;
  o.engine = engine;
  o.cold_relaxation = cold_relaxation;
  o.ssp_below_arcs = flow::kSoloBelowArcs;
  return std::make_unique<flow::IncrementalSolver>(o);
}

// Firmament's pair (flow::MakeFirmamentRace) under the default race's
// options with `edit` applied.
Variant Race(std::string name, std::function<void(flow::RaceOptions&)> edit) {
  return {name, [name, edit] {
            flow::RaceOptions o = flow::DefaultRaceOptions();
            edit(o);
            return flow::MakeFirmamentRace(name, o);
          }};
}

Variant CostScaling(std::string name, std::function<void(flow::CostScalingOptions&)> edit) {
  return {std::move(name), [edit] {
            flow::CostScalingOptions o;
            edit(o);
            return std::make_unique<flow::CostScalingSolver>(o);
          }};
}

Variant IncrementalCostScaling(std::string name,
                               std::function<void(flow::IncrementalOptions&)> edit) {
  return {std::move(name), [edit] {
            flow::IncrementalOptions o;
            o.engine = Engine::kCostScaling;
            edit(o);
            return std::make_unique<flow::IncrementalSolver>(o);
          }};
}

Variant Local(std::string name, std::function<void(flow::LocalSspOptions&)> edit) {
  return {std::move(name), [edit] {
            flow::LocalSspOptions o;
            edit(o);
            return std::make_unique<flow::LocalSspSolver>(o);
          }};
}

Variant Leaf(std::string name, std::function<void(flow::LeafSspOptions&)> edit) {
  return {std::move(name), [edit] {
            flow::LeafSspOptions o;
            edit(o);
            return std::make_unique<flow::LeafSspSolver>(o);
          }};
}

// The variants, in the order BenchSolverNames lists them.
std::vector<Variant> Variants() {
  return {
      // Both contestants started on every solve, at every size (the
      // default race before run 3).
      Race("race_always",
           [](flow::RaceOptions& o) {
             o.solo_below_arcs = 0;
             o.hedge_factor = 0;
             o.probe_every = 0;
           }),
      // The default race without its size threshold.
      Race("race_hedged", [](flow::RaceOptions& o) { o.solo_below_arcs = 0; }),
      // Incremental successive shortest paths (cold: relaxation) against
      // incremental cost scaling, started together (the race of run 1).
      {"race_ssp",
       [] {
         return std::make_unique<flow::RacingSolver>("race_ssp",
                                                     Incremental(Engine::kShortestPaths, true),
                                                     Incremental(Engine::kCostScaling));
       }},
      // The default race with the leaf solver in place of incremental_tiered
      // (issue 16: a candidate for the default).
      {"race_leaf",
       [] {
         return std::make_unique<flow::RacingSolver>(
             "race_leaf", std::make_unique<flow::RelaxationSolver>(),
             std::make_unique<flow::LeafSspSolver>(), flow::DefaultRaceOptions());
       }},
      // Relaxation against cost scaling, both from scratch every time.
      {"race_scratch",
       [] {
         return std::make_unique<flow::RacingSolver>("race_scratch",
                                                     std::make_unique<flow::RelaxationSolver>(),
                                                     std::make_unique<flow::CostScalingSolver>());
       }},
      // Every refine down to epsilon 1 (before run 7).
      IncrementalCostScaling(
          "incremental_cs_nofinish",
          [](flow::IncrementalOptions& o) { o.cost_scaling.ssp_finish_below = 0; }),
      {"incremental_auto", [] { return Incremental(Engine::kAuto); }},
      {"incremental_relax", [] { return Incremental(Engine::kRelaxation); }},
      // Refines warm-started on the repaired pseudoflow.
      IncrementalCostScaling("incremental_cs_local",
                             [](flow::IncrementalOptions& o) { o.local_cost_scaling = true; }),
      // incremental_local with one of its steps off.
      Local("incremental_local_noretract",
            [](flow::LocalSspOptions& o) { o.retract_deficits = false; }),
      Local("incremental_local_forward",
            [](flow::LocalSspOptions& o) { o.reverse_search = false; }),
      Local("incremental_local_nopull",
            [](flow::LocalSspOptions& o) { o.pull_potentials = false; }),
      Local("incremental_local_notree", [](flow::LocalSspOptions& o) { o.tree_augment = false; }),
      // incremental_leaf searching from all sources at once, ties first in,
      // first out, or both.
      Leaf("incremental_leaf_multi", [](flow::LeafSspOptions& o) { o.single_source = false; }),
      Leaf("incremental_leaf_multi_wide",
           [](flow::LeafSspOptions& o) {
             o.single_source = false;
             o.deep_ties = false;
           }),
      Leaf("incremental_leaf_wide", [](flow::LeafSspOptions& o) { o.deep_ties = false; }),
      // incremental_leaf with a blocking flow after no single-source search,
      // or after every one; and the latter without settling deficits first
      // among ties (the solver before 2026-11-27's second session).
      Leaf("incremental_leaf_nobf",
           [](flow::LeafSspOptions& o) {
             o.blocking_flow = flow::LeafSspOptions::BlockingFlow::kNever;
           }),
      Leaf("incremental_leaf_bf",
           [](flow::LeafSspOptions& o) {
             o.blocking_flow = flow::LeafSspOptions::BlockingFlow::kAlways;
             o.blocking_flow_min_units = 0;
           }),
      Leaf("incremental_leaf_plain",
           [](flow::LeafSspOptions& o) {
             o.blocking_flow = flow::LeafSspOptions::BlockingFlow::kAlways;
             o.blocking_flow_min_units = 0;
             o.eager_deficits = false;
             o.finish_distance_units = 0;
             o.batch_after_flat_searches = 0;
           }),
      // incremental_leaf with a blocking flow after every deep search, however
      // little the last ones sent (LeafSspOptions::blocking_flow_min_units = 0;
      // the default before 2026-11-27's sixth session).
      Leaf("incremental_leaf_alwaysbf",
           [](flow::LeafSspOptions& o) { o.blocking_flow_min_units = 0; }),
      // incremental_leaf without path hints (LeafSspOptions::path_hints, on
      // by default since 2026-11-27's eighth session).
      Leaf("incremental_leaf_nohint", [](flow::LeafSspOptions& o) { o.path_hints = false; }),
      // incremental_leaf without the exit cache (LeafSspOptions::exit_cache):
      // every leaf its hub lets in relaxes all of its exits.
      Leaf("incremental_leaf_nocache", [](flow::LeafSspOptions& o) { o.exit_cache = false; }),
      // incremental_leaf with neither: the default before the eighth session.
      Leaf("incremental_leaf_nohint_nocache",
           [](flow::LeafSspOptions& o) {
             o.path_hints = false;
             o.exit_cache = false;
           }),
      // incremental_leaf whose searches stop at the first deficit that can
      // absorb their sources' excess even when a blocking flow follows
      // (searching as the solver did at commit dd6a33b).
      Leaf("incremental_leaf_unfinished",
           [](flow::LeafSspOptions& o) {
             o.finish_distance_units = 0;
             o.batch_after_flat_searches = 0;
           }),
      // incremental_leaf that never turns a run of flat searches into one
      // from every source (its searches that stop for want of a deficit
      // still finish their distance, which they did not at f00aed0).
      Leaf("incremental_leaf_nobatch",
           [](flow::LeafSspOptions& o) { o.batch_after_flat_searches = 0; }),
      // incremental_leaf without the kept plateau (LeafSspOptions::kept_plateau,
      // on by default since 2026-11-28): every search from one source starts
      // from that source alone.
      Leaf("incremental_leaf_noplateau", [](flow::LeafSspOptions& o) { o.kept_plateau = false; }),
      // incremental_leaf with a search backwards from every deficit after
      // each wide one, once eight wide ones came in a solve
      // (LeafSspOptions::reverse_after_wide_searches); _reverse1 after the
      // first.
      Leaf("incremental_leaf_reverse",
           [](flow::LeafSspOptions& o) { o.reverse_after_wide_searches = 8; }),
      Leaf("incremental_leaf_reverse1",
           [](flow::LeafSspOptions& o) { o.reverse_after_wide_searches = 1; }),
      {"network_simplex", [] { return std::make_unique<flow::NetworkSimplexSolver>(); }},
      // 128-bit from the start, factor 4, price refine on.
      CostScaling("cost_scaling_wide",
                  [](flow::CostScalingOptions& o) {
                    o.force_wide = true;
                    o.scaling_factor = 4;
                    o.price_refine = true;
                  }),
      // Every refine down to epsilon 1 (before run 7).
      CostScaling("cost_scaling_nofinish",
                  [](flow::CostScalingOptions& o) { o.ssp_finish_below = 0; }),
      // Without arc prioritisation.
      {"relaxation_fifo",
       [] { return std::make_unique<flow::RelaxationSolver>(flow::RelaxationOptions{false}); }},
      {"ssp", [] { return std::make_unique<flow::SuccessiveShortestPathSolver>(); }},
  };
}

constexpr std::string_view kLookPrefix = "incremental_local_look";

}  // namespace

std::vector<std::string> BenchSolverNames() {
  std::vector<std::string> names = flow::SolverNames();
  for (const Variant& v : Variants()) names.push_back(v.name);
  return names;
}

Result<std::unique_ptr<FlowSolver>> MakeBenchSolver(std::string_view name) {
  for (const std::string& n : flow::SolverNames()) {
    if (name == n) return flow::MakeSolver(name);
  }
  for (const Variant& v : Variants()) {
    if (name == v.name) return v.make();
  }
  if (name.substr(0, kLookPrefix.size()) == kLookPrefix) {  // incremental_local_lookN: N hops
    const std::string_view hops = name.substr(kLookPrefix.size());
    if (!hops.empty() && hops.size() <= 2 && hops.find_first_not_of("0123456789") == hops.npos) {
      flow::LocalSspOptions o;
      o.lookahead = std::stoi(std::string(hops));
      return std::unique_ptr<FlowSolver>(new flow::LocalSspSolver(o));
    }
  }
  std::string known;
  for (const std::string& n : BenchSolverNames()) known += n + ", ";
  return InvalidArgument("unknown algorithm '" + std::string(name) + "' (known: " + known +
                         std::string(kLookPrefix) + "N)");
}

}  // namespace copse::bench

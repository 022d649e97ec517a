// copse-bench-flow: times Copse's min-cost-flow solvers and LEMON's
// NetworkSimplex, CostScaling and CapacityScaling on the same Quincy-shaped
// graphs (scales a-e of issue 4), from scratch on the first graph and then
// incrementally along the workload's change steps. Prints a table and,
// with --json, writes every measurement. Peak memory is the process's
// maximum resident set (run a scale alone, without LEMON, to see Copse's).
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/flow/bench_solvers.h"
#include "bench/flow/network_simplex.h"
#include "bench/flow/quincy_workload.h"
#include "common/json.h"
#include "scheduler/flow/dimacs.h"
#include "scheduler/flow/incremental.h"
#include "scheduler/flow/leaf_ssp.h"
#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/local_ssp.h"
#include "scheduler/flow/racing.h"
#include "scheduler/flow/relaxation.h"
#include "scheduler/flow/verify.h"

namespace copse::bench {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Options {
  std::string scale = "a";
  std::string regime = "QFP";
  bool clock_hint = true;
  int steps = 10;
  int burst_step = 1;
  uint64_t seed = 1;
  std::vector<std::string> scratch = {"cost_scaling", "relaxation", "race_scratch", "race"};
  std::vector<std::string> incremental = {"race", "incremental", "incremental_cs", "relaxation"};
  std::vector<std::string> lemon = {"ns", "cs", "caps"};
  int lemon_every = 0;
  int repeat = 1;
  bool check = true;
  bool verbose = false;
  std::string json_path;
  std::string dimacs_dir;
};

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

long PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

flow::lemon_ref::Algorithm LemonAlg(const std::string& s) {
  if (s == "cs") return flow::lemon_ref::Algorithm::kCostScaling;
  if (s == "caps") return flow::lemon_ref::Algorithm::kCapacityScaling;
  return flow::lemon_ref::Algorithm::kNetworkSimplex;
}

struct Runner {
  Options opt;
  json records = json::array();
  int failures = 0;

  static std::string RaceNote(const json& r) {
    std::string note = " (won: " + r["winner"].get<std::string>();
    if (r["raced"].get<bool>()) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " in %.2f ms; loser returned %.2f ms later; adopt %.2f ms",
                    r["winner_ms"].get<double>(), r["loser_ms"].get<double>(),
                    r["adopt_ms"].get<double>());
      note += buf;
    } else {
      note += ", alone";
    }
    return note + ")";
  }

  void Record(json r) {
    std::printf("%-6s step %3d  %-24s %10.2f ms  cost %lld%s\n",
                r["phase"].get<std::string>().c_str(), r["step"].get<int>(),
                r["solver"].get<std::string>().c_str(), r["solve_ms"].get<double>(),
                static_cast<long long>(r["cost"].get<int64_t>()),
                r.contains("winner") ? RaceNote(r).c_str() : "");
    std::fflush(stdout);
    records.push_back(std::move(r));
  }

  void Expect(bool ok, const std::string& what) {
    if (!ok) {
      ++failures;
      std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
    }
  }

  // The race's winner and where its time went (racing.h).
  static void RecordRace(const flow::RacingSolver& race, json& r) {
    r["winner"] = std::string(race.last_winner());
    r["raced"] = race.stats().raced;
    r["winner_ms"] = race.stats().winner_ms;
    r["loser_ms"] = race.stats().loser_ms;
    r["adopt_ms"] = race.stats().adopt_ms;
    r["second_start_ms"] = race.stats().second_start_ms;
    r["congestion"] = race.stats().congestion;
    r["estimate_ms"] = race.stats().estimate_ms;
    r["crawler_kept_out"] = race.stats().crawler_kept_out;
    r["probe"] = race.stats().probe;
  }

  // The median of `runs` (odd count gives the middle one).
  static double Median(std::vector<double> runs) {
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
  }

  // Times each --lemon solver on `g`; all must agree with `expect` (when
  // known) and with each other. Returns their cost.
  std::optional<int64_t> RunLemon(const flow::FlowGraph& g, int step,
                                  std::optional<int64_t> expect) {
    for (const std::string& name : opt.lemon) {
      std::vector<double> runs;
      flow::lemon_ref::LemonResult r;
      for (int k = 0; k < opt.repeat; ++k) {
        r = flow::lemon_ref::Solve(g, LemonAlg(name));
        if (!expect && r.feasible) expect = r.cost;
        Expect(r.feasible && r.cost == *expect,
               std::string("lemon ") + name + " cost at step " + std::to_string(step));
        runs.push_back(r.solve_ms);
      }
      Record({{"phase", "lemon"},
              {"step", step},
              {"solver", AlgorithmName(LemonAlg(name))},
              {"solve_ms", Median(runs)},
              {"runs_ms", runs},
              {"build_ms", r.build_ms},
              {"cost", r.cost}});
    }
    return expect;
  }

  // Times each --scratch solver from scratch on `g`; all must agree with
  // `expect` (when known) and with each other. Returns their cost.
  std::optional<int64_t> RunScratch(const flow::FlowGraph& g, int step,
                                    std::optional<int64_t> expect) {
    std::optional<int64_t> cost = expect;
    for (const std::string& name : opt.scratch) {
      auto solver = MakeBenchSolver(name);
      if (!solver.ok()) {
        Expect(false, solver.status().ToString());
        continue;
      }
      // --repeat runs, each with a new solver object (so each is from
      // scratch); the first also pays the process's first touch of the
      // memory the solver allocates.
      std::vector<double> runs;
      flow::FlowSolution sol;
      for (int k = 0; k < opt.repeat; ++k) {
        if (k > 0) solver = MakeBenchSolver(name);
        auto t = Clock::now();
        Status st = (*solver)->Solve(g, &sol, nullptr);
        runs.push_back(MsSince(t));
        Expect(st.ok(), name + ": " + st.ToString());
        if (!cost) cost = sol.cost;
        Expect(sol.cost == *cost, name + " scratch cost");
      }
      json r = {{"phase", "scratch"},       {"step", step},    {"solver", name},
                {"solve_ms", Median(runs)}, {"runs_ms", runs}, {"cost", sol.cost}};
      if (auto* race = dynamic_cast<flow::RacingSolver*>(solver->get())) RecordRace(*race, r);
      Record(r);
    }
    return cost;
  }

  void WriteDimacs(const flow::FlowGraph& g, int step) {
    if (opt.dimacs_dir.empty()) return;
    const std::string path = opt.dimacs_dir + "/" + opt.scale + "-" + std::to_string(step) + ".min";
    std::ofstream out(path);
    flow::WriteDimacs(g, out,
                      "copse-bench-flow scale " + opt.scale + " step " + std::to_string(step));
    out.flush();
    Expect(out.good(), "cannot write " + path);
  }

  int Run() {
    auto t = Clock::now();
    QuincyScaleSpec spec = ScaleSpec(opt.scale).value();
    spec.regime = ParseRegime(opt.regime).value();
    spec.clock_hint = opt.clock_hint;
    spec.burst_step = opt.burst_step;
    QuincyWorkload w(spec, opt.seed);
    std::printf(
        "scale %s, regime %s: %u nodes, %u arcs, %d tasks, %d slots (generated in %.0f ms)\n",
        opt.scale.c_str(), opt.regime.c_str(), w.graph().node_count(), w.graph().arc_count(),
        w.live_tasks(), w.total_slots(), MsSince(t));
    WriteDimacs(w.graph(), 0);
    // The first graph's optimal cost, when a from-scratch or LEMON solver
    // ran: the incremental solvers' first answers must match it.
    std::optional<int64_t> cost0 = RunScratch(w.graph(), 0, std::nullopt);
    cost0 = RunLemon(w.graph(), 0, cost0);
    std::vector<std::unique_ptr<flow::FlowSolver>> inc;
    // One solution object per solver, kept across steps as a scheduler keeps
    // its own: a fresh one would charge first-touch page faults to the solve.
    std::vector<flow::FlowSolution> sols(opt.incremental.size());
    for (const std::string& name : opt.incremental) {
      inc.push_back(MakeBenchSolver(name).value());  // main() checked every name
    }
    for (int step = 0; step <= opt.steps && !inc.empty(); ++step) {
      if (step > 0) {
        w.Step();
        WriteDimacs(w.graph(), step);
      }
      size_t changes = w.graph().change_count();
      const flow::FlowSolution& driver = sols.at(0);
      int64_t cost = 0;
      for (size_t i = 0; i < inc.size(); ++i) {
        flow::FlowSolution& sol = sols[i];
        auto t0 = Clock::now();
        Status st = inc[i]->Solve(w.graph(), &sol, nullptr);
        double ms = MsSince(t0);
        Expect(st.ok(), opt.incremental[i] + ": " + st.ToString());
        if (i == 0) cost = sol.cost;
        if (step == 0 && cost0) Expect(sol.cost == *cost0, opt.incremental[i] + " first cost");
        Expect(sol.cost == cost, opt.incremental[i] + " cost at step " + std::to_string(step));
        json r = {{"phase", step == 0 ? "cold" : "inc"},
                  {"step", step},
                  {"solver", opt.incremental[i]},
                  {"solve_ms", ms},
                  {"cost", sol.cost},
                  {"changes", changes},
                  {"running", w.running_tasks()},
                  {"live", w.live_tasks()}};
        if (w.burst_tasks() > 0) {
          r["burst_tasks"] = w.burst_tasks();
          r["burst_running_before"] = w.burst_running();
        }
        if (auto* race = dynamic_cast<flow::RacingSolver*>(inc[i].get())) RecordRace(*race, r);
        if (auto* s = dynamic_cast<flow::IncrementalSolver*>(inc[i].get())) {
          r["potential_moves"] = s->stats().potential_moves;
          r["saturated_arcs"] = s->stats().saturated_arcs;
          r["excess_units"] = s->stats().excess_units;
          r["phases"] = s->stats().phases;
          r["settled"] = s->stats().settled;
          json refines = json::array();
          for (const auto& f : s->stats().refines) {
            refines.push_back({{"eps", f.eps},
                               {"ms", f.ms},
                               {"relabels", f.relabels},
                               {"global_updates", f.global_updates}});
          }
          r["refines"] = refines;
        }
        if (auto* s = dynamic_cast<flow::RelaxationSolver*>(inc[i].get())) {
          r["sync_ms"] = s->stats().sync_ms;
          r["run_ms"] = s->stats().run_ms;
          r["extract_ms"] = s->stats().extract_ms;
        }
        if (auto* s = dynamic_cast<flow::NetworkSimplexSolver*>(inc[i].get())) {
          const flow::NetworkSimplexSolver::Stats& ns = s->stats();
          r["warm"] = ns.warm;
          r["pivots"] = ns.pivots;
          r["degenerate"] = ns.degenerate;
          r["cuts"] = ns.cuts;
          r["hung"] = ns.hung;
          r["settled"] = ns.settled;
          r["stage_two"] = ns.stage_two;
          r["build_ms"] = ns.build_ms;
          r["pivot_ms"] = ns.pivot_ms;
          r["emit_ms"] = ns.emit_ms;
        }
        if (auto* s = dynamic_cast<flow::LeafSspSolver*>(inc[i].get())) {
          const flow::LeafSspSolver::Stats& ls = s->stats();
          r["full_sync"] = ls.full_sync;
          r["synced"] = ls.synced;
          r["shifted"] = ls.shifted;
          r["shift_ms"] = ls.shift_ms;
          r["leaves"] = ls.leaves;
          r["dirty_leaves"] = ls.dirty_leaves;
          r["placed"] = ls.placed;
          r["hub_moves"] = ls.hub_moves;
          r["leaf_moves"] = ls.leaf_moves;
          r["core_fixes"] = ls.core_fixes;
          r["excess_units"] = ls.excess_units;
          r["phases"] = ls.phases;
          r["finished"] = ls.finished;
          r["batched"] = ls.batched;
          r["blocking_flows"] = ls.blocking_flows;
          r["unblocked"] = ls.unblocked;
          r["blocked_units"] = ls.blocked_units;
          r["exits_walked"] = ls.exits_walked;
          r["plateau"] = ls.plateau;
          r["plateau_way_backs"] = ls.plateau_way_backs;
          r["plateau_breaks"] = ls.plateau_breaks;
          r["plateau_resets"] = ls.plateau_resets;
          r["plateau_left"] = ls.plateau_left;
          r["wide"] = ls.wide;
          r["reversed"] = ls.reversed;
          r["reverse_settled"] = ls.reverse_settled;
          r["reverse_units"] = ls.reverse_units;
          r["reverse_ms"] = ls.reverse_ms;
          r["settled"] = ls.settled;
          r["scanned"] = ls.scanned;
          r["leaf_events"] = ls.leaf_events;
          r["stale_keys"] = ls.stale_keys;
          r["deferred"] = ls.deferred;
          r["paths"] = ls.paths;
          r["drained"] = ls.drained;
          r["retracted"] = ls.retracted;
          r["sync_ms"] = ls.sync_ms;
          r["repair_ms"] = ls.repair_ms;
          r["search_ms"] = ls.search_ms;
          r["route_ms"] = ls.route_ms;
          r["emit_ms"] = ls.emit_ms;
        }
        if (auto* s = dynamic_cast<flow::LocalSspSolver*>(inc[i].get())) {
          const flow::LocalSspSolver::Stats& ls = s->stats();
          r["full_sync"] = ls.full_sync;
          r["synced"] = ls.synced;
          r["touched"] = ls.touched;
          r["potential_moves"] = ls.potential_moves;
          r["saturated_arcs"] = ls.saturated_arcs;
          r["retracted"] = ls.retracted;
          r["lookahead_moves"] = ls.lookahead_moves;
          r["tree_paths"] = ls.tree_paths;
          r["excess_units"] = ls.excess_units;
          r["phases"] = ls.phases;
          r["reverse_phases"] = ls.reverse_phases;
          r["settled"] = ls.settled;
          r["scanned"] = ls.scanned;
          r["sync_ms"] = ls.sync_ms;
          r["repair_ms"] = ls.repair_ms;
          r["search_ms"] = ls.search_ms;
          r["flow_ms"] = ls.flow_ms;
          r["route_ms"] = ls.route_ms;
          r["emit_ms"] = ls.emit_ms;
        }
        if (opt.verbose) std::printf("    %s\n", DumpJson(r).c_str());
        Record(r);
      }
      if (opt.check) {
        Status c = flow::CheckSolution(w.graph(), driver);
        Expect(c.ok(), "check: " + c.ToString());
      }
      if (step > 0 && opt.lemon_every > 0 && step % opt.lemon_every == 0) {
        RunScratch(w.graph(), step, cost);
        RunLemon(w.graph(), step, cost);
      }
      w.graph().CommitChanges();
      w.ApplySolution(driver);
    }
    Summarise();
    return failures == 0 ? 0 : 1;
  }

  // From scratch: each solver's time over the fastest LEMON solver's on the
  // same graph.
  void SummariseScratch() {
    std::map<int, double> best_lemon;
    for (const json& r : records) {
      if (r["phase"] != "lemon") continue;
      int step = r["step"].get<int>();
      double ms = r["solve_ms"].get<double>();
      if (!best_lemon.count(step) || ms < best_lemon[step]) best_lemon[step] = ms;
    }
    for (const json& r : records) {
      int step = r["step"].get<int>();
      if (r["phase"] != "scratch" || !best_lemon.count(step)) continue;
      std::printf("  step %3d %-18s %10.2f ms  = %.2f x the fastest LEMON (%.2f ms)\n", step,
                  r["solver"].get<std::string>().c_str(), r["solve_ms"].get<double>(),
                  r["solve_ms"].get<double>() / best_lemon[step], best_lemon[step]);
    }
  }

  void Summarise() {
    std::printf("summary from scratch:\n");
    SummariseScratch();
    std::printf("summary (incremental steps 1..%d):\n", opt.steps);
    for (const std::string& name : opt.incremental) {
      std::vector<double> ms;
      for (const json& r : records) {
        if (r["phase"] == "inc" && r["solver"] == name) ms.push_back(r["solve_ms"].get<double>());
      }
      if (ms.empty()) continue;
      std::sort(ms.begin(), ms.end());
      auto at = [&](size_t pct) { return ms[std::min(ms.size() - 1, ms.size() * pct / 100)]; };
      std::printf(
          "  %-18s median %9.2f ms  p90 %9.2f ms  p99 %9.2f ms  max %9.2f ms  (%zu steps)\n",
          name.c_str(), ms[ms.size() / 2], at(90), at(99), ms.back(), ms.size());
    }
    std::printf("peak RSS %ld MiB\n", PeakRssMiB());
    if (!opt.json_path.empty()) {
      json doc = {{"scale", opt.scale},
                  {"regime", opt.regime},
                  {"seed", opt.seed},
                  {"steps", opt.steps},
                  {"burst_step", opt.burst_step},
                  {"clock_hint", opt.clock_hint},
                  {"peak_rss_mib", PeakRssMiB()},
                  {"records", records}};
      std::ofstream(opt.json_path) << DumpJson(doc, 1) << "\n";
    }
  }
};

}  // namespace
}  // namespace copse::bench

int main(int argc, char** argv) {
  copse::bench::Runner runner;
  auto& o = runner.opt;
  CLI::App app{"Times Copse's and LEMON's min-cost-flow solvers on Quincy-shaped graphs"};
  app.add_option("--scale", o.scale, "a, b, c, d, e (issue 4), or t / tburst (tiny)");
  app.add_option("--regime", o.regime,
                 "fairness regime setting the jobs' bounds: Q, QP, QF, QFP (default QFP, the "
                 "scheduler's)");
  app.add_option("--clock-hint", o.clock_hint,
                 "pass each step's clock tick as two shifted cost groups (true, the default) or "
                 "as every task's own cost change (false); the costs are the same");
  app.add_option("--steps", o.steps, "change steps after the first solve");
  app.add_option("--burst-step", o.burst_step,
                 "the step in which scale d's (and tburst's) burst job arrives: 1 (the default) "
                 "is the first solve after the cold one, a later step a burst in the steady state")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--seed", o.seed, "workload seed");
  app.add_option("--scratch", o.scratch,
                 "solvers timed from scratch on the first graph (names: copse flow's and the "
                 "experiment variants of bench/flow/bench_solvers.h)")
      ->delimiter(',');
  app.add_option("--incremental", o.incremental,
                 "solvers run on every step, names as --scratch; the first one's placements "
                 "drive the workload")
      ->delimiter(',');
  app.add_option("--lemon", o.lemon, "LEMON solvers: ns, cs, caps (empty: none)")->delimiter(',');
  app.add_option("--lemon-every", o.lemon_every,
                 "also time LEMON and the --scratch solvers every N steps (0: first graph only)");
  app.add_option("--repeat", o.repeat,
                 "time each from-scratch solve (Copse and LEMON) this many times and record the "
                 "median")
      ->check(CLI::Range(1, 99));
  app.add_flag("--verbose", o.verbose, "print the incremental solvers' statistics");
  app.add_flag("!--no-check", o.check, "skip the optimality check of each step's flow");
  app.add_option("--json", o.json_path, "write all measurements to this file");
  app.add_option("--dimacs-dir", o.dimacs_dir,
                 "write each step's graph as DIMACS into this folder");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (const copse::Status& st :
       {copse::bench::ScaleSpec(o.scale).status(), copse::bench::ParseRegime(o.regime).status()}) {
    if (!st.ok()) {
      std::fprintf(stderr, "copse-bench-flow: %s\n", st.ToString().c_str());
      return 2;
    }
  }
  if (!o.dimacs_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.dimacs_dir, ec);
    if (ec) {
      std::fprintf(stderr, "copse-bench-flow: --dimacs-dir %s: %s\n", o.dimacs_dir.c_str(),
                   ec.message().c_str());
      return 2;
    }
  }
  if (o.lemon.size() == 1 && (o.lemon[0].empty() || o.lemon[0] == "none")) o.lemon.clear();
  if (o.scratch.size() == 1 && (o.scratch[0].empty() || o.scratch[0] == "none")) o.scratch.clear();
  if (o.incremental.size() == 1 && (o.incremental[0].empty() || o.incremental[0] == "none")) {
    o.incremental.clear();
  }
  for (const std::string& name : o.lemon) {
    if (name != "ns" && name != "cs" && name != "caps") {
      std::fprintf(stderr, "copse-bench-flow: unknown --lemon solver '%s' (ns, cs, caps)\n",
                   name.c_str());
      return 2;
    }
  }
  // Every solver name is checked before any graph is built.
  for (const auto* list : {&o.scratch, &o.incremental}) {
    for (const std::string& name : *list) {
      auto made = copse::bench::MakeBenchSolver(name);
      if (!made.ok()) {
        std::fprintf(stderr, "copse-bench-flow: %s\n", made.status().ToString().c_str());
        return 2;
      }
    }
  }
  return runner.Run();
}

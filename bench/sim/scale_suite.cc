// `copse bench sim --experiment scale`: Firmament OSDI'16 §7.2 (Fig. 14) on
// the network-less scale simulator. For each solver, the same workload
// (same seed) under the Quincy policy Q, with every round's wall time
// charged to simulated time; results.json gets each run's placement latency
// percentiles. The solvers run one after the other in this process.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/sim/metrics.h"
#include "bench/sim/suite.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/json.h"
#include "sim/scale_sim.h"

namespace copse::bench {

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

// The Quincy policy without fairness or preemption (running tasks keep
// their arc to their computer), as in Firmament's comparison with Quincy.
constexpr const char* kPolicy = "Q";

struct ScaleSolver {
  std::string name;
  std::string what;  // for results.md
  int max_rounds;    // full run
  int quick_rounds;  // --quick
};

// From-scratch solvers take seconds per round at 12,500 computers: their
// round cap is lower so that the full experiment stays within ~10 minutes.
const std::vector<ScaleSolver>& Solvers() {
  static const std::vector<ScaleSolver> kAll = {
      {"cost_scaling", "cost scaling from scratch (Quincy's cs2 way)", 30, 10},
      {"relaxation", "relaxation from scratch", 1000, 20},
      {"incremental_cs", "incremental cost scaling (Firmament §5.2)", 1000, 20},
      {"race",
       "race: relaxation vs incremental_tiered, hedged (Firmament §6.1; copse flow's default)",
       1000, 20},
      {"incremental", "incremental successive shortest paths", 1000, 20},
      {"incremental_leaf",
       "incremental successive shortest paths over the graph's core, tasks as leaves (the "
       "scheduler's default)",
       1000, 20},
  };
  return kAll;
}

constexpr double kMaxTimeS = 60;       // simulated seconds per run (full)
constexpr double kQuickMaxTimeS = 60;  // --quick
// Mean task duration: 10 minutes; --quick shortens it to 1 minute so that
// the small cluster still sees arrivals (and rounds) every few seconds.
constexpr double kMeanTaskS = 600;
constexpr double kQuickMeanTaskS = 60;

Json RunJson(const sim::ScaleResult& r, const ScaleSolver& s, int cap, double max_time_s) {
  std::vector<double> lat = r.latency_ms;
  std::sort(lat.begin(), lat.end());
  std::vector<double> rounds = r.round_ms;
  std::sort(rounds.begin(), rounds.end());
  double mean = 0;
  for (double x : lat) mean += x;
  if (!lat.empty()) mean /= static_cast<double>(lat.size());
  Json j;
  j["policy"] = r.policy;
  j["label"] = r.solver;
  j["solver"] = r.solver;
  j["solver_description"] = s.what;
  j["seed"] = r.seed;
  j["computers"] = r.computers;
  j["slots"] = r.slots;
  j["max_rounds"] = cap;
  j["max_time_s"] = max_time_s;
  j["rounds"] = r.rounds;
  j["sim_time_s"] = r.sim_time_s;
  j["initial_tasks"] = r.initial_tasks;
  j["mean_utilisation"] = r.mean_utilisation;
  j["jobs_arrived"] = r.jobs_arrived;
  j["jobs_finished"] = r.jobs_finished;
  j["tasks_submitted"] = r.tasks_submitted;
  j["tasks_placed"] = r.tasks_placed;
  j["tasks_completed"] = r.tasks_completed;
  j["tasks_killed"] = r.tasks_killed;
  j["tasks_waiting_at_end"] = r.tasks_waiting_at_end;
  j["violations"] = r.violations;
  j["p50_ms"] = Percentile(lat, 50);
  j["p90_ms"] = Percentile(lat, 90);
  j["p99_ms"] = Percentile(lat, 99);
  j["max_ms"] = lat.empty() ? 0 : lat.back();
  j["mean_ms"] = mean;
  j["round_p50_ms"] = Percentile(rounds, 50);
  j["round_p90_ms"] = Percentile(rounds, 90);
  j["round_max_ms"] = rounds.empty() ? 0 : rounds.back();
  j["round_ms"] = r.round_ms;
  if (r.burst_tasks > 0) {
    j["burst_tasks"] = r.burst_tasks;
    j["burst_placed"] = r.burst_placed;
    j["burst_round_ms"] = r.burst_round_ms;
    j["burst_all_placed_s"] = r.burst_all_placed_s;
  }
  return j;
}

std::string Markdown(const Json& res, const std::string& command) {
  std::ostringstream md;
  const Json& first = res["runs"][0];
  md << "# copse bench sim --experiment scale\n\n"
     << "`" << command << "`\n\n"
     << first["computers"].get<int>() << " computers, " << first["slots"].get<int>()
     << " slots, policy " << first["policy"].get<std::string>()
     << ", network-less (task durations only, no transfers). Each round's wall time is charged "
        "to simulated time. Placement latency: task submission to its placement taking effect.\n\n"
     << "| solver | seed | rounds (cap) | sim s | placed | waiting at end | util | p50 ms | p90 ms "
        "| p99 ms | max ms | round p50 ms | round max ms | invalid |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Json& r : res["runs"]) {
    md << "| " << r["solver"].get<std::string>() << " | " << r["seed"].get<uint64_t>() << " | "
       << r["rounds"].get<int>() << " (" << r["max_rounds"].get<int>() << ") | "
       << Fixed(r["sim_time_s"].get<double>(), 1) << " | " << r["tasks_placed"].get<int>() << " | "
       << r["tasks_waiting_at_end"].get<int>() << " | "
       << Fixed(100 * r["mean_utilisation"].get<double>(), 1) << "% | "
       << Fixed(r["p50_ms"].get<double>(), 0) << " | " << Fixed(r["p90_ms"].get<double>(), 0)
       << " | " << Fixed(r["p99_ms"].get<double>(), 0) << " | "
       << Fixed(r["max_ms"].get<double>(), 0) << " | " << Fixed(r["round_p50_ms"].get<double>(), 0)
       << " | " << Fixed(r["round_max_ms"].get<double>(), 0) << " | " << r["violations"].get<int>()
       << " |\n";
  }
  for (const Json& r : res["runs"]) {
    if (!r.contains("burst_tasks")) continue;
    const double all = r["burst_all_placed_s"].get<double>();
    md << "\nBurst (" << r["solver"].get<std::string>() << ", seed " << r["seed"].get<uint64_t>()
       << "): " << r["burst_tasks"].get<int>() << " tasks with every input in the first 4 racks; "
       << r["burst_placed"].get<int>() << " placed; the first round that saw it took "
       << Fixed(r["burst_round_ms"].get<double>(), 0) << " ms; "
       << (all >= 0 ? "all placed " + Fixed(all, 1) + " s after it arrived" : "not all placed")
       << ".\n";
  }
  md << "\nSolvers:\n\n";
  for (const ScaleSolver& s : Solvers()) md << "- `" << s.name << "`: " << s.what << "\n";
  return md.str();
}

}  // namespace

Status RunScaleSuite(const SuiteOptions& o) {
  const std::string policy = o.policy.empty() ? kPolicy : o.policy;
  if (policy != "Q" && policy != "QP" && policy != "QF" && policy != "QFP" && policy != "QFPX") {
    return InvalidArgument(
        "--policy for scale must be a Quincy policy (Q, QP, QF, QFP, QFPX), got '" + policy + "'");
  }
  std::vector<ScaleSolver> solvers;
  for (const ScaleSolver& s : Solvers()) {
    if (o.solvers.empty() || std::count(o.solvers.begin(), o.solvers.end(), s.name)) {
      solvers.push_back(s);
    }
  }
  for (const std::string& name : o.solvers) {
    if (std::none_of(Solvers().begin(), Solvers().end(),
                     [&](const ScaleSolver& s) { return s.name == name; })) {
      std::string known;
      for (const ScaleSolver& s : Solvers()) known += (known.empty() ? "" : ", ") + s.name;
      return InvalidArgument("unknown --solver '" + name + "' (" + known + ")");
    }
  }
  fs::path config_path =
      o.source_dir / "cluster-configs" / (o.quick ? "sim-scale-quick.toml" : "sim-scale.toml");
  COPSE_ASSIGN_OR_RETURN(ClusterConfig config, LoadClusterConfig(config_path));
  std::error_code ec;
  fs::create_directories(o.out / "runs", ec);
  if (ec) return IoError("cannot create " + (o.out / "runs").string() + ": " + ec.message());
  SteadyClock wall;
  const Timestamp start = wall.Now();
  double max_time_s = o.quick ? kQuickMaxTimeS : kMaxTimeS;
  Json res;
  res["experiment"] = "scale";
  res["command"] = SuiteCommand(o);
  res["slots"] = config.TotalSlots();
  res["config"] = config_path.string();
  res["quick"] = o.quick;
  res["network"] = false;
  res["mean_task_s"] = o.quick ? kQuickMeanTaskS : kMeanTaskS;
  res["utilisation"] = o.utilisation;
  res["clock_hint"] = o.clock_hint;
  res["runs"] = Json::array();
  for (int i = 0; i < o.seeds; ++i) {
    uint64_t seed = o.seed + static_cast<uint64_t>(i);
    for (const ScaleSolver& s : solvers) {
      sim::ScaleOptions so;
      so.config = config;
      so.scheduler.policy = policy;
      if (o.clock_hint) so.scheduler.params["clock_hint"] = 1;
      so.flow_solver = s.name;
      so.seed = seed;
      so.max_rounds = o.quick ? s.quick_rounds : s.max_rounds;
      so.max_time_s = max_time_s;
      so.mean_task_s = o.quick ? kQuickMeanTaskS : kMeanTaskS;
      so.utilisation = o.utilisation;
      so.burst_tasks = o.burst;
      so.burst_at_s = o.burst_at_s;
      so.wall = &wall;
      Timestamp t0 = wall.Now();
      Result<sim::ScaleResult> r = sim::RunScaleSimulation(so);
      if (!r.ok()) return r.status().WithContext("scale run " + s.name);
      std::cerr << "copse-bench-sim: done scale " << s.name << " seed " << seed << " (" << r->rounds
                << " rounds, " << Fixed((wall.Now() - t0).count() / 1e6, 1) << " s wall)\n";
      Json raw = {{"solver", s.name}, {"seed", seed}, {"latency_ms", r->latency_ms}};
      COPSE_RETURN_IF_ERROR(WriteText(
          o.out / "runs" / (s.name + "-s" + std::to_string(seed) + ".json"), DumpJson(raw) + "\n"));
      res["runs"].push_back(RunJson(*r, s, so.max_rounds, max_time_s));
    }
  }
  std::string command = SuiteCommand(o);
  COPSE_RETURN_IF_ERROR(WriteText(o.out / "results.json", DumpJson(res, 1) + "\n"));
  COPSE_RETURN_IF_ERROR(WriteText(o.out / "results.md", Markdown(res, command)));
  DrawFigures(o.source_dir, o.out);
  COPSE_RETURN_IF_ERROR(WriteTiming(o, static_cast<double>((wall.Now() - start).count()) / 1e6));
  std::cout << (o.out / "results.json").string() << "\n";
  return Status::Ok();
}

}  // namespace copse::bench

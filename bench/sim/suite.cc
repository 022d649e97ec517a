#include "bench/sim/suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "apps/instances.h"
#include "bench/sim/metrics.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/json.h"
#include "common/subprocess.h"

namespace copse::bench {

namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

struct Experiment {
  std::string name;
  std::string config;  // under cluster-configs/
  std::string quick_config;
  // Policy names; "P-naive" runs P with naive job profiles.
  std::vector<std::string> policies;
  int k = 10;
  std::vector<std::string> drop;
  std::string workload = "quincy30.toml";  // under bench/workloads/
  std::string quick_workload = "quick.toml";
  // Ideal times from the job alone on an empty cluster (synthetic jobs:
  // waves x task time) instead of QP K = 1 runs.
  bool analytic_ideal = false;
};

const std::vector<Experiment>& Experiments() {
  static const std::vector<Experiment> kAll = {
      {"ideal", "paper.toml", "sim-quick.toml", {"G", "Q", "QP"}, 1, {}},
      {"unconstrained",
       "paper.toml",
       "sim-quick.toml",
       {"G", "GF", "GFP", "GFH", "GFPH", "Q", "QF", "QP", "QFP", "QFPX", "HFS"},
       10,
       {}},
      {"constrained",
       "paper-constrained.toml",
       "sim-quick-constrained.toml",
       {"GFP", "QFP", "QFPX"},
       10,
       {"PrimeLarge"}},
      {"cfq",
       "sim-cfq.toml",
       "sim-quick.toml",
       {"FIFO", "FAIR", "SRPT", "CFQ", "CFQ-naive"},
       100000,
       {},
       "cfq-google.toml",
       "cfq-quick.toml",
       true},
  };
  return kAll;
}

// The ideal runs (QP with K = 1) of an experiment's network and workload.
constexpr const char* kIdealPolicy = "QP";

struct Planned {
  RunSpec spec;
  fs::path file;
  bool ideal = false;  // a QP K = 1 run that sets the ideal times
  bool main = false;   // a run of the experiment itself
};

std::string Label(const RunSpec& s) {
  return s.profiles == "naive" ? s.policy + "-naive" : s.policy;
}

std::string RunFileName(const RunSpec& s) {
  return Label(s) + "-k" + std::to_string(s.k) + "-s" + std::to_string(s.seed) + ".json";
}

Json RunToJson(const sim::RunResult& r, const RunSpec& spec) {
  int k = spec.k;
  Json j;
  j["policy"] = r.policy;
  j["label"] = Label(spec);
  j["profiles"] = spec.profiles;
  j["seed"] = r.seed;
  j["k"] = k;
  j["slots"] = r.slots;
  j["makespan_s"] = r.makespan_s;
  Json jobs = Json::array();
  for (const sim::JobResult& x : r.jobs) {
    jobs.push_back({{"name", x.name},
                    {"submit_s", x.submit_s},
                    {"start_s", x.start_s},
                    {"finish_s", x.finish_s},
                    {"vertices", x.vertices},
                    {"tasks", x.tasks},
                    {"preempted", x.preempted},
                    {"slot_seconds", x.slot_seconds},
                    {"max_task_s", x.max_task_s},
                    {"local_bytes", x.local_bytes},
                    {"rack_bytes", x.rack_bytes},
                    {"core_bytes", x.core_bytes},
                    {"many_to_one_bytes", x.many_to_one_bytes},
                    {"many_to_one_core_bytes", x.many_to_one_core_bytes},
                    {"many_to_one_floor_core_bytes", x.many_to_one_floor_core_bytes}});
  }
  j["jobs"] = jobs;
  j["utilisation"] = r.utilisation;
  return j;
}

std::vector<std::string> ChildArgs(const SuiteOptions& o, const Planned& p) {
  std::vector<std::string> a = RunOneArgs(p.spec, p.file);
  a.insert(a.begin(), o.self.string());
  return a;
}

// Runs every planned run that has no file yet, `parallel` at a time, each
// a child process (common/subprocess.h) sharing this one's output.
Status RunChildren(const SuiteOptions& o, const std::vector<Planned>& plan) {
  asio::io_context io;
  std::vector<std::unique_ptr<Subprocess>> children;
  std::string failed;
  Status error;
  size_t next = 0;
  int active = 0;
  std::function<void()> launch = [&] {
    while (error.ok() && active < o.parallel && next < plan.size()) {
      const Planned& p = plan[next++];
      std::vector<std::string> args = ChildArgs(o, p);
      SpawnOptions so;
      so.program = args[0];
      so.args.assign(args.begin() + 1, args.end());
      Result<std::unique_ptr<Subprocess>> child = Subprocess::Spawn(io, std::move(so));
      if (!child.ok()) {
        error = child.status();
        return;
      }
      std::string name = p.file.filename().string();
      (*child)->set_on_exit([&, name](const ExitStatus& st) {
        --active;
        std::cerr << "copse-bench-sim: " << (st.ok() ? "done " : "FAILED ") << name << "\n";
        if (!st.ok()) failed += " " + name;
        launch();
      });
      children.push_back(std::move(*child));
      ++active;
    }
  };
  launch();
  io.run();
  COPSE_RETURN_IF_ERROR(error);
  if (!failed.empty()) return Internal("simulation runs failed:" + failed);
  return Status::Ok();
}

// The paper's Table 3 (ideal running times, seconds) for the report.
const std::map<std::string, double>& PaperIdeal() {
  static const std::map<std::string, double> kTable = {
      {"PrimeSmall2", 14},     {"PrimeSmall4", 14},    {"PrimeSmall5", 14},
      {"PrimeSmall6", 14},     {"PrimeSmall8", 15},    {"PrimeSmall10", 15},
      {"PrimeSmall15", 15},    {"PrimeSmall20", 17},   {"PrimeSmall25", 17},
      {"PrimeSmall500", 29},   {"PrimeSmall1000", 44}, {"PrimeSmall1500", 57},
      {"PrimeSmall2000", 71},  {"PrimeLarge", 1360},   {"WordCount2", 44},
      {"WordCount4", 45},      {"WordCount5", 47},     {"WordCount6", 48},
      {"WordCount8", 49},      {"WordCount10", 47},    {"WordCount15", 52},
      {"WordCount20", 56},     {"WordCount25", 54},    {"WordCount100", 61},
      {"DatabaseJoin40", 309}, {"DatabaseJoin5", 365}, {"Sort10", 365},
      {"Sort40", 409},         {"Sort80", 562},        {"PageRank", 877},
  };
  return kTable;
}

}  // namespace

Result<Json> ReadJson(const fs::path& p) {
  std::ifstream f(p);
  if (!f) return NotFound("cannot read " + p.string());
  try {
    return Json::parse(f);
  } catch (const std::exception& e) {
    return Corruption(p.string() + ": " + e.what());
  }
}

Status WriteText(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  f.close();
  if (!f) return IoError("cannot write " + p.string());
  return Status::Ok();
}

std::string ResultsMarkdown(const std::string& title, const Json& results,
                            const std::vector<std::string>& order,
                            const std::string& ideal_source) {
  const Json& ideal = results["ideal_s"];
  std::ostringstream md;
  md << "# " << title << "\n\n"
     << "Means over seeds; DT in TB (10^12 bytes), shares of the total in brackets.\n\n"
     << "| policy | K | runs | makespan (s) | SNP | slowdown l1 | l2 | l∞ | unfairness | DT total "
        "| DT rack | DT core |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::string, std::vector<const Json*>> by_policy;
  std::vector<std::string> policies;
  for (const Json& r : results["runs"]) {
    std::string p = r["label"];
    if (by_policy[p].empty()) policies.push_back(p);
    by_policy[p].push_back(&r);
  }
  for (const std::string& p : policies) {
    const auto& runs = by_policy[p];
    auto mean = [&](const char* key) {
      double s = 0;
      for (const Json* r : runs) s += (*r)[key].get<double>();
      return s / static_cast<double>(runs.size());
    };
    double local = mean("dt_local_bytes"), rack = mean("dt_rack_bytes"),
           core = mean("dt_core_bytes");
    double total = local + rack + core;
    auto share = [&](double v) { return total > 0 ? Fixed(100 * v / total, 0) : "0"; };
    md << "| " << p << " | " << (*runs[0])["k"].get<int>() << " | " << runs.size() << " | "
       << Fixed(mean("makespan_s"), 0) << " | " << Fixed(mean("snp"), 3) << " | "
       << Fixed(mean("slowdown_l1"), 2) << " | " << Fixed(mean("slowdown_l2"), 2) << " | "
       << Fixed(mean("slowdown_linf"), 2) << " | " << Fixed(mean("unfairness"), 3) << " | "
       << Fixed(total / 1e12, 3) << " | " << Fixed(rack / 1e12, 3) << " (" << share(rack) << "%) | "
       << Fixed(core / 1e12, 3) << " (" << share(core) << "%) |\n";
  }
  md << "\n## Ideal running times (" << ideal_source << ")\n\n"
     << "| instance | ideal (s) | paper Table 3 (s) |\n|---|---|---|\n";
  for (const std::string& name : order) {
    auto p = PaperIdeal().find(name);
    md << "| " << name << " | " << Fixed(ideal.at(name).get<double>(), 1) << " | "
       << (p == PaperIdeal().end() ? std::string("-") : Fixed(p->second, 0)) << " |\n";
  }
  md << "\n## Mean running time per instance and policy (s)\n\n| instance |";
  for (const std::string& p : policies) md << " " << p << " |";
  md << "\n|---|";
  for (size_t i = 0; i < policies.size(); ++i) md << "---|";
  md << "\n";
  for (size_t j = 0; j < order.size(); ++j) {
    md << "| " << order[j] << " |";
    for (const std::string& p : policies) {
      double s = 0;
      for (const Json* r : by_policy[p]) {
        const Json& job = (*r)["jobs"][j];
        s += job["finish_s"].get<double>() - job["start_s"].get<double>();
      }
      md << " " << Fixed(s / static_cast<double>(by_policy[p].size()), 1) << " |";
    }
    md << "\n";
  }
  return md.str();
}

namespace {

Result<std::vector<Planned>> Plan(const SuiteOptions& o, const Experiment& e) {
  fs::path config = o.source_dir / "cluster-configs" / (o.quick ? e.quick_config : e.config);
  fs::path workload = !o.workload.empty() ? o.workload
                                          : o.source_dir / "bench/workloads" /
                                                (o.quick ? e.quick_workload : e.workload);
  // The quick cluster has 24 slots: four jobs at a time keep it busy (the
  // cfq experiment admits every job at once in both modes).
  int k = o.quick && e.k > 1 && e.k <= 10 ? 4 : e.k;
  std::vector<Planned> plan;
  for (int i = 0; i < o.seeds; ++i) {
    uint64_t seed = o.seed + static_cast<uint64_t>(i);
    if (!e.analytic_ideal) {
      RunSpec ideal{config, workload, kIdealPolicy, 1, seed, e.drop};
      Planned p{ideal, o.out / "runs" / RunFileName(ideal), true, false};
      if (e.k == 1 && std::count(e.policies.begin(), e.policies.end(), kIdealPolicy)) {
        p.main = true;  // the ideal experiment's own QP runs
      }
      plan.push_back(p);
    }
    for (const std::string& label : e.policies) {
      if (label == kIdealPolicy && e.k == 1) continue;
      bool naive = label.ends_with("-naive");
      std::string policy = naive ? label.substr(0, label.size() - 6) : label;
      RunSpec s{config, workload, policy, k, seed, e.drop, naive ? "naive" : "accurate"};
      plan.push_back({s, o.out / "runs" / RunFileName(s), false, true});
    }
  }
  return plan;
}

}  // namespace

void DrawFigures(const fs::path& source_dir, const fs::path& out) {
  fs::path plot = source_dir / "bench/sim/plot.py";
  SpawnOptions so;
  so.program = "/usr/bin/python3";
  so.args = {plot.string(), out.string()};
  Result<ProcessResult> r = RunProcess(std::move(so), std::chrono::minutes(10));
  if (!r.ok() || !r->status.ok()) {
    std::cerr << "copse-bench-sim: warning: figures not drawn (python3 " << plot.string()
              << " failed: "
              << (r.ok() ? r->status.ToString() + "; " + r->err : r.status().ToString())
              << "); results.json and results.md are written\n";
  }
}

std::vector<std::string> ExperimentNames() {
  std::vector<std::string> n;
  for (const Experiment& e : Experiments()) n.push_back(e.name);
  n.push_back("scale");
  return n;
}

std::string SuiteCommand(const SuiteOptions& o) {
  std::ostringstream c;
  c << "copse bench sim --experiment " << o.experiment << " --out DIR --seed " << o.seed;
  if (o.seeds > 1) c << " --seeds " << o.seeds;
  if (o.quick) c << " --quick";
  if (!o.workload.empty()) {
    fs::path w = o.workload.lexically_relative(o.source_dir);
    c << " --workload " << (w.empty() || w.string().starts_with("..") ? o.workload : w).string();
  }
  if (o.experiment == "scale" && o.utilisation != 0.9)
    c << " --utilisation " << Fixed(o.utilisation, 2);
  if (o.experiment == "scale" && o.burst > 0) {
    c << " --burst " << o.burst;
    if (o.burst_at_s != 10) c << " --burst-at " << Fixed(o.burst_at_s, 1);
  }
  if (o.experiment == "scale" && o.clock_hint) c << " --clock-hint";
  if (!o.policy.empty()) c << " --policy " << o.policy;
  for (const std::string& solver : o.solvers) c << " --solver " << solver;
  return c.str();
}

Status WriteTiming(const SuiteOptions& o, double wall_s) {
  Json t;
  t["command"] = SuiteCommand(o);
  t["wall_s"] = std::round(wall_s * 10) / 10;
  return WriteText(o.out / "timing.json", DumpJson(t, 1) + "\n");
}

std::vector<std::string> RunOneArgs(const RunSpec& spec, const fs::path& out) {
  std::vector<std::string> a = {"--run-one",
                                "--config",
                                spec.config.string(),
                                "--workload",
                                spec.workload.string(),
                                "--policy",
                                spec.policy,
                                "--k",
                                std::to_string(spec.k),
                                "--seed",
                                std::to_string(spec.seed),
                                "--out",
                                out.string(),
                                "--profiles",
                                spec.profiles};
  for (const std::string& d : spec.drop) {
    a.push_back("--drop");
    a.push_back(d);
  }
  if (spec.scale != 1.0) {
    a.push_back("--scale");
    a.push_back(fmt::format("{:.17g}", spec.scale));
  }
  if (!spec.costs.empty()) {
    a.push_back("--costs");
    a.push_back(spec.costs.string());
  }
  return a;
}

Status RunOne(const RunSpec& spec, const fs::path& out) {
  COPSE_ASSIGN_OR_RETURN(ClusterConfig config, LoadClusterConfig(spec.config));
  COPSE_ASSIGN_OR_RETURN(std::vector<apps::InstanceSpec> workload,
                         apps::LoadWorkload(spec.workload));
  std::set<std::string> drop(spec.drop.begin(), spec.drop.end());
  std::erase_if(workload, [&](const apps::InstanceSpec& s) { return drop.contains(s.name); });
  sim::SimOptions so;
  so.config = config;
  so.scheduler.policy = spec.policy;
  so.max_running_jobs = spec.k;
  so.seed = spec.seed;
  so.scale = spec.scale;
  if (!spec.costs.empty()) {
    std::ifstream f(spec.costs);
    if (!f) return NotFound("cannot read cost model " + spec.costs.string());
    std::stringstream text;
    text << f.rdbuf();
    COPSE_ASSIGN_OR_RETURN(so.costs, sim::CostModelFromJson(text.str(), spec.costs.string()));
  }
  if (spec.profiles == "naive") {
    so.profiles = sim::SimOptions::Profiles::kNaive;
  } else if (spec.profiles == "none") {
    so.profiles = sim::SimOptions::Profiles::kNone;
  } else if (spec.profiles != "accurate") {
    return InvalidArgument("--profiles must be accurate, naive or none, got '" + spec.profiles +
                           "'");
  }
  COPSE_ASSIGN_OR_RETURN(sim::RunResult r, sim::RunSimulation(so, workload));
  return WriteText(out, DumpJson(RunToJson(r, spec)) + "\n");
}

Json MergeRuns(const MergeInfo& info, const std::map<std::string, double>& ideal,
               std::vector<Json> runs) {
  Json results;
  results["experiment"] = info.experiment;
  results["command"] = info.command;
  results["slots"] = runs.empty() ? 0 : runs[0]["slots"].get<int>();
  results["config"] = info.config;
  results["workload"] = info.workload;
  results["quick"] = info.quick;
  results["ideal_s"] = ideal;
  results["runs"] = Json::array();
  for (Json& r : runs) {
    std::vector<JobTimes> times;
    for (Json& j : r["jobs"]) {
      JobTimes t{j["start_s"],     j["finish_s"],   ideal.at(j["name"]),
                 j["local_bytes"], j["rack_bytes"], j["core_bytes"]};
      j["ideal_s"] = t.ideal_s;
      j["anp"] = t.Anp();
      times.push_back(t);
    }
    RunMetrics m = ComputeMetrics(times);
    Json run;
    run["policy"] = r["policy"];
    run["label"] = r["label"];
    run["profiles"] = r["profiles"];
    run["seed"] = r["seed"];
    run["k"] = r["k"];
    run["makespan_s"] = m.makespan_s;
    run["snp"] = m.snp;
    run["slowdown_l1"] = m.slowdown_l1;
    run["slowdown_l2"] = m.slowdown_l2;
    run["slowdown_linf"] = m.slowdown_linf;
    run["unfairness"] = m.unfairness;
    run["dt_local_bytes"] = m.dt_local_bytes;
    run["dt_rack_bytes"] = m.dt_rack_bytes;
    run["dt_core_bytes"] = m.dt_core_bytes;
    run["utilisation_step_s"] = r.value("utilisation_step_s", 30);
    run["utilisation"] = info.keep_utilisation ? r["utilisation"] : Json::array();
    run["jobs"] = r["jobs"];
    results["runs"].push_back(std::move(run));
  }
  return results;
}

Status RunSuite(const SuiteOptions& o) {
  if (o.experiment == "scale") return RunScaleSuite(o);
  auto e = std::find_if(Experiments().begin(), Experiments().end(),
                        [&](const Experiment& x) { return x.name == o.experiment; });
  if (e == Experiments().end()) {
    std::string names;
    for (const std::string& n : ExperimentNames()) names += " " + n;
    return InvalidArgument("unknown experiment '" + o.experiment + "' (known:" + names + ")");
  }
  SteadyClock wall;
  const Timestamp t0 = wall.Now();
  std::error_code ec;
  fs::create_directories(o.out / "runs", ec);
  if (ec) return IoError("cannot create " + (o.out / "runs").string() + ": " + ec.message());
  COPSE_ASSIGN_OR_RETURN(std::vector<Planned> plan, Plan(o, *e));
  for (const Planned& p : plan) fs::remove(p.file, ec);
  COPSE_RETURN_IF_ERROR(RunChildren(o, plan));

  // Ideal times: mean running time of each instance over the QP K = 1 runs.
  std::map<std::string, std::pair<double, int>> sums;
  std::vector<std::string> order;
  std::vector<std::pair<const Planned*, Json>> runs;
  for (const Planned& p : plan) {
    COPSE_ASSIGN_OR_RETURN(Json r, ReadJson(p.file));
    if (p.ideal) {
      order.clear();
      for (const Json& j : r["jobs"]) {
        auto& s = sums[j["name"].get<std::string>()];
        s.first += j["finish_s"].get<double>() - j["start_s"].get<double>();
        ++s.second;
        order.push_back(j["name"]);
      }
    }
    if (p.main) runs.emplace_back(&p, std::move(r));
  }
  std::map<std::string, double> ideal;
  for (const auto& [name, s] : sums) ideal[name] = s.first / s.second;
  std::string ideal_source = "QP, K = 1, mean over seeds";
  if (e->analytic_ideal) {
    ideal_source = "alone on the empty cluster: waves x task time";
    COPSE_ASSIGN_OR_RETURN(ClusterConfig config, LoadClusterConfig(plan[0].spec.config));
    COPSE_ASSIGN_OR_RETURN(std::vector<apps::InstanceSpec> workload,
                           apps::LoadWorkload(plan[0].spec.workload));
    int slots = config.TotalSlots();
    order.clear();
    for (const apps::InstanceSpec& s : workload) {
      int waves = (s.partitions + slots - 1) / slots;
      ideal[s.name] = waves * s.task_seconds;
      order.push_back(s.name);
    }
  }

  std::vector<Json> main_runs;
  for (auto& [p, r] : runs) main_runs.push_back(std::move(r));
  MergeInfo info{o.experiment, SuiteCommand(o), plan[0].spec.config.string(),
                 plan[0].spec.workload.string(), o.quick,
                 // Hundreds of synthetic jobs would make the trace dwarf the rest.
                 !e->analytic_ideal};
  Json results = MergeRuns(info, ideal, std::move(main_runs));
  COPSE_RETURN_IF_ERROR(WriteText(o.out / "results.json", DumpJson(results, 1) + "\n"));
  COPSE_RETURN_IF_ERROR(WriteText(
      o.out / "results.md", ResultsMarkdown("copse bench sim --experiment " + o.experiment, results,
                                            order, ideal_source)));
  DrawFigures(o.source_dir, o.out);
  COPSE_RETURN_IF_ERROR(WriteTiming(o, static_cast<double>((wall.Now() - t0).count()) / 1e6));
  std::cout << (o.out / "results.json").string() << "\n";
  return Status::Ok();
}

}  // namespace copse::bench

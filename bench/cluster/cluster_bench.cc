// copse-bench-cluster (`copse bench cluster`): the Quincy paper's benchmark
// suite (§5, docs/design.md §9) on a real cluster on this machine, with the
// simulator run beside it on the same config and workload.
//
//   copse-bench-cluster --config F [--policy P[,P...]] [--scale X] [--k K]
//                       [--workload W] [--quick] [--netns] [--seed S]
//                       [--out DIR] [--keep]
//
// 1. Brings up the cluster F describes (`copse cluster up`, with --netns in
//    network namespaces) from a copy of F in a temporary directory
//    (client::WriteRunConfig: free ports, its own data root).
// 2. Writes every instance's input with `copse gen` (the paper's kind of
//    data and placement, partition sizes the paper's times --scale; a
//    confined instance larger than its rack spreads over the rack).
// 3. Ideal times: with the cluster under QP (the simulator's ideal policy),
//    runs every instance alone, one after the other (K = 1).
// 4. For each policy: restarts the cluster under it (same data), submits the
//    whole workload at once in its order with `copse run` (the master admits
//    K at a time, K from F unless --k), and waits for every job.
// 5. Calibrates the simulator's cost model from the K = 1 runs
//    (bench/cluster/calibrate.h), then simulates the ideal runs and each
//    policy's run on F and the same scaled workload (copse-bench-sim
//    --run-one children).
// 6. Writes DIR/results.json, results.md and figures in the simulator
//    suite's format (bench/sim/README.md) for the real runs, the same under
//    DIR/sim/ for the simulated ones, DIR/costs.json (the calibrated model),
//    DIR/comparison.md / .json (the two side by side: makespan, per-job
//    running times, bytes by locality), DIR/runs/ (each real run's job
//    documents and run histories) and DIR/timing.json.
// Exit 0 when every job succeeded, 1 when something failed (the run's
// directory and its logs are kept), 2 on bad usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "apps/catalog.h"
#include "apps/instances.h"
#include "bench/cluster/calibrate.h"
#include "bench/sim/metrics.h"
#include "bench/sim/suite.h"
#include "client/loopback_cluster.h"
#include "common/config.h"
#include "common/json.h"
#include "common/process.h"
#include "common/subprocess.h"
#include "scheduler/policy_factory.h"
#include "sim/cost_model.h"

namespace copse::bench {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr const char* kProgram = "copse-bench-cluster";
constexpr const char* kIdealPolicy = "QP";  // as the simulator suite's ideal runs
constexpr double kFullScale = 0.0005;
constexpr double kQuickScale = 0.0002;
constexpr int kMaxFailedPolls = 10;

struct Options {
  fs::path config;
  std::vector<std::string> policies = {"QFP"};
  double scale = 0;  // 0: kFullScale, or kQuickScale with --quick
  int k = 0;         // 0: the config's
  fs::path workload;
  bool quick = false;
  bool netns = false;
  uint64_t seed = 1;
  fs::path out;
  bool keep = false;
  fs::path source_dir;
};

Result<Json> ParseJson(const std::string& text, const std::string& what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Internal(what + ": not JSON: " + text.substr(0, 200));
  return j;
}

// The suite's cluster: F's copy in the run directory, restarted under each
// policy on the same data.
class Bench {
 public:
  Bench(const Options& o, fs::path dir, std::vector<apps::InstanceSpec> workload)
      : o_(o), dir_(std::move(dir)), workload_(std::move(workload)) {}

  Status Run();

 private:
  struct JobRun {
    Json status;   // `copse job status --json`
    Json history;  // `copse job history --json`
  };

  Result<std::string> Copse(std::vector<std::string> args) {
    return client::RunCopse(ExecutableDir(), config_path_, std::move(args));
  }
  Status StartCluster(const std::string& policy);
  Status Generate();
  // Submits instances [first, last) at once and waits for all; their job
  // documents in the same order. Fails when a job does not succeed.
  Result<std::vector<JobRun>> RunJobs(size_t first, size_t last, const std::string& out_suffix);
  Result<Json> RealRun(const std::string& policy, const std::vector<JobRun>& jobs);
  Result<std::vector<VertexSample>> Samples(const std::vector<JobRun>& ideal,
                                            std::vector<double>* root_startups);
  Result<Json> Simulate(const std::string& policy, int k, const fs::path& costs);
  Status Compare(const Json& real, const Json& sim);

  Options o_;
  fs::path dir_;
  std::vector<apps::InstanceSpec> workload_;
  fs::path config_path_;
  ClusterConfig config_;
  std::unique_ptr<client::LoopbackCluster> cluster_;
  int k_ = 0;
};

Status Bench::StartCluster(const std::string& policy) {
  cluster_.reset();  // `cluster down` on the previous one; its data stays
  auto write = [&]() -> Result<fs::path> {
    COPSE_ASSIGN_OR_RETURN(config_path_, client::WriteRunConfig(o_.config, dir_, policy, o_.k));
    COPSE_ASSIGN_OR_RETURN(config_, LoadClusterConfig(config_path_));
    k_ = config_.max_running_jobs;
    std::cerr << kProgram << ": cluster " << config_.name << " up under " << policy << " ("
              << config_.racks.size() << " racks, " << config_.computers.size() << " computers, "
              << config_.TotalSlots() << " slots, K = " << k_ << (o_.netns ? ", netns" : "")
              << ")\n";
    return config_path_;
  };
  COPSE_ASSIGN_OR_RETURN(
      cluster_, client::LoopbackCluster::StartWithFreshPorts(write, ExecutableDir(), o_.netns,
                                                             std::chrono::seconds(120)));
  return Status::Ok();
}

Status Bench::Generate() {
  auto start = Clock::now();
  for (size_t i = 0; i < workload_.size(); ++i) {
    const apps::InstanceSpec& in = workload_[i];
    // gen names a one-file app's output PATH and a two-file app's PATH/FILE;
    // the instance's job reads /NAME/FILE (apps/instances.h).
    COPSE_ASSIGN_OR_RETURN(apps::InputModel model, apps::PaperInputs(in.app, in.partitions));
    const std::string output =
        "/" + in.name + (model.files.size() == 1 ? "/" + model.files[0] : "");
    COPSE_RETURN_IF_ERROR(
        Copse({"gen", in.app, "--output", output, "--partitions", std::to_string(in.partitions),
               "--scale", fmt::format("{:.9g}", o_.scale), "--seed", std::to_string(o_.seed + i),
               "--placement", apps::FitPlacement(in.placement, config_)})
            .status()
            .WithContext("generating " + in.name));
  }
  std::cerr << kProgram << ": inputs of " << workload_.size() << " instances written in "
            << Fixed(std::chrono::duration<double>(Clock::now() - start).count(), 1) << " s\n";
  return Status::Ok();
}

Result<std::vector<Bench::JobRun>> Bench::RunJobs(size_t first, size_t last,
                                                  const std::string& out_suffix) {
  std::vector<uint64_t> ids;
  for (size_t i = first; i < last; ++i) {
    const apps::InstanceSpec& in = workload_[i];
    const std::string output = "/" + in.name + "/out-" + out_suffix;
    COPSE_ASSIGN_OR_RETURN(apps::InstanceJob job, apps::BuildInstanceJob(in, o_.scale, output));
    std::string inputs;
    for (const std::string& f : job.options.inputs) inputs += (inputs.empty() ? "" : ",") + f;
    std::vector<std::string> args = {"run",      job.app, "--input", inputs,
                                     "--output", output,  "--name",  in.name};
    if (job.options.partitions > 0) {
      args.push_back("--partitions");
      args.push_back(std::to_string(job.options.partitions));
    }
    COPSE_ASSIGN_OR_RETURN(std::string said, Copse(args));
    uint64_t id = std::strtoull(said.c_str(), nullptr, 10);
    if (id == 0) return Internal("copse run " + in.name + " printed no job id: " + said);
    ids.push_back(id);
  }
  // Wait for every job, polling the master's list.
  // A master busy with a shuffle of 57,600 buckets on two loaded cores can
  // miss a poll's deadline; only a run of failed polls is an error.
  std::set<uint64_t> pending(ids.begin(), ids.end());
  int failed_polls = 0;
  while (!pending.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    Result<std::string> list = Copse({"job", "list", "--json"});
    if (!list.ok()) {
      if (++failed_polls >= kMaxFailedPolls) return list.status();
      std::cerr << kProgram << ": warning: " << list.status().ToString() << " (poll "
                << failed_polls << " of " << kMaxFailedPolls << " in a row; trying again)\n";
      continue;
    }
    failed_polls = 0;
    COPSE_ASSIGN_OR_RETURN(Json l, ParseJson(*list, "copse job list"));
    for (const Json& j : l["jobs"]) {
      uint64_t id = j["id"];
      std::string state = j["state"];
      if (!pending.contains(id) || state == "queued" || state == "running") continue;
      if (state != "succeeded") {
        return Internal(fmt::format("job {} ({}) {}: {}", id, j["name"].get<std::string>(), state,
                                    j["failure"].get<std::string>()));
      }
      pending.erase(id);
    }
  }
  std::vector<JobRun> runs;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string id = std::to_string(ids[i]);
    JobRun r;
    COPSE_ASSIGN_OR_RETURN(std::string st, Copse({"job", "status", id, "--json"}));
    COPSE_ASSIGN_OR_RETURN(r.status, ParseJson(st, "copse job status " + id));
    COPSE_ASSIGN_OR_RETURN(std::string h, Copse({"job", "history", id, "--json"}));
    COPSE_ASSIGN_OR_RETURN(r.history, ParseJson(h, "copse job history " + id));
    COPSE_RETURN_IF_ERROR(
        Copse({"fs", "rm", "/" + workload_[first + i].name + "/out-" + out_suffix}).status());
    runs.push_back(std::move(r));
  }
  return runs;
}

// One real run in the raw form the simulator's runs have (bench/sim/suite.h
// RunOne), times in seconds from the first submission.
Result<Json> Bench::RealRun(const std::string& policy, const std::vector<JobRun>& jobs) {
  int64_t t0 = INT64_MAX, end = 0;
  for (const JobRun& j : jobs) {
    t0 = std::min(t0, j.status["submitted_ms"].get<int64_t>());
    end = std::max(end, j.status["finished_ms"].get<int64_t>());
  }
  auto at = [&](int64_t ms) { return static_cast<double>(ms - t0) / 1000.0; };
  Json run;
  run["policy"] = policy;
  run["label"] = policy;
  run["profiles"] = "accurate";
  run["seed"] = o_.seed;
  run["k"] = k_;
  run["slots"] = config_.TotalSlots();
  run["makespan_s"] = at(end);
  // Busy worker slots per job, sampled every step (about 200 samples).
  const double step = std::max(1.0, std::ceil(at(end) / 200));
  const size_t samples = static_cast<size_t>(at(end) / step) + 1;
  Json util = Json::array();
  std::vector<std::vector<int>> busy(samples, std::vector<int>(jobs.size(), 0));
  Json out = Json::array();
  for (size_t j = 0; j < jobs.size(); ++j) {
    const Json& st = jobs[j].status;
    int tasks = 0, preempted = 0;
    double slot_s = 0, max_task = 0;
    for (const Json& r : jobs[j].history["runs"]) {
      if (r["root"].get<bool>()) continue;
      int64_t ended = r["ended_ms"];
      if (ended < 0) continue;
      double s = static_cast<double>(ended - r["launched_ms"].get<int64_t>()) / 1000.0;
      ++tasks;
      if (r["state"] == "preempted") ++preempted;
      slot_s += s;
      max_task = std::max(max_task, s);
      for (size_t t = 0; t < samples; ++t) {
        double when = static_cast<double>(t) * step;
        if (at(r["launched_ms"]) <= when && when < at(ended)) ++busy[t][j];
      }
    }
    out.push_back({{"name", st["name"]},
                   {"submit_s", at(st["submitted_ms"])},
                   {"start_s", at(st["admitted_ms"])},
                   {"finish_s", at(st["finished_ms"])},
                   {"vertices", st["vertices"]["total"]},
                   {"tasks", tasks},
                   {"preempted", preempted},
                   {"slot_seconds", slot_s},
                   {"max_task_s", max_task},
                   {"local_bytes", st["bytes_read"]["local"]},
                   {"rack_bytes", st["bytes_read"]["rack"]},
                   {"core_bytes", st["bytes_read"]["core"]}});
  }
  run["jobs"] = out;
  for (const auto& row : busy) util.push_back(row);
  run["utilisation_step_s"] = step;
  run["utilisation"] = util;
  return run;
}

// Every worker run of the ideal jobs, keyed as the cost model keys stages.
Result<std::vector<VertexSample>> Bench::Samples(const std::vector<JobRun>& ideal,
                                                 std::vector<double>* root_startups) {
  std::vector<VertexSample> out;
  for (size_t i = 0; i < ideal.size(); ++i) {
    const apps::InstanceSpec& in = workload_[i];
    COPSE_ASSIGN_OR_RETURN(apps::InstanceJob job, apps::BuildInstanceJob(in, o_.scale));
    COPSE_ASSIGN_OR_RETURN(apps::AppJob app, apps::BuildApp(job.app, job.options));
    std::map<std::string, std::string> key;  // stage name -> "kind/program.role"
    for (size_t s = 0; s < app.spec.stages.size(); ++s) {
      key[app.spec.stages[s].name] =
          in.app + "/" + app.spec.stages[s].program + "." + app.sizes[s].role;
    }
    int64_t root_launch = -1, first_vertex = INT64_MAX;
    for (const Json& r : ideal[i].history["runs"]) {
      int64_t launched = r["launched_ms"], ended = r["ended_ms"];
      if (r["root"].get<bool>()) {
        if (root_launch < 0) root_launch = launched;
        continue;
      }
      first_vertex = std::min(first_vertex, launched);
      if (r["state"] != "completed" || ended < 0) continue;
      std::string label = r["label"];  // STAGE[INDEX] vVERSION
      auto it = key.find(label.substr(0, label.find('[')));
      if (it == key.end()) return Internal("a run of " + in.name + " of no known stage: " + label);
      const Json& b = r["bytes_read"];
      out.push_back({it->second, static_cast<double>(ended - launched) / 1000.0,
                     b["local"].get<int64_t>(),
                     b["rack"].get<int64_t>() + b["core"].get<int64_t>()});
    }
    if (root_launch >= 0 && first_vertex != INT64_MAX) {
      root_startups->push_back(static_cast<double>(first_vertex - root_launch) / 1000.0);
    }
  }
  return out;
}

// One simulated run (a copse-bench-sim --run-one child), raw.
Result<Json> Bench::Simulate(const std::string& policy, int k, const fs::path& costs) {
  RunSpec spec;
  spec.config = config_path_;
  spec.workload = o_.workload;
  spec.policy = policy;
  spec.k = k;
  spec.seed = o_.seed;
  spec.scale = o_.scale;
  spec.costs = costs;
  fs::create_directories(o_.out / "sim" / "runs");
  const fs::path file = o_.out / "sim" / "runs" / fmt::format("{}-k{}.json", policy, k);
  SpawnOptions so;
  so.program = ExecutableDir() / "copse-bench-sim";
  so.args = RunOneArgs(spec, file);
  COPSE_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(std::move(so), std::chrono::minutes(30)));
  if (!r.status.ok()) {
    return Internal(
        fmt::format("simulating {} (K = {}): {}: {}", policy, k, r.status.ToString(), r.err));
  }
  return ReadJson(file);
}

std::map<std::string, double> IdealTimes(const Json& run) {
  std::map<std::string, double> ideal;
  for (const Json& j : run["jobs"]) {
    ideal[j["name"]] = j["finish_s"].get<double>() - j["start_s"].get<double>();
  }
  return ideal;
}

std::string Bytes(double b) { return Fixed(b / 1e6, 1); }

Status Bench::Compare(const Json& real, const Json& sim) {
  std::ostringstream md;
  Json cmp;
  cmp["command"] = real["command"];
  md << "# Real cluster and simulator side by side\n\n"
     << "`" << real["command"].get<std::string>() << "`: the real runs (results.json) beside the "
     << "simulator's on the same config and scaled workload, with its cost model calibrated "
     << "from this machine's K = 1 runs (costs.json; sim/results.json). Ratio: simulated / "
     << "real. Bytes in MB.\n\n"
     << "| policy | makespan real (s) | sim (s) | ratio | SNP real | sim | unfairness real | sim "
        "| local MB real | sim | rack MB real | sim | core MB real | sim |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  cmp["policies"] = Json::array();
  for (size_t p = 0; p < real["runs"].size(); ++p) {
    const Json& r = real["runs"][p];
    const Json& s = sim["runs"][p];
    double ratio = s["makespan_s"].get<double>() / r["makespan_s"].get<double>();
    md << "| " << r["label"].get<std::string>() << " | " << Fixed(r["makespan_s"], 1) << " | "
       << Fixed(s["makespan_s"], 1) << " | " << Fixed(ratio, 2) << " | " << Fixed(r["snp"], 3)
       << " | " << Fixed(s["snp"], 3) << " | " << Fixed(r["unfairness"], 3) << " | "
       << Fixed(s["unfairness"], 3);
    for (const char* level : {"dt_local_bytes", "dt_rack_bytes", "dt_core_bytes"}) {
      md << " | " << Bytes(r[level].get<double>()) << " | " << Bytes(s[level].get<double>());
    }
    md << " |\n";
    Json pj = {{"policy", r["label"]},
               {"makespan_s", {{"real", r["makespan_s"]}, {"sim", s["makespan_s"]}}},
               {"snp", {{"real", r["snp"]}, {"sim", s["snp"]}}},
               {"jobs", Json::array()}};
    for (size_t j = 0; j < r["jobs"].size(); ++j) {
      const Json& rj = r["jobs"][j];
      const Json& sj = s["jobs"][j];
      pj["jobs"].push_back(
          {{"name", rj["name"]},
           {"time_s",
            {{"real", rj["finish_s"].get<double>() - rj["start_s"].get<double>()},
             {"sim", sj["finish_s"].get<double>() - sj["start_s"].get<double>()}}},
           {"local_bytes", {{"real", rj["local_bytes"]}, {"sim", sj["local_bytes"]}}},
           {"rack_bytes", {{"real", rj["rack_bytes"]}, {"sim", sj["rack_bytes"]}}},
           {"core_bytes", {{"real", rj["core_bytes"]}, {"sim", sj["core_bytes"]}}}});
    }
    cmp["policies"].push_back(std::move(pj));
  }
  md << "\n## Ideal running times (K = 1, s)\n\n| instance | real | sim | ratio "
        "|\n|---|---|---|---|\n";
  Json ideal = Json::array();
  std::vector<double> ratios;
  for (const apps::InstanceSpec& in : workload_) {
    double r = real["ideal_s"][in.name], s = sim["ideal_s"][in.name];
    ratios.push_back(s / r);
    md << "| " << in.name << " | " << Fixed(r, 2) << " | " << Fixed(s, 2) << " | "
       << Fixed(s / r, 2) << " |\n";
    ideal.push_back({{"name", in.name}, {"real", r}, {"sim", s}});
  }
  cmp["ideal_s"] = ideal;
  for (const Json& pj : cmp["policies"]) {
    md << "\n## Running time per job under " << pj["policy"].get<std::string>()
       << " (s; bytes in MB)\n\n"
       << "| instance | real | sim | ratio | local real | sim | rack real | sim | core real | sim "
          "|\n|---|---|---|---|---|---|---|---|---|---|\n";
    std::vector<double> job_ratios;
    for (const Json& j : pj["jobs"]) {
      double r = j["time_s"]["real"], s = j["time_s"]["sim"];
      job_ratios.push_back(s / r);
      md << "| " << j["name"].get<std::string>() << " | " << Fixed(r, 1) << " | " << Fixed(s, 1)
         << " | " << Fixed(s / r, 2);
      for (const char* level : {"local_bytes", "rack_bytes", "core_bytes"}) {
        md << " | " << Bytes(j[level]["real"].get<double>()) << " | "
           << Bytes(j[level]["sim"].get<double>());
      }
      md << " |\n";
    }
    std::sort(job_ratios.begin(), job_ratios.end());
    md << "\nPer-job ratio sim/real: median " << Fixed(job_ratios[job_ratios.size() / 2], 2)
       << ", range " << Fixed(job_ratios.front(), 2) << "–" << Fixed(job_ratios.back(), 2) << ".\n";
  }
  std::sort(ratios.begin(), ratios.end());
  md << "\nIdeal-time ratio sim/real over the instances: median "
     << Fixed(ratios[ratios.size() / 2], 2) << ", range " << Fixed(ratios.front(), 2) << "–"
     << Fixed(ratios.back(), 2) << ".\n";
  COPSE_RETURN_IF_ERROR(WriteText(o_.out / "comparison.json", DumpJson(cmp, 1) + "\n"));
  COPSE_RETURN_IF_ERROR(WriteText(o_.out / "comparison.md", md.str()));
  std::cout << md.str();
  return Status::Ok();
}

std::string Command(const Options& o) {
  std::string policies;
  for (const std::string& p : o.policies) policies += (policies.empty() ? "" : ",") + p;
  fs::path config = o.config.lexically_relative(o.source_dir);
  std::string c = fmt::format(
      "copse bench cluster --config {} --policy {} --scale {:g} --seed {}",
      (config.empty() || config.string().starts_with("..") ? o.config : config).string(), policies,
      o.scale, o.seed);
  if (o.k > 0) c += fmt::format(" --k {}", o.k);
  fs::path w = o.workload.lexically_relative(o.source_dir);
  c += " --workload " + (w.empty() || w.string().starts_with("..") ? o.workload : w).string();
  if (o.quick) c += " --quick";
  if (o.netns) c += " --netns";
  return c + " --out DIR";
}

Status Bench::Run() {
  auto wall = Clock::now();
  fs::create_directories(o_.out / "runs");
  COPSE_RETURN_IF_ERROR(StartCluster(kIdealPolicy));
  COPSE_RETURN_IF_ERROR(Generate());

  // Ideal: each instance alone.
  std::vector<JobRun> ideal;
  Json ideal_runs = Json::array();
  for (size_t i = 0; i < workload_.size(); ++i) {
    auto start = Clock::now();
    COPSE_ASSIGN_OR_RETURN(std::vector<JobRun> one, RunJobs(i, i + 1, "ideal"));
    std::cerr << kProgram << ": ideal " << workload_[i].name << " "
              << Fixed(std::chrono::duration<double>(Clock::now() - start).count(), 1) << " s\n";
    ideal_runs.push_back({{"status", one[0].status}, {"history", one[0].history}});
    ideal.push_back(std::move(one[0]));
  }
  COPSE_RETURN_IF_ERROR(WriteText(o_.out / "runs" / "ideal-k1.json", DumpJson(ideal_runs) + "\n"));
  std::map<std::string, double> real_ideal;
  for (const JobRun& j : ideal) {
    real_ideal[j.status["name"]] = static_cast<double>(j.status["finished_ms"].get<int64_t>() -
                                                       j.status["admitted_ms"].get<int64_t>()) /
                                   1000.0;
  }

  // Each policy: the whole workload at once.
  std::vector<Json> real_runs;
  for (const std::string& policy : o_.policies) {
    COPSE_RETURN_IF_ERROR(StartCluster(policy));
    auto start = Clock::now();
    COPSE_ASSIGN_OR_RETURN(std::vector<JobRun> jobs, RunJobs(0, workload_.size(), policy));
    std::cerr << kProgram << ": " << policy << " ran the workload in "
              << Fixed(std::chrono::duration<double>(Clock::now() - start).count(), 1) << " s\n";
    Json raw = Json::array();
    for (const JobRun& j : jobs) raw.push_back({{"status", j.status}, {"history", j.history}});
    COPSE_RETURN_IF_ERROR(
        WriteText(o_.out / "runs" / fmt::format("{}-k{}.json", policy, k_), DumpJson(raw) + "\n"));
    COPSE_ASSIGN_OR_RETURN(Json run, RealRun(policy, jobs));
    real_runs.push_back(std::move(run));
  }
  cluster_.reset();

  // The simulator beside it, calibrated from the ideal runs.
  std::vector<double> roots;
  COPSE_ASSIGN_OR_RETURN(std::vector<VertexSample> samples, Samples(ideal, &roots));
  Calibration cal = Calibrate(samples, roots, config_.network.computer_link_bps / 1e9);
  const fs::path costs = o_.out / "costs.json";
  COPSE_RETURN_IF_ERROR(WriteText(costs, sim::CostModelToJson(cal.model)));
  fs::create_directories(o_.out / "sim");
  COPSE_ASSIGN_OR_RETURN(Json sim_ideal_run, Simulate(kIdealPolicy, 1, costs));
  std::vector<Json> sim_runs;
  for (const std::string& policy : o_.policies) {
    COPSE_ASSIGN_OR_RETURN(Json run, Simulate(policy, k_, costs));
    sim_runs.push_back(std::move(run));
  }

  const std::string command = Command(o_);
  std::vector<std::string> order;
  for (const apps::InstanceSpec& in : workload_) order.push_back(in.name);
  MergeInfo info{"cluster", command, o_.config.string(), o_.workload.string(), o_.quick, true};
  Json real = MergeRuns(info, real_ideal, std::move(real_runs));
  COPSE_RETURN_IF_ERROR(WriteText(o_.out / "results.json", DumpJson(real, 1) + "\n"));
  COPSE_RETURN_IF_ERROR(WriteText(o_.out / "results.md",
                                  ResultsMarkdown("copse bench cluster (real runs)", real, order,
                                                  "real cluster, each instance alone under QP")));
  info.command = command + " (simulated beside it)";
  Json sim = MergeRuns(info, IdealTimes(sim_ideal_run), std::move(sim_runs));
  COPSE_RETURN_IF_ERROR(WriteText(o_.out / "sim" / "results.json", DumpJson(sim, 1) + "\n"));
  COPSE_RETURN_IF_ERROR(
      WriteText(o_.out / "sim" / "results.md",
                ResultsMarkdown("copse bench cluster (simulated beside it)", sim, order,
                                "simulated, QP with K = 1, calibrated costs")));
  DrawFigures(o_.source_dir, o_.out);
  DrawFigures(o_.source_dir, o_.out / "sim");
  COPSE_RETURN_IF_ERROR(Compare(real, sim));
  Json timing = {
      {"command", command},
      {"wall_s", std::round(std::chrono::duration<double>(Clock::now() - wall).count() * 10) / 10}};
  COPSE_RETURN_IF_ERROR(WriteText(o_.out / "timing.json", DumpJson(timing, 1) + "\n"));
  std::cout << (o_.out / "results.json").string() << "\n";
  return Status::Ok();
}

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace
}  // namespace copse::bench

int main(int argc, char** argv) {
  using namespace copse;
  using namespace copse::bench;
  CLI::App app{
      "copse bench cluster: the Quincy paper's suite on a real cluster, the simulator "
      "beside it"};
  Options o;
  std::string config, policies = "QFP", workload, out;
  app.add_option("--config", config, "cluster config (e.g. cluster-configs/bench-local.toml)")
      ->required();
  app.add_option("--policy", policies, "scheduling policies, comma-separated (default QFP)");
  app.add_option("--scale", o.scale,
                 "partition sizes: the paper's times this (default 0.0005; 0.0002 with --quick)")
      ->check(CLI::Range(1e-7, 1.0));
  app.add_option("--k", o.k, "admission limit K (default: the config's)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--workload", workload,
                 "workload file (default bench/workloads/quincy30.toml; quick.toml with --quick)");
  app.add_flag("--quick", o.quick, "the 10-instance quick workload at a smaller scale (CI)");
  app.add_flag("--netns", o.netns, "start the cluster in network namespaces (root; docs/netns.md)");
  app.add_option("--seed", o.seed, "generator and simulator seed (default 1)");
  app.add_option("--out", out, "output directory")->required();
  app.add_flag("--keep", o.keep, "keep the run's directory (cluster data and logs)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  const char* src = std::getenv("COPSE_SOURCE_DIR");
  o.source_dir = src != nullptr ? src : COPSE_SOURCE_DIR;
  std::error_code ec;
  o.config = fs::absolute(config, ec);
  if (ec || !fs::is_regular_file(o.config)) {
    std::cerr << kProgram << ": --config " << config << ": no such file\n";
    return 2;
  }
  o.workload = !workload.empty()
                   ? fs::absolute(workload, ec)
                   : o.source_dir / "bench/workloads" / (o.quick ? "quick.toml" : "quincy30.toml");
  if (o.scale == 0) o.scale = o.quick ? kQuickScale : kFullScale;
  o.policies = Split(policies);
  const std::vector<std::string> known = copse::scheduler::PolicyNames();
  for (const std::string& p : o.policies) {
    if (std::find(known.begin(), known.end(), p) == known.end()) {
      std::cerr << kProgram << ": --policy: unknown policy '" << p << "'\n";
      return 2;
    }
  }
  if (o.policies.empty()) {
    std::cerr << kProgram << ": --policy names no policy\n";
    return 2;
  }
  Result<std::vector<apps::InstanceSpec>> w = apps::LoadWorkload(o.workload);
  if (!w.ok()) {
    std::cerr << kProgram << ": " << w.status().ToString() << "\n";
    return 2;
  }
  for (const apps::InstanceSpec& in : *w) {
    if (in.app == "synthetic" || in.submit_s != 0) {
      std::cerr << kProgram << ": " << o.workload.string() << ": instance " << in.name
                << ": the real-cluster suite runs the sample apps submitted at once (no "
                   "synthetic jobs or submit_s)\n";
      return 2;
    }
  }
  Result<ClusterConfig> c = LoadClusterConfig(o.config);
  if (!c.ok()) {
    std::cerr << kProgram << ": " << c.status().ToString() << "\n";
    return 2;
  }
  o.out = fs::absolute(out, ec);
  fs::create_directories(o.out, ec);
  if (ec) {
    std::cerr << kProgram << ": cannot create " << o.out.string() << ": " << ec.message() << "\n";
    return 1;
  }
  Result<std::unique_ptr<client::RunDir>> dir =
      client::RunDir::Create("copse-bench-cluster", o.keep);
  if (!dir.ok()) {
    std::cerr << kProgram << ": " << dir.status().ToString() << "\n";
    return 1;
  }
  Bench bench(o, (*dir)->path(), std::move(*w));
  Status s = bench.Run();
  if (!s.ok()) return (*dir)->Failed(kProgram, s);
  return 0;
}

// The simulator benchmark suite behind `copse bench sim` (copse-bench-sim):
// the Quincy paper's experiments (ideal, unconstrained, constrained) and the
// CFQ paper's (cfq) on the simulator. Each (policy, seed) run happens in a child process (SimGrid
// allows one engine per process), at most `parallel` at a time; the parent
// merges them into DIR/results.json (schema: bench/sim/README.md),
// DIR/results.md and, through bench/sim/plot.py, PNG figures.
// Thread-safety: none; one suite per process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "copse/status.h"
#include "sim/simulator.h"

namespace copse::bench {

struct SuiteOptions {
  std::string experiment;            // ideal, unconstrained, constrained
  std::filesystem::path out;         // output directory
  uint64_t seed = 1;                 // first seed
  int seeds = 1;                     // seeds seed .. seed+seeds-1
  bool quick = false;                // reduced cluster and workload
  std::filesystem::path source_dir;  // the Copse source tree (configs, workloads, plot.py)
  std::filesystem::path self;        // this executable, run for each child
  int parallel = 2;                  // children at once
  double utilisation = 0.9;          // scale: offered load (arrival rate x mean duration / slots)
  std::filesystem::path workload;    // if set: replaces the experiment's workload file
  std::string policy;                // scale: a Quincy policy instead of Q (e.g. QP)
  std::vector<std::string> solvers;  // scale: only these solvers (default: all)
  int burst = 0;                     // scale: a burst job of this many tasks (sim::ScaleOptions)
  double burst_at_s = 10;            // scale: when it arrives
  bool clock_hint = false;           // scale: [scheduler] clock_hint = 1 (QuincyOptions)
};

// Reads a JSON file; kNotFound / kCorruption name it.
Result<nlohmann::ordered_json> ReadJson(const std::filesystem::path& path);
// Writes `text` to `path`; kIoError names it.
Status WriteText(const std::filesystem::path& path, const std::string& text);

// The experiments' names.
std::vector<std::string> ExperimentNames();

// The command that reruns `options` (`copse bench sim --experiment ... --out
// DIR ...`), recorded in results.json as "command" so that the report
// (bench/sim/report.py) names what produced each results directory.
std::string SuiteCommand(const SuiteOptions& options);

// Writes DIR/timing.json: {"command": ..., "wall_s": ...}. Wall time is kept
// out of results.json, which is byte-identical for a seed.
Status WriteTiming(const SuiteOptions& options, double wall_s);

// Draws an experiment's figures from its results in `out` with
// bench/sim/plot.py; a warning, not an error, when python3 cannot.
void DrawFigures(const std::filesystem::path& source_dir, const std::filesystem::path& out);

// Runs one experiment end to end. kInvalidArgument for an unknown experiment.
Status RunSuite(const SuiteOptions& options);

// One run, in a child: what it simulates.
struct RunSpec {
  std::filesystem::path config;
  std::filesystem::path workload;
  std::string policy;
  int k = 10;
  uint64_t seed = 1;
  std::vector<std::string> drop;      // instance names left out of the workload
  std::string profiles = "accurate";  // CFQ/SRPT job profiles: accurate, naive, none
  double scale = 1.0;                 // input sizes: the paper's times this
  std::filesystem::path costs;        // a cost model file (sim/cost_model.h); empty: the paper's
};

// The child's command-line arguments for `spec` (after the program):
// --run-one and every field, the raw run written to `out`.
std::vector<std::string> RunOneArgs(const RunSpec& spec, const std::filesystem::path& out);

// The merged results of one experiment's runs, as `copse bench sim` writes
// them (results.json, schema in bench/sim/README.md): each raw run (RunOne's
// JSON) with its metrics against `ideal` (instance name -> ideal seconds).
// `runs` hold the jobs in workload order.
struct MergeInfo {
  std::string experiment;
  std::string command;
  std::string config;
  std::string workload;
  bool quick = false;
  bool keep_utilisation = true;
};
nlohmann::ordered_json MergeRuns(const MergeInfo& info, const std::map<std::string, double>& ideal,
                                 std::vector<nlohmann::ordered_json> runs);

// results.md of merged results (the summary table, ideal times beside the
// paper's Table 3, each instance's mean running time per policy).
std::string ResultsMarkdown(const std::string& title, const nlohmann::ordered_json& results,
                            const std::vector<std::string>& order, const std::string& ideal_source);

// The `scale` experiment (bench/sim/scale_suite.cc): placement latency of
// each flow solver on the network-less scale simulator (sim/scale_sim.h),
// run in this process, one solver after the other (their wall times are
// the measurement, so they never run side by side).
Status RunScaleSuite(const SuiteOptions& options);

// Simulates `spec` and writes the raw run (sim::RunResult) as JSON to `out`.
Status RunOne(const RunSpec& spec, const std::filesystem::path& out);

}  // namespace copse::bench

// copse-bench-sim: the Quincy paper's experiments on the simulator.
//   copse bench sim --experiment NAME --out DIR [--seed S] [--seeds N] [--quick]
// (the copse client runs this executable for `copse bench sim`). Experiments:
// ideal, unconstrained, constrained, cfq, scale; bench/sim/README.md describes them and
// the results.json schema. `--run-one` is the per-run child mode.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "bench/sim/suite.h"

int main(int argc, char** argv) {
  CLI::App app{"copse bench sim: the Quincy paper's experiments on the simulator"};
  copse::bench::SuiteOptions o;
  std::string out;
  bool run_one = false;
  copse::bench::RunSpec spec;
  std::string config, workload;
  app.add_option("--experiment", o.experiment, "ideal | unconstrained | constrained | cfq | scale");
  app.add_option("--out", out, "output directory (results.json, results.md, figures)")->required();
  app.add_option("--seed", o.seed, "first seed (default 1)");
  app.add_option("--seeds", o.seeds, "number of seeds (default 1)")->check(CLI::Range(1, 100));
  app.add_flag("--quick", o.quick, "reduced cluster and workload (CI)");
  app.add_option("--parallel", o.parallel, "simulations at once (default 2)")
      ->check(CLI::Range(1, 64));
  app.add_option(
         "--utilisation", o.utilisation,
         "scale: offered load as a share of the slots (default 0.9; above 1 oversubscribes)")
      ->check(CLI::Range(0.05, 1.5));
  app.add_option("--burst", o.burst,
                 "scale: one job of this many tasks, every input in the first 4 racks, arrives "
                 "at --burst-at (a forced burst)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--burst-at", o.burst_at_s,
                 "scale: when the burst arrives, simulated s (default 10)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_flag("--clock-hint", o.clock_hint,
               "scale: the Quincy policy passes the clock to the flow solver as two shifted cost "
               "groups ([scheduler] clock_hint = 1)");
  app.add_flag("--run-one", run_one, "child mode: one simulation, raw run JSON to --out");
  app.add_option("--config", config, "child: cluster config");
  app.add_option("--workload", workload,
                 "workload file instead of the experiment's (ideal, unconstrained, constrained, "
                 "cfq); child: the run's workload");
  std::vector<std::string> solvers;
  app.add_option("--policy", spec.policy,
                 "scale: Quincy policy (default Q; QP keeps running tasks movable); child: policy");
  app.add_option("--solver", solvers, "scale: run only this flow solver (repeatable)");
  app.add_option("--k", spec.k, "child: admission limit K")->check(CLI::Range(1, 100000));
  app.add_option("--drop", spec.drop, "child: instance left out (repeatable)");
  app.add_option("--profiles", spec.profiles, "child: CFQ/SRPT profiles: accurate, naive, none");
  app.add_option("--scale", spec.scale, "child: input sizes, the paper's times this (default 1)")
      ->check(CLI::Range(1e-9, 1e9));
  std::string costs;
  app.add_option("--costs", costs, "child: cost model file (default: the paper's)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (run_one) {
    spec.config = config;
    spec.workload = workload;
    spec.seed = o.seed;
    spec.costs = costs;
    copse::Status s = copse::bench::RunOne(spec, out);
    if (!s.ok()) {
      std::cerr << "copse-bench-sim: " << s.ToString() << "\n";
      return s.code() == copse::StatusCode::kInvalidArgument ? 2 : 1;
    }
    return 0;
  }
  if (o.experiment.empty()) {
    std::cerr << "copse bench sim: --experiment is required\n";
    return 2;
  }
  o.out = out;
  if (!spec.policy.empty() || !solvers.empty()) {
    if (o.experiment != "scale") {
      std::cerr << "copse bench sim: --policy and --solver apply to scale only (the other "
                   "experiments run their fixed policy lists)\n";
      return 2;
    }
    o.policy = spec.policy;
    o.solvers = solvers;
  }
  if (o.burst > 0 && o.experiment != "scale") {
    std::cerr << "copse bench sim: --burst applies to scale only\n";
    return 2;
  }
  if (o.clock_hint && o.experiment != "scale") {
    std::cerr << "copse bench sim: --clock-hint applies to scale only\n";
    return 2;
  }
  if (!workload.empty()) {
    if (o.experiment == "scale") {
      std::cerr << "copse bench sim: --workload does not apply to scale (its workload is "
                   "generated)\n";
      return 2;
    }
    std::error_code ec;
    o.workload = std::filesystem::absolute(workload, ec);
    if (ec || !std::filesystem::is_regular_file(o.workload)) {
      std::cerr << "copse bench sim: --workload " << workload << ": no such file\n";
      return 2;
    }
  }
  const char* src = std::getenv("COPSE_SOURCE_DIR");
  o.source_dir = src != nullptr ? src : COPSE_SOURCE_DIR;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    std::cerr << "copse-bench-sim: cannot find its own executable\n";
    return 1;
  }
  o.self = std::string(self, static_cast<size_t>(n));
  copse::Status s = copse::bench::RunSuite(o);
  if (!s.ok()) {
    std::cerr << "copse-bench-sim: " << s.ToString() << "\n";
    return s.code() == copse::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}

// copse-bench-flow-dimacs: times one Copse solver from scratch against LEMON's
// NetworkSimplex on DIMACS files (for instance the graphs copse-bench-flow
// writes with --dimacs-dir), alternating the two on each file so that both
// see the same machine load. Prints, per file, the median of each and their
// ratio, then the geometric mean and the largest ratio over the files.
// Every Copse answer must have LEMON's cost; a disagreement exits with 1.
//
// Usage: copse-bench-flow-dimacs [--algorithm NAME] [--repeat N] FILE...
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench/flow/bench_solvers.h"
#include "bench/sim/metrics.h"
#include "scheduler/flow/dimacs.h"
#include "scheduler/flow/lemon/lemon_reference.h"

namespace copse::bench {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}


int Run(const std::string& algorithm, int repeat, const std::vector<std::string>& files) {
  double log_sum = 0, worst = 0;
  for (const std::string& path : files) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "%s: cannot open\n", path.c_str());
      return 2;
    }
    auto problem = flow::ReadDimacs(in, path);
    if (!problem.ok()) {
      std::fprintf(stderr, "%s\n", problem.status().ToString().c_str());
      return 2;
    }
    auto loaded = flow::LoadDimacs(*problem, path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      return 2;
    }
    const flow::FlowGraph& g = loaded->graph;
    std::vector<double> copse_ms, lemon_ms;
    for (int k = 0; k < repeat; ++k) {
      auto solver = MakeBenchSolver(algorithm);  // a new object: from scratch
      if (!solver.ok()) {
        std::fprintf(stderr, "%s\n", solver.status().ToString().c_str());
        return 2;
      }
      flow::FlowSolution sol;
      auto t = Clock::now();
      Status st = (*solver)->Solve(g, &sol, nullptr);
      copse_ms.push_back(MsSince(t));
      flow::lemon_ref::LemonResult lemon =
          flow::lemon_ref::Solve(g, flow::lemon_ref::Algorithm::kNetworkSimplex);
      lemon_ms.push_back(lemon.solve_ms);
      if (st.ok() != lemon.feasible || (st.ok() && sol.cost != lemon.cost)) {
        std::fprintf(stderr, "%s: %s disagrees with LEMON (%s, cost %lld against %lld)\n",
                     path.c_str(), algorithm.c_str(), st.ToString().c_str(),
                     static_cast<long long>(sol.cost), static_cast<long long>(lemon.cost));
        return 1;
      }
    }
    const double a = Median(copse_ms), b = Median(lemon_ms), ratio = a / b;
    log_sum += std::log(ratio);
    worst = std::max(worst, ratio);
    std::printf("%-28s %s %8.3f ms  network_simplex %8.3f ms  %.2fx\n", path.c_str(),
                algorithm.c_str(), a, b, ratio);
  }
  std::printf("geometric mean %.3fx, largest %.2fx over %zu files\n",
              std::exp(log_sum / static_cast<double>(files.size())), worst, files.size());
  return 0;
}

}  // namespace
}  // namespace copse::bench

int main(int argc, char** argv) {
  CLI::App app{"Times a Copse solver from scratch against LEMON's NetworkSimplex on DIMACS files"};
  std::string algorithm = "cost_scaling";
  int repeat = 7;
  std::vector<std::string> files;
  app.add_option("--algorithm", algorithm,
                 "solver name (copse flow --algorithm, or a variant of bench_solvers.h)");
  app.add_option("--repeat", repeat, "solves of each file per solver; the median is reported")
      ->check(CLI::Range(1, 99));
  app.add_option("files", files, "DIMACS min-cost-flow files")->required();
  CLI11_PARSE(app, argc, argv);
  return copse::bench::Run(algorithm, repeat, files);
}

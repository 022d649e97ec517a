// The Quincy paper's metrics (§5.2) over one run's jobs: ANP (ideal time over
// measured time), SNP (geometric mean of ANP), slowdown norms l1, l2, l∞ of
// σ = 1/ANP, Unfairness (coefficient of variation of ANP, population
// standard deviation) and data transferred split into local, within-rack and
// across the core switch. Pure functions, shared by the simulator suite and
// the real-cluster suite, and the percentiles the benchmarks report.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace copse::bench {

struct JobTimes {
  double start_s = 0;
  double finish_s = 0;
  double ideal_s = 0;
  int64_t local_bytes = 0;
  int64_t rack_bytes = 0;
  int64_t core_bytes = 0;

  // ideal_s / (finish_s - start_s). REQUIRES: finish_s > start_s.
  double Anp() const { return ideal_s / (finish_s - start_s); }
};

struct RunMetrics {
  double makespan_s = 0;  // the last finish (the experiment starts at 0)
  double snp = 0;
  double slowdown_l1 = 0;
  double slowdown_l2 = 0;
  double slowdown_linf = 0;
  double unfairness = 0;
  int64_t dt_local_bytes = 0;
  int64_t dt_rack_bytes = 0;
  int64_t dt_core_bytes = 0;
};

// REQUIRES: jobs is not empty; every job has ideal_s > 0 and finished.
RunMetrics ComputeMetrics(const std::vector<JobTimes>& jobs);

// The nearest-rank `p`th percentile (0 < p <= 100) of ascending values; 0
// for none.
double Percentile(const std::vector<double>& sorted, double p);

// The median of `values` (the mean of the middle two for an even count);
// 0 for none. The benchmarks' summary of repeated runs.
double Median(std::vector<double> values);

// `v` with `digits` digits after the point, as the reports print numbers.
std::string Fixed(double v, int digits);

}  // namespace copse::bench

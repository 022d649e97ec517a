// The simulator's cost model (sim/cost_model.h) calibrated from vertex runs
// measured on a real cluster (the real-cluster suite's K = 1 runs), so that
// the simulator run beside the real one predicts from this machine's own
// speeds rather than the paper's.
//
// Per run the simulator charges task_startup_s + fixed_s + per_gb_s × GB read
// after the run's remote reads have crossed the network model. So:
//  - task_startup_s is the 5th percentile (nearest rank) of every run's
//    duration: the cheapest runs are nearly all launch;
//  - a run's compute is its duration less task_startup_s and its remote bytes
//    at the config's computer link rate (what the simulator charges for the
//    transfer), at least 0;
//  - per stage (the key "app/program.role"), fixed_s and per_gb_s are the
//    least-squares line of compute over GB read, clamped at 0 (a negative
//    slope gives a flat line at the mean, a negative intercept a line through
//    the origin); when the stage's runs read nearly the same amount (the
//    largest under 1.5 times the smallest) or fewer than 3 ran, the line goes
//    through the origin (per_gb_s = mean compute / mean GB), and a stage
//    whose runs read nothing gets fixed_s = mean compute;
//  - root_startup_s is the median of the jobs' root startups (the root's
//    launch to its first vertex's).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/cost_model.h"

namespace copse::bench {

struct VertexSample {
  std::string key;  // "app/program.role"
  double seconds = 0;
  int64_t local_bytes = 0;
  int64_t remote_bytes = 0;  // in the rack and across the core
};

struct Calibration {
  sim::CostModel model;
  std::map<std::string, int> samples;  // runs behind each stage's entry
};

// REQUIRES: link_gbps > 0.
Calibration Calibrate(const std::vector<VertexSample>& runs,
                      const std::vector<double>& root_startups_s, double link_gbps);

}  // namespace copse::bench

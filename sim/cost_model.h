// CostModel: how long a simulated vertex computes, per application stage, and
// how long a job's root task takes to start. A stage costs
// fixed_s + per_gb_s × (GB it read, from anywhere); a task also pays
// task_startup_s. The rates in PaperCostModel() are calibrated so that the
// K = 1 running times of the paper's instances land near Quincy's Table 3
// (bench/REPORT.md compares them).
// Thread-safety: plain data.
#pragma once

#include <map>
#include <string>

#include "copse/status.h"

namespace copse::sim {

struct StageCost {
  double fixed_s = 0;
  double per_gb_s = 0;
};

struct CostModel {
  double root_startup_s = 6.0;              // root task: from its start to its first submission
  double task_startup_s = 1.0;              // every worker task attempt
  std::map<std::string, StageCost> stages;  // "app/program.role", e.g. "sort/sort.sort"

  // Compute seconds of a stage's vertex that read `bytes`.
  // kNotFound names the missing "app/stage".
  Result<double> Seconds(const std::string& app, const std::string& stage, int64_t bytes) const;
};

CostModel PaperCostModel();

// A cost model as JSON: {"root_startup_s": R, "task_startup_s": T,
// "stages": {"app/program.role": {"fixed_s": F, "per_gb_s": G}, ...}} (the
// real-cluster suite writes one calibrated from its K = 1 runs).
std::string CostModelToJson(const CostModel& model);
// kInvalidArgument names `origin` and what is wrong (a missing or negative
// number, an unknown key).
Result<CostModel> CostModelFromJson(const std::string& text, const std::string& origin);

}  // namespace copse::sim

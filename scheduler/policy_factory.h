// The policy registry: every scheduling policy by the name a cluster config's
// [scheduler] table uses, with the parameters each accepts (name, default,
// range, meaning). MakePolicy validates the name and every parameter and
// says which key is wrong and what was expected. docs/scheduler.md explains
// the same table for users.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "copse/status.h"
#include "scheduler/policy.h"
#include "scheduler/topology.h"

namespace copse::scheduler {

struct ParamSpec {
  std::string name;
  double default_value = 0;
  double min = 0;  // inclusive
  double max = 0;  // inclusive; may be +inf
  bool integer = false;
  std::string help;
};

// Validated parameter values: every known parameter, defaults filled in.
class PolicyParams {
 public:
  PolicyParams() = default;
  explicit PolicyParams(const std::map<std::string, double>& values)
      : values_(values.begin(), values.end()) {}
  // REQUIRES: `name` is a parameter of the policy.
  double Get(std::string_view name) const;
  Duration Seconds(std::string_view name) const;  // for parameters in seconds (inf: kNever)

 private:
  std::map<std::string, double, std::less<>> values_;
};

struct PolicyContext {
  const Topology* topology = nullptr;
  uint64_t seed = 1;
  std::string flow_solver = kSchedulerSolver;
  const Clock* stats_clock = nullptr;
};

// Every policy name, in the order docs list them.
std::vector<std::string> PolicyNames();

// The parameters `policy` accepts; kInvalidArgument for an unknown policy.
Result<std::vector<ParamSpec>> PolicyParamSpecs(std::string_view policy);

// Checks names and values; fills defaults.
Result<PolicyParams> ValidatePolicyParams(const SchedulerConfig& config);

// The policy `config.policy` with `config.params`.
Result<std::unique_ptr<Policy>> MakePolicy(const SchedulerConfig& config,
                                           const PolicyContext& context);

}  // namespace copse::scheduler

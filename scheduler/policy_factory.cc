#include "scheduler/policy_factory.h"

#include <cassert>
#include <cmath>
#include <limits>

#include "scheduler/hfs_policy.h"
#include "scheduler/job_order_policy.h"
#include "scheduler/queue_policy.h"
#include "scheduler/quincy_policy.h"

namespace copse::scheduler {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Longest finite time parameter: about 31 years, far from overflowing.
constexpr double kMaxSeconds = 1e9;

std::vector<ParamSpec> QuincySpecs(bool extreme) {
  return {
      {"omega", 0.5, 0, 1e6, false, "ω: cost per second a task waits unscheduled"},
      {"psi", 1.0, 0, 1e6, false, "ψ: cost per GB read across a rack switch"},
      {"xi", extreme ? 20.0 : 2.0, 0, 1e6, false, "ξ: cost per GB read across the core switch"},
      {"max_cost", 1000.0, 1, 1e9, false,
       "Ω: cap on the data and wait costs of tasks that are not running"},
      {"round_interval", 1.0, 0.001, 3600, false,
       "seconds between timer-driven rounds (rounds also follow every salient event)"},
      {"clock_hint", 0, 0, 1, true,
       "1: pass the clock to the flow solver as two shifted cost groups, costs moving in "
       "steps of a few milliseconds between a task's state changes (docs/flow.md)"},
  };
}

std::vector<ParamSpec> HysteresisSpecs() {
  return {
      {"hysteresis_margin", 1, 0, 1e6, true,
       "M_H: a blocked job is unblocked once it runs fewer than A_j - M_H tasks"},
      {"hysteresis_delay", 5.0, 0, kMaxSeconds, false,
       "Δ_H: ...or this many seconds after it fell below A_j"},
  };
}

std::vector<ParamSpec> HfsSpecs() {
  return {
      {"node_locality_wait", 5.0, 0, kMaxSeconds, false,
       "W1: seconds a job waits for a node-local slot before taking a rack-local one"},
      {"rack_locality_wait", 5.0, 0, kMaxSeconds, false,
       "W2: further seconds before it takes a slot in any rack"},
      {"fair_share_timeout", kInf, 0, kInf, false,
       "T_fair: seconds a pool may stay starved before tasks are killed for it (inf: never)"},
      {"fair_share_threshold", 0.5, 0, 1, false,
       "a pool is starved when it runs fewer than this fraction of its fair share"},
  };
}

std::vector<ParamSpec> EstimatorSpecs() {
  return {{"default_task_seconds", 10.0, 0.001, kMaxSeconds, false,
           "task run time the L_j estimator assumes before any task has completed"}};
}

std::string Known(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string Number(double v) {
  if (std::isinf(v)) return "inf";
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

Status CheckValue(const ParamSpec& p, double v) {
  bool ok = !std::isnan(v) && v >= p.min && v <= p.max;
  if (ok && p.integer) ok = std::floor(v) == v;
  if (ok) return Status::Ok();
  std::string what = p.integer ? "an integer" : "a number";
  return InvalidArgument("[scheduler] " + p.name + " = " + Number(v) + ": expected " + what +
                         " from " + Number(p.min) + " to " + Number(p.max) + " (" + p.help + ")");
}

}  // namespace

double PolicyParams::Get(std::string_view name) const {
  auto it = values_.find(name);
  assert(it != values_.end());
  return it->second;
}

Duration PolicyParams::Seconds(std::string_view name) const {
  double s = Get(name);
  if (std::isinf(s)) return kNever;
  return Duration{static_cast<int64_t>(std::llround(s * 1e6))};
}

std::vector<std::string> PolicyNames() {
  return {"Q",   "QP",   "QF",  "QFP", "QFPX", "G",    "GF",  "GFP",
          "GFH", "GFPH", "HFS", "CFQ", "FIFO", "FAIR", "SRPT"};
}

Result<std::vector<ParamSpec>> PolicyParamSpecs(std::string_view policy) {
  if (policy == "Q" || policy == "QP" || policy == "QF" || policy == "QFP") {
    return QuincySpecs(false);
  }
  if (policy == "QFPX") return QuincySpecs(true);
  if (policy == "G" || policy == "GF" || policy == "GFP") return std::vector<ParamSpec>{};
  if (policy == "GFH" || policy == "GFPH") return HysteresisSpecs();
  if (policy == "HFS") return HfsSpecs();
  if (policy == "CFQ" || policy == "SRPT") return EstimatorSpecs();
  if (policy == "FIFO" || policy == "FAIR") return std::vector<ParamSpec>{};
  return InvalidArgument("[scheduler] policy = \"" + std::string(policy) +
                         "\": unknown policy (known: " + Known(PolicyNames()) + ")");
}

Result<PolicyParams> ValidatePolicyParams(const SchedulerConfig& config) {
  COPSE_ASSIGN_OR_RETURN(std::vector<ParamSpec> specs, PolicyParamSpecs(config.policy));
  std::map<std::string, double> values;
  std::vector<std::string> names;
  for (const ParamSpec& p : specs) {
    values[p.name] = p.default_value;
    names.push_back(p.name);
  }
  for (const auto& [key, v] : config.params) {
    auto it = values.find(key);
    if (it == values.end()) {
      return InvalidArgument("[scheduler] " + key + ": not a parameter of policy " + config.policy +
                             " (" + (names.empty() ? "it takes none" : "known: " + Known(names)) +
                             ")");
    }
    for (const ParamSpec& p : specs) {
      if (p.name == key) COPSE_RETURN_IF_ERROR(CheckValue(p, v));
    }
    it->second = v;
  }
  return PolicyParams(std::move(values));
}

namespace {

Result<std::unique_ptr<Policy>> MakeQuincy(const std::string& name, const PolicyParams& p,
                                           const PolicyContext& ctx) {
  QuincyOptions o;
  o.regime = name == "Q"    ? QuincyRegime::kQ
             : name == "QP" ? QuincyRegime::kQP
             : name == "QF" ? QuincyRegime::kQF
                            : QuincyRegime::kQFP;
  o.costs.omega = p.Get("omega");
  o.costs.psi = p.Get("psi");
  o.costs.xi = p.Get("xi");
  o.costs.max_cost_milli = std::llround(p.Get("max_cost") * 1000);
  o.round_interval = p.Seconds("round_interval");
  o.clock_hint = p.Get("clock_hint") != 0;
  o.solver = ctx.flow_solver;
  o.stats_clock = ctx.stats_clock;
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<QuincyPolicy> q,
                         QuincyPolicy::Create(name, *ctx.topology, o));
  return std::unique_ptr<Policy>(std::move(q));
}

}  // namespace

Result<std::unique_ptr<Policy>> MakePolicy(const SchedulerConfig& config,
                                           const PolicyContext& ctx) {
  assert(ctx.topology != nullptr);
  COPSE_ASSIGN_OR_RETURN(PolicyParams p, ValidatePolicyParams(config));
  const std::string& name = config.policy;
  if (name[0] == 'Q') return MakeQuincy(name, p, ctx);
  if (name[0] == 'G') {
    QueuePolicyOptions o;
    o.fair = name != "G";
    o.preempt = name.find('P') != std::string::npos;
    o.hysteresis = name.back() == 'H';
    if (o.hysteresis) {
      o.margin = static_cast<int>(p.Get("hysteresis_margin"));
      o.delay = p.Seconds("hysteresis_delay");
    }
    return std::unique_ptr<Policy>(new QueuePolicy(name, o, ctx.seed));
  }
  if (name == "HFS") {
    HfsOptions o;
    o.node_wait = p.Seconds("node_locality_wait");
    o.rack_wait = p.Seconds("rack_locality_wait");
    o.fair_share_timeout = p.Seconds("fair_share_timeout");
    o.fair_share_threshold = p.Get("fair_share_threshold");
    return std::unique_ptr<Policy>(new HfsPolicy(o, ctx.seed));
  }
  JobOrderOptions o;
  o.order = name == "CFQ"    ? JobOrder::kCfq
            : name == "FIFO" ? JobOrder::kFifo
            : name == "FAIR" ? JobOrder::kFair
                             : JobOrder::kSrpt;
  if (name == "CFQ" || name == "SRPT") o.default_task_time = p.Seconds("default_task_seconds");
  return std::unique_ptr<Policy>(new JobOrderPolicy(name, o, ctx.seed));
}

}  // namespace copse::scheduler

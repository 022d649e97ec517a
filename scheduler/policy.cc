#include "scheduler/policy.h"

#include <nlohmann/json.hpp>

#include "scheduler/explain.h"

namespace copse::scheduler {

void Policy::Describe(const ClusterState& state, Timestamp now, nlohmann::json* out) const {
  (void)now;
  (*out)["parameters"] = nlohmann::json::object();
  (*out)["jobs"] = explain::DefaultJobs(state);
}

void Policy::Explain(const ClusterState& state, const TaskInfo& task, Timestamp now,
                     nlohmann::json* out) const {
  (*out)["summary"] = explain::GenericSummary(state, task, now);
}

}  // namespace copse::scheduler

// JobOrderPolicy's explanations (job_order_policy.h; fields in
// docs/scheduler.md "Explaining decisions"): the key each job is ordered by
// (CFQ's virtual finish time, FIFO's admission, FAIR's running tasks,
// SRPT's remaining slot-time) and a waiting task's job's rank.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "scheduler/explain.h"
#include "scheduler/job_order_policy.h"

namespace copse::scheduler {

using explain::Num;
using nlohmann::json;

namespace {

const char* KeyName(JobOrder o) {
  switch (o) {
    case JobOrder::kCfq:
      return "virtual_finish";
    case JobOrder::kFifo:
      return "admission";
    case JobOrder::kFair:
      return "running";
    case JobOrder::kSrpt:
      return "remaining_s";
  }
  return "key";
}

const char* OrderWords(JobOrder o) {
  switch (o) {
    case JobOrder::kCfq:
      return "the smallest virtual finish time F_j";
    case JobOrder::kFifo:
      return "the earliest admission";
    case JobOrder::kFair:
      return "the fewest running tasks";
    case JobOrder::kSrpt:
      return "the least remaining slot-time";
  }
  return "";
}

}  // namespace

std::vector<std::pair<JobId, double>> JobOrderPolicy::Backlogged(const ClusterState& s,
                                                                 Timestamp now) const {
  const std::vector<JobId>& jobs = s.admitted_jobs();
  std::vector<double> keys = Keys(s, now);
  std::vector<std::pair<JobId, double>> out;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& j = s.job(jobs[i]);
    if (index_.all().FirstOf(jobs[i]) == kNoTask ||
        j.placed >= j.attributes.max_tasks.value_or(1 << 30)) {
      continue;
    }
    // FIFO's key is admission order itself.
    out.emplace_back(jobs[i], options_.order == JobOrder::kFifo ? static_cast<double>(i) : keys[i]);
  }
  // Admission order breaks ties, as Schedule() does (admitted_jobs is in it).
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

void JobOrderPolicy::Describe(const ClusterState& s, Timestamp now, json* out) const {
  json params = {{"order", OrderWords(options_.order)}};
  if (options_.order == JobOrder::kCfq || options_.order == JobOrder::kSrpt) {
    params["default_task_seconds"] = ToSeconds(options_.default_task_time);
  }
  (*out)["parameters"] = std::move(params);
  (*out)["virtual_time"] = v_;
  json rows = explain::DefaultJobs(s);
  std::vector<double> keys = Keys(s, now);
  std::vector<std::pair<JobId, double>> order = Backlogged(s, now);
  for (size_t i = 0; i < rows.size(); ++i) {
    const JobId id = rows[i]["job"].get<JobId>();
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    rows[i]["slot_time_s"] = it->second.slot_time;
    rows[i]["virtual_finish"] = it->second.finish;
    rows[i]["key"] = options_.order == JobOrder::kFifo ? static_cast<double>(i) : keys[i];
    auto r = std::find_if(order.begin(), order.end(), [&](const auto& p) { return p.first == id; });
    rows[i]["rank"] = r == order.end() ? json(nullptr) : json(r - order.begin() + 1);
  }
  (*out)["jobs"] = std::move(rows);
}

void JobOrderPolicy::LastRound(json* out) const {
  (*out)["at_s"] = last_schedule_ ? json(ToSeconds(*last_schedule_)) : json(nullptr);
  (*out)["virtual_time"] = v_;
}

void JobOrderPolicy::Explain(const ClusterState& s, const TaskInfo& t, Timestamp now,
                             json* out) const {
  json& e = *out;
  e["order"] = KeyName(options_.order);
  auto js = jobs_.find(t.job);
  if (js != jobs_.end()) {
    e["slot_time_s"] = js->second.slot_time;
    e["virtual_finish"] = js->second.finish;
  }
  e["virtual_time"] = v_;
  if (t.computer != kNoComputer) e["placement"] = explain::PlacementKey(s, t, t.computer);
  if (t.root || t.state != TaskState::kWaiting) {
    e["summary"] = explain::GenericSummary(s, t, now) +
                   (t.root && t.state == TaskState::kWaiting
                        ? " (roots go to a random computer with a free slot and no root)"
                        : "");
    return;
  }
  std::vector<std::pair<JobId, double>> order = Backlogged(s, now);
  auto at =
      std::find_if(order.begin(), order.end(), [&](const auto& p) { return p.first == t.job; });
  json ahead = json::array();
  for (auto it = order.begin(); it != at; ++it)
    ahead.push_back({{"job", it->first}, {"key", it->second}});
  e["key"] = at == order.end() ? json(nullptr) : json(at->second);
  e["rank"] = at == order.end() ? json(nullptr) : json(at - order.begin() + 1);
  e["backlogged_jobs"] = order.size();
  e["jobs_ahead"] = std::move(ahead);
  int in_job = 0;  // the job's waiting tasks that started waiting before this one
  for (TaskId id : s.job(t.job).workers) {
    const TaskInfo& w = s.task(id);
    if (w.state == TaskState::kWaiting && w.queued_seq < t.queued_seq) ++in_job;
  }
  e["ahead_in_job"] = in_job;
  const std::string job = "job " + std::to_string(t.job);
  std::string summary;
  if (at == order.end()) {
    summary = "waits: " + job + " runs its max_tasks";
  } else if (s.free_slots_total() > 0) {
    summary =
        "waits for the next round: a slot is free, and each free slot goes to the backlogged "
        "job with " +
        std::string(OrderWords(options_.order));
  } else {
    summary = "waits: every slot is busy; each freed slot goes to the backlogged job with " +
              std::string(OrderWords(options_.order)) + ", and " + job + " is " +
              explain::Ordinal(static_cast<size_t>(at - order.begin() + 1)) + " of " +
              std::to_string(order.size());
  }
  if (at != order.end() && options_.order == JobOrder::kCfq) {
    summary += " (its F_j = " + Num(at->second) + ", virtual time now " + Num(v_) + ")";
  }
  if (in_job > 0) {
    summary += "; " + std::to_string(in_job) +
               " of its job's tasks waited longer (a freed computer "
               "takes the job's task local to it first, else the oldest)";
  }
  e["summary"] = summary;
}

}  // namespace copse::scheduler

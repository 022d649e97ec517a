// QueuePolicy's explanations (queue_policy.h; fields in docs/scheduler.md
// "Explaining decisions"): a waiting task's place in its computer, rack and
// cluster queues, and its job's share A_j and blocking as of the last round.
#include <nlohmann/json.hpp>

#include "scheduler/explain.h"
#include "scheduler/queue_policy.h"

namespace copse::scheduler {

using explain::Num;
using nlohmann::json;

void QueuePolicy::Describe(const ClusterState& s, Timestamp now, json* out) const {
  (void)now;
  json params = {{"fair", options_.fair},
                 {"preemption", options_.preempt},
                 {"hysteresis", options_.hysteresis}};
  if (options_.hysteresis) {
    params["hysteresis_margin"] = options_.margin;
    params["hysteresis_delay_s"] = ToSeconds(options_.delay);
  }
  (*out)["parameters"] = std::move(params);
  json rows = explain::DefaultJobs(s);
  for (json& row : rows) {
    auto it = jobs_.find(row["job"].get<JobId>());
    if (it == jobs_.end()) continue;
    // GF*: the A_j the last round used (G has no fairness: §3.3's share is
    // only shown).
    if (options_.fair) row["fair_share"] = it->second.share;
    row["blocked"] = it->second.blocked;
  }
  (*out)["jobs"] = std::move(rows);
}

void QueuePolicy::LastRound(json* out) const {
  (*out)["at_s"] = last_schedule_ ? json(ToSeconds(*last_schedule_)) : json(nullptr);
}

void QueuePolicy::Explain(const ClusterState& s, const TaskInfo& t, Timestamp now,
                          json* out) const {
  json& e = *out;
  auto js = jobs_.find(t.job);
  if (js != jobs_.end()) {
    e["job_share"] = options_.fair ? json(js->second.share) : json(nullptr);
    e["job_running"] = s.job(t.job).placed;
    e["job_blocked"] = js->second.blocked;
  }
  if (t.root || t.state != TaskState::kWaiting) {
    std::string summary = explain::GenericSummary(s, t, now);
    if (t.computer != kNoComputer) e["placement"] = explain::PlacementKey(s, t, t.computer);
    if (t.root && t.state == TaskState::kWaiting) {
      summary +=
          " (roots go to a random computer not running a root, killing a worker there if "
          "needed)";
    }
    if (!t.root && t.placed() && options_.preempt && js != jobs_.end() &&
        s.job(t.job).placed > js->second.share) {
      summary += "; its job runs above its share A_j = " + std::to_string(js->second.share) +
                 ", so its most recently started tasks are being killed";
    }
    e["summary"] = summary;
    return;
  }
  ExplainWaiting(s, t, e);
}

void QueuePolicy::ExplainWaiting(const ClusterState& s, const TaskInfo& t, json& e) const {
  auto seq = queued_.find(t.id);
  auto ready = [this](JobId j) { return Ready(j); };
  json queues = json::array();
  size_t cluster_ahead = 0;
  if (seq != queued_.end()) {
    for (const PreferredComputer& c : t.locality.computers) {
      queues.push_back({{"queue", "computer"},
                        {"computer", c.computer},
                        {"ahead", computer_queues_[c.computer].CountBefore(seq->second, ready)}});
    }
    for (const PreferredRack& r : t.locality.racks) {
      queues.push_back({{"queue", "rack"},
                        {"rack", r.rack},
                        {"ahead", rack_queues_[r.rack].CountBefore(seq->second, ready)}});
    }
    cluster_ahead = cluster_queue_.CountBefore(seq->second, ready);
    queues.push_back({{"queue", "cluster"}, {"ahead", cluster_ahead}});
  }
  e["queues"] = std::move(queues);
  const JobState* j = jobs_.count(t.job) ? &jobs_.at(t.job) : nullptr;
  const std::string job = "job " + std::to_string(t.job);
  if (j != nullptr && j->blocked) {
    std::string summary = "waits: " + job + " is blocked, running " +
                          std::to_string(s.job(t.job).placed) +
                          " tasks against its fair share "
                          "A_j = " +
                          std::to_string(j->share) + " (as of the last round)";
    if (options_.hysteresis) {
      summary += "; it is unblocked once it runs fewer than A_j - M_H = " +
                 std::to_string(j->share - options_.margin) + " tasks";
      if (j->below_since) {
        summary += ", or at " + Num(ToSeconds(*j->below_since + options_.delay)) +
                   " s (Δ_H after it fell below A_j)";
      }
    }
    e["summary"] = summary;
    return;
  }
  const std::string place = std::to_string(cluster_ahead) + " ready task" +
                            (cluster_ahead == 1 ? " is" : "s are") +
                            " ahead of it in the cluster queue";
  if (s.free_slots_total() > 0) {
    e["summary"] =
        "waits for the next round: a computer is free, and each free computer takes "
        "the first ready task of its own queue, then its rack's, then the cluster "
        "queue; " +
        place;
  } else {
    e["summary"] =
        "waits: every computer is busy; the next one to free up takes the first ready "
        "task of its own queue, then its rack's, then the cluster queue; " +
        place;
  }
}

}  // namespace copse::scheduler

// The queue-based schedulers of Quincy §3, the paper's baselines:
//   G     greedy: a free computer m takes the first task in its queue C_m,
//         else in its rack's queue R_l, else in the cluster queue X (§3.2);
//   GF    G with simple fairness: a job running A_j tasks or more (its fair
//         share, §3.3) is blocked and its tasks are not ready (§3.3);
//   GFP   GF that also kills a job's tasks above A_j, most recently
//         scheduled first (§3.4);
//   GFH, GFPH  GF and GFP with hysteresis (§3.5): a blocked job is unblocked
//         only once it runs fewer than A_j − M_H tasks, or Δ_H after it fell
//         below A_j, so that a computer it frees can go to another job's
//         task with better locality instead of sticking to it.
// A worker task enters the queue of each preferred computer and rack and X
// when it becomes ready, and leaves all of them when it starts. Roots go to a
// random computer without a root, killing a worker there if needed (§3.1).
// Explanations (queue_explain.cc) give a waiting task its place in each of
// its queues and its job's share and blocking as of the last round.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/policy.h"
#include "scheduler/root_placement.h"
#include "scheduler/task_queue.h"

namespace copse::scheduler {

struct QueuePolicyOptions {
  bool fair = false;          // GF*: block jobs at their share
  bool preempt = false;       // GFP*: kill tasks above the share
  bool hysteresis = false;    // GF*H
  int margin = 1;             // M_H
  Duration delay{5'000'000};  // Δ_H
};

class QueuePolicy final : public Policy {
 public:
  QueuePolicy(std::string name, QueuePolicyOptions options, uint64_t seed);

  std::string_view name() const override { return name_; }
  void Observe(const ClusterState& state, const Change& change, Timestamp now) override;
  Status Schedule(const ClusterState& state, Timestamp now, std::vector<Decision>* out) override;
  std::optional<Timestamp> NextWakeup(const ClusterState& state) const override;
  void Describe(const ClusterState& state, Timestamp now, nlohmann::json* out) const override;
  void LastRound(nlohmann::json* out) const override;
  void Explain(const ClusterState& state, const TaskInfo& task, Timestamp now,
               nlohmann::json* out) const override;

  // A_j as of the last Schedule() (for tests and reports).
  int share(JobId job) const;
  bool blocked(JobId job) const;

 private:
  struct JobState {
    int share = 0;    // A_j
    int running = 0;  // placed tasks, as counted during a round
    int waiting = 0;  // waiting tasks at the start of the round
    bool blocked = false;
    std::optional<Timestamp> below_since;  // hysteresis: when it fell below A_j while blocked
  };

  void Enqueue(const ClusterState& s, const TaskInfo& t);
  void Dequeue(const TaskInfo& t);
  void ComputeShares(const ClusterState& s);
  void UpdateBlocked(JobState& j, Timestamp now) const;
  void Preempt(const ClusterState& s, std::vector<Decision>* out);
  TaskId Pick(const ClusterState& s, ComputerId c);
  bool Ready(JobId job) const;
  void ExplainWaiting(const ClusterState& s, const TaskInfo& t, nlohmann::json& e) const;

  std::string name_;
  QueuePolicyOptions options_;
  RootPlacer roots_;
  std::vector<TaskQueue> computer_queues_;
  std::vector<TaskQueue> rack_queues_;
  TaskQueue cluster_queue_;
  std::unordered_map<TaskId, uint64_t> queued_;  // task -> its sequence number in the queues
  std::map<JobId, JobState> jobs_;
  std::optional<Timestamp> last_schedule_;
};

}  // namespace copse::scheduler

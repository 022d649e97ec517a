// JobOrderPolicy: policies that give each free slot to the backlogged job
// (one with waiting tasks) that comes first in some order, and inside that
// job take a task local to the slot's computer if there is one, else one
// local to its rack, else the oldest (the greedy locality search of delay
// scheduling's Algorithm 1, without delay). They never preempt. The orders:
//   CFQ   Cluster Fair Queueing (cluster-fair-queueing §IV): smallest virtual
//         finish time F_j = V(a_j) + L_j, where V(t) is the virtual time of
//         the idealised fair-sharing reference system (dV/dt = M / N̄_t, N̄_t
//         the jobs not yet finished in it, M the worker slots), a_j the
//         job's admission and L_j its slot-time: the profile given with the
//         job, or the paper's naive estimate n_j × l̃ (n_j its expected task
//         count, l̃ the average run time of the tasks completed so far, or
//         `default_task_seconds` before any has);
//   FIFO  admission order;
//   FAIR  max-min fair: the job with the fewest running tasks;
//   SRPT  shortest remaining processing time: the smallest L_j minus the
//         run time its tasks have consumed.
// Roots go to a random computer with a free slot and no root (Quincy §3.1
// rule when none has a free slot). Ties are broken by admission order.
// Explanations (job_order_explain.cc) give a waiting task its job's key in
// the order and its rank among the backlogged jobs.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduler/locality_index.h"
#include "scheduler/policy.h"
#include "scheduler/root_placement.h"

namespace copse::scheduler {

enum class JobOrder { kCfq, kFifo, kFair, kSrpt };

struct JobOrderOptions {
  JobOrder order = JobOrder::kCfq;
  Duration default_task_time{10'000'000};  // l̃ before any task has completed
};

class JobOrderPolicy final : public Policy {
 public:
  JobOrderPolicy(std::string name, JobOrderOptions options, uint64_t seed);

  std::string_view name() const override { return name_; }
  void Observe(const ClusterState& state, const Change& change, Timestamp now) override;
  Status Schedule(const ClusterState& state, Timestamp now, std::vector<Decision>* out) override;
  void Describe(const ClusterState& state, Timestamp now, nlohmann::json* out) const override;
  void LastRound(nlohmann::json* out) const override;
  void Explain(const ClusterState& state, const TaskInfo& task, Timestamp now,
               nlohmann::json* out) const override;

  // The reference system's virtual time V (slot-seconds per job) as of the
  // last event, and a job's L_j and F_j (for tests).
  double virtual_time() const { return v_; }
  double slot_time(JobId job) const { return jobs_.at(job).slot_time; }
  double finish_time(JobId job) const { return jobs_.at(job).finish; }

 private:
  struct JobState {
    double slot_time = 0;  // L_j, seconds
    double finish = 0;     // F_j
  };

  void AdvanceVirtualTime(const ClusterState& s, Timestamp now);
  double EstimateSlotTime(const JobInfo& j) const;
  std::vector<double> Keys(const ClusterState& s, Timestamp now) const;
  TaskId PickTask(const ClusterState& s, JobId job, ComputerId c) const;
  // Explanations: the backlogged jobs (waiting tasks, below max_tasks) in the
  // order Schedule() serves them, with their keys.
  std::vector<std::pair<JobId, double>> Backlogged(const ClusterState& s, Timestamp now) const;

  std::string name_;
  JobOrderOptions options_;
  RootPlacer roots_;
  std::map<JobId, JobState> jobs_;
  std::multiset<double> gps_;  // F_j of jobs still active in the reference system
  double v_ = 0;
  std::optional<Timestamp> v_at_;
  Duration completed_time_{0};  // for l̃
  int64_t completed_ = 0;
  LocalityIndex index_;  // waiting worker tasks
  std::optional<Timestamp> last_schedule_;
};

}  // namespace copse::scheduler

// HfsPolicy: the Hadoop Fair Scheduler with delay scheduling
// (delay-scheduling-eurosys10 §4, Algorithm 3).
//
// Jobs belong to pools. Pools are ordered with those below their minimum
// share first (by how far below), then by running tasks / weight; inside a
// pool jobs are ordered FIFO or fair (fewest running tasks first). Each free
// slot on computer n goes down that list: a job launches a node-local task
// on n if it has one (level 0); a rack-local one if it is at level 1 or has
// waited W1; any task if it is at level 2, or at level 1 and waited W2, or at
// level 0 and waited W1 + W2; otherwise it is skipped and keeps waiting. A
// launch resets the job's wait and sets its level to the launch's locality,
// so a node-local launch returns it to level 0. Every Schedule() call is a
// heartbeat: jobs skipped at the previous one add the time since then to
// their wait. Tasks without preferred computers or racks count as
// node-local everywhere.
//
// Preemption: a pool below its minimum share for its min-share timeout, or
// below `fair_share_threshold` of its fair share for the fair-share timeout,
// gets slots freed for it by killing the most recently launched tasks of
// pools above their fair share, never taking a pool below its fair share.
// Roots go to a random computer with a free slot and no root (Quincy §3.1
// rule when none has a free slot).
//
// Explanations (hfs_explain.cc) report Algorithm 3's variables as of the
// last heartbeat, a skipped job's wait grown by the time since: the level a
// task's job may launch at now, the time left before the next level, its
// pool's share and its job's place in the order above.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/locality_index.h"
#include "scheduler/policy.h"
#include "scheduler/root_placement.h"

namespace copse::scheduler {

struct HfsOptions {
  Duration node_wait{5'000'000};  // W1
  Duration rack_wait{5'000'000};  // W2
  Duration fair_share_timeout = kNever;
  double fair_share_threshold = 0.5;
};

class HfsPolicy final : public Policy {
 public:
  HfsPolicy(HfsOptions options, uint64_t seed);

  std::string_view name() const override { return "HFS"; }
  void Observe(const ClusterState& state, const Change& change, Timestamp now) override;
  Status Schedule(const ClusterState& state, Timestamp now, std::vector<Decision>* out) override;
  std::optional<Timestamp> NextWakeup(const ClusterState& state) const override;
  void Describe(const ClusterState& state, Timestamp now, nlohmann::json* out) const override;
  void LastRound(nlohmann::json* out) const override;
  void Explain(const ClusterState& state, const TaskInfo& task, Timestamp now,
               nlohmann::json* out) const override;

  // Algorithm 3's per-job variables (for tests).
  int level(JobId job) const;
  Duration wait(JobId job) const;
  // A pool's fair share as of the last Schedule() (for tests).
  double fair_share(const std::string& pool) const;

 private:
  struct JobState {
    int level = 0;
    Duration wait{0};
    bool skipped = false;
    std::string pool;
  };
  struct PoolState {
    PoolSpec spec;
    int running = 0;
    int demand = 0;
    double fair_share = 0;
    Timestamp at_min_share{0};   // last time at or above min(min share, demand)
    Timestamp at_fair_share{0};  // last time at or above threshold × fair share
  };

  static std::string PoolOf(const JobInfo& j);
  void UpdatePools(const ClusterState& s, Timestamp now);
  std::vector<JobId> SortedJobs(const ClusterState& s) const;
  void Preempt(const ClusterState& s, Timestamp now, std::vector<Decision>* out);
  bool Assign(const ClusterState& s, ComputerId c, std::vector<Decision>* out);
  // Explanations (hfs_explain.cc).
  Duration WaitAt(const JobState& js, Timestamp now) const;
  int AllowedLevel(const JobState& js, Duration wait) const;
  void ExplainWaiting(const ClusterState& s, const TaskInfo& t, Timestamp now,
                      nlohmann::json& e) const;

  HfsOptions options_;
  RootPlacer roots_;
  LocalityIndex index_;  // waiting worker tasks
  std::map<JobId, JobState> jobs_;
  std::map<std::string, PoolState> pools_;
  std::optional<Timestamp> last_heartbeat_;
  std::map<JobId, int> running_;  // placed tasks per job during a round
};

}  // namespace copse::scheduler

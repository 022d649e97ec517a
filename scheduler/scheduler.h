// Scheduler: the mechanism every driver (the master, the simulator, tests,
// benchmarks) talks to. It owns the cluster state, admission control (at most
// K jobs running, the rest queued in submission order — Quincy §2.4) and one
// Policy chosen by name. Events go in with the time they happened; decisions
// come out:
//
//   Status s = sched.Handle(event, now);       // update state (may queue decisions)
//   Result<std::vector<Decision>> d = sched.Schedule(now);  // ask the policy
//
// Handle() rejects an event that contradicts the state (an unknown task, a
// start confirmation for a task nobody asked to start, ...) with
// kInvalidArgument or kFailedPrecondition and leaves the state unchanged, so
// a driver can log it and carry on. Decisions returned by Schedule() are
// already recorded: a started task holds its slot until TaskStarted,
// TaskStartFailed, TaskCompleted, TaskFailed or TaskKilled says otherwise.
// Drivers may Handle() several events that happened at the same time before
// one Schedule(). Time must not go backwards.
//
// Describe() and Explain() say what the scheduler is doing and why, in the
// terms of its policy (docs/scheduler.md "Explaining decisions"); they are
// const and change nothing a later Schedule() depends on.
// Thread-safety: none; one thread (the master's event loop, the simulator).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/config.h"
#include "copse/status.h"
#include "scheduler/cluster_state.h"
#include "scheduler/events.h"
#include "scheduler/policy.h"

namespace copse::scheduler {

struct SchedulerOptions {
  SchedulerConfig policy;     // policy name and parameters ([scheduler] in a cluster config)
  int max_running_jobs = 10;  // admission limit K
  uint64_t seed = 1;          // the only source of randomness (root placement)
  // Min-cost-flow algorithm for the Quincy policies (scheduler/flow/solvers.h
  // names). The incremental one is deterministic and the default; a racing
  // solver would make decisions depend on thread timing.
  std::string flow_solver = kSchedulerSolver;
  // Measures Quincy round phases for benchmarks; never consulted for
  // decisions. May be null.
  const Clock* stats_clock = nullptr;
};

// Hears every change of the cluster state, after the policy has (the master
// tells roots what became of their tasks from it).
class ChangeObserver {
 public:
  virtual ~ChangeObserver() = default;
  // `change.task` is valid during the call only.
  virtual void OnChange(const ClusterState& state, const Change& change, Timestamp now) = 0;
};

class Scheduler {
 public:
  // Validates the options (policy name, every parameter) and the topology.
  static Result<std::unique_ptr<Scheduler>> Create(Topology topology, SchedulerOptions options);
  // From a cluster config: its topology, [scheduler] table and K.
  // `stats_clock` (may be null) times the Quincy rounds' phases
  // (SchedulerOptions::stats_clock).
  static Result<std::unique_ptr<Scheduler>> FromConfig(const ClusterConfig& config, uint64_t seed,
                                                       const Clock* stats_clock = nullptr);

  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Applies one event that happened at `now`.
  Status Handle(const Event& event, Timestamp now);
  // Decisions for the state after the events so far: admissions and kills
  // the mechanism made while handling events, then the policy's.
  Result<std::vector<Decision>> Schedule(Timestamp now);
  // Handle(event, now) then Schedule(now).
  Result<std::vector<Decision>> HandleAndSchedule(const Event& event, Timestamp now);
  // When the driver should send a Timer event next, if ever.
  std::optional<Timestamp> NextWakeup() const;
  // REQUIRES: outlives the scheduler, or is reset to null first.
  void set_observer(ChangeObserver* observer) { observer_ = observer; }

  const ClusterState& state() const { return state_; }
  Policy& policy() { return *policy_; }
  const Policy& policy() const { return *policy_; }
  int max_running_jobs() const { return max_running_jobs_; }
  // Jobs waiting for admission, in admission order.
  std::vector<JobId> QueuedJobs() const;

  // ---- Explaining decisions (fields: docs/scheduler.md) ----
  // A `now` earlier than the last event counts as the last event's time.

  // The scheduler: {policy, max_running_jobs, now_s, slots, admitted,
  // queue, parameters, jobs, last_round}; parameters and jobs come from
  // Policy::Describe, last_round from Policy::LastRound.
  nlohmann::json Describe(Timestamp now) const;
  // Why `task` waits, or runs where it does: the common fields and the
  // policy's account (Policy::Explain). The root task id of a job still in
  // the admission queue (a queued job has no task in the state yet) is
  // answered with the job's place in the queue (state "queued_job").
  // kNotFound for any other id.
  Result<nlohmann::json> Explain(TaskId task, Timestamp now) const;
  // A job by id: a queued one as Explain() answers for its root; an admitted
  // one by its row of Describe()'s jobs and a summary. kNotFound for a job
  // that is unknown or finished.
  Result<nlohmann::json> ExplainJob(JobId job, Timestamp now) const;

 private:
  Scheduler(Topology topology, std::unique_ptr<Policy> policy, int max_running_jobs);

  Status Dispatch(const Event& e);
  Status OnJobSubmitted(const JobSubmitted& e);
  Status OnJobFinished(const JobFinished& e);
  Status OnRootFailed(const RootFailed& e);
  Status OnTaskWithdrawn(const TaskWithdrawn& e);
  Status OnTaskSubmitted(const TaskSubmitted& e);
  Status OnTaskStarted(const TaskStarted& e);
  Status OnTaskStartFailed(const TaskStartFailed& e);
  Status OnTaskEnded(TaskId id, Change::Reason reason);
  Status OnTaskKilled(const TaskKilled& e);
  Status OnTaskAdopted(const TaskAdopted& e);
  Status OnComputerUp(const ComputerUp& e);
  Status OnComputerDown(const ComputerDown& e);
  Status OnComputerDraining(const ComputerDraining& e);

  Result<const TaskInfo*> LookupTask(TaskId id, const char* event) const;
  void AdmitReady();
  void Admit(JobId job);
  void DropJobTasks(JobId job);  // forgets or kills every worker task of `job`
  void RemoveTask(TaskId id, Change::Reason reason);
  void Requeue(TaskId id);
  void KillOrphan(TaskId id);
  void Notify(Change::Kind kind, JobId job, const TaskInfo* task, ComputerId c);
  void Tell(const Change& change);  // the policy, then the observer
  Status ApplyDecisions(const std::vector<Decision>& ds, size_t first);
  nlohmann::json ExplainQueued(const JobInfo& job, Timestamp now) const;

  ClusterState state_;
  std::unique_ptr<Policy> policy_;
  ChangeObserver* observer_ = nullptr;
  int max_running_jobs_;
  // Admission queue: (submission time, job id).
  std::set<std::pair<Timestamp, JobId>> queue_;
  std::vector<Decision> pending_;  // made while handling events
  Timestamp now_{0};
};

}  // namespace copse::scheduler

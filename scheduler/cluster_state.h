// ClusterState: what the scheduler knows — computers (rack, slots, up or
// down, what occupies their slots), jobs (attributes, admission, root task,
// demand) and tasks (locality data, state, computer, wait time ν and run time
// θ). The Scheduler owns it and is the only writer; policies read it through
// a const reference, so every policy sees the same facts.
//
// A task occupies a slot from the moment the scheduler decides to start it
// (kStartRequested) until the worker confirms it gone (completion, failure,
// start failure, or the confirmation of a kill — kKillRequested keeps the slot
// busy). ν accumulates while a task waits and θ while it runs, summed over
// all spans (Quincy appendix). A TaskInfo stays at the same address from
// the task's submission until it is removed, so a policy may keep pointers
// to the tasks it indexes (and must drop them on kTaskRemoved).
// Thread-safety: none; owned by one Scheduler.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "scheduler/events.h"
#include "scheduler/topology.h"

namespace copse::scheduler {

enum class TaskState : uint8_t {
  kWaiting,         // submitted (or back after preemption / start failure), not placed
  kStartRequested,  // a start decision was issued; not yet confirmed; slot taken
  kRunning,         // the worker confirmed the start
  kKillRequested,   // a kill decision was issued; slot busy until confirmed
};
const char* TaskStateName(TaskState s);

struct TaskInfo {
  TaskId id = kNoTask;
  JobId job = 0;
  bool root = false;
  TaskLocality locality;
  TaskState state = TaskState::kWaiting;
  ComputerId computer = kNoComputer;  // unless waiting
  Timestamp submitted{0};             // first submission
  Timestamp since{0};                 // start of the current state
  Duration waited{0};                 // ν accumulated before `since`
  Duration ran{0};                    // θ accumulated before `since`
  uint64_t queued_seq = 0;            // grows each time the task (re)enters kWaiting: queue order
  uint64_t placed_seq = 0;            // grows with each start decision: "most recently launched"
  bool orphan = false;  // kill requested because its job is gone: forget when confirmed
  int start_failures = 0;

  bool placed() const {
    return state == TaskState::kStartRequested || state == TaskState::kRunning;
  }
  // ν: total time spent waiting up to `now`.
  Duration WaitTime(Timestamp now) const;
  // θ: total time spent running up to `now`, counted from each start
  // decision: the slot is the task's from then on, and a confirmation that
  // takes a while must not make it look cheaper to preempt than a task
  // still waiting (which the master's rounds between a decision and the
  // worker's answer would otherwise do to every task they just started).
  Duration RunTime(Timestamp now) const;
};

struct JobInfo {
  JobId id = 0;
  TaskId root_task = kNoTask;  // kNoTask when the root runs outside the cluster
  JobAttributes attributes;
  bool admitted = false;   // admitted and not finished
  bool finished = false;   // JobFinished seen; kept until its orphaned tasks are confirmed dead
  uint64_t admit_seq = 0;  // admission order
  Timestamp admitted_at{0};
  std::set<TaskId> workers;        // live worker tasks (not the root), in id order
  int waiting = 0;                 // worker tasks waiting
  int placed = 0;                  // worker tasks start-requested or running
  int killing = 0;                 // worker tasks kill-requested (preempted, not orphans)
  int completed = 0;               // worker tasks completed so far
  Duration completed_run_time{0};  // their total run time

  // N_j: worker tasks running or queued (Quincy §3.3); a task being
  // preempted is about to be queued again.
  int demand() const { return waiting + placed + killing; }
};

struct ComputerInfo {
  ComputerSpec spec;
  bool up = true;
  // Being drained (`copse cluster drain`): while up it keeps the tasks that
  // occupy its slots but takes no new one, and its slots leave up_slots()
  // and free_slots_total() as a down computer's do.
  bool draining = false;
  int used = 0;     // slots taken (start-requested, running, kill-requested; roots included)
  int roots = 0;    // root tasks here
  int killing = 0;  // kill-requested tasks here
  std::vector<TaskId> tasks;  // tasks occupying slots here

  // Slots a new task may take: none while down or draining.
  int free_slots() const { return usable() ? spec.slots - used : 0; }
  // Slots not taken while up, draining or not: where a task a restarted
  // master finds running may be adopted.
  int open_slots() const { return up ? spec.slots - used : 0; }
  // Up and not draining: its slots count in the cluster's totals.
  bool usable() const { return up && !draining; }
};

class ClusterState {
 public:
  explicit ClusterState(Topology topology);
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // ---- Reading (policies) ----
  const Topology& topology() const { return topology_; }
  int num_computers() const { return topology_.num_computers(); }
  int num_racks() const { return topology_.num_racks(); }
  const ComputerInfo& computer(ComputerId c) const { return computers_[c]; }
  RackId rack_of(ComputerId c) const { return computers_[c].spec.rack; }
  const std::vector<ComputerId>& rack_computers(RackId r) const { return rack_computers_[r]; }
  const JobInfo* FindJob(JobId id) const;
  const TaskInfo* FindTask(TaskId id) const;
  // REQUIRES: the job / task exists.
  const JobInfo& job(JobId id) const;
  const TaskInfo& task(TaskId id) const;
  // Admitted jobs in admission order.
  const std::vector<JobId>& admitted_jobs() const { return admitted_; }
  int num_admitted() const { return static_cast<int>(admitted_.size()); }
  // Slots on computers that are up and not draining.
  int up_slots() const { return up_slots_; }
  int free_slots_total() const { return free_slots_; }
  // Slots available to worker tasks: up slots, plus the slots taken on up
  // draining computers (their tasks still run there), minus one per admitted
  // job's root (placed or waiting) minus slots held by orphans being killed
  // (tasks of jobs that are gone). The M of fair shares: a drain shrinks it
  // as the drained computer's tasks end, so that starting a drain does not
  // make the jobs running there look over their shares. A task being preempted
  // still counts in its job's demand and its slot comes back, so a round
  // that runs while kills are in flight computes the same shares.
  int WorkerSlots() const;
  // Computers with free slots, in id order.
  std::vector<ComputerId> ComputersWithFreeSlots() const;
  // True when `c` is on the task's preferred computer list, or its rack on the
  // preferred rack list.
  static bool PrefersComputer(const TaskInfo& t, ComputerId c);
  bool PrefersRack(const TaskInfo& t, RackId r) const;
  // A task with no preferred computers and no preferred racks reads no data
  // worth moving: it counts as local everywhere.
  static bool LocalityFree(const TaskInfo& t);

  // ---- Writing (Scheduler only) ----
  JobInfo& AddJob(const JobSubmitted& e);
  void AdmitJob(JobId id, Timestamp now);
  // The job is over: it leaves the admitted list (and its root's slot
  // reservation). REQUIRES: its root task was removed, or is being killed
  // as an orphan.
  void FinishJob(JobId id);
  // Erases a job that never ran, or a finished one without tasks left.
  // Returns true if erased.
  bool EraseJobIfDone(JobId id);
  TaskInfo& AddTask(TaskId id, JobId job, bool root, TaskLocality locality, Timestamp now);
  // Waiting → start requested on `c`. REQUIRES: free slot on c.
  void Place(TaskId id, ComputerId c, Timestamp now);
  // Start requested → running.
  void MarkRunning(TaskId id, Timestamp now);
  // Placed → kill requested.
  void RequestKill(TaskId id, bool orphan, Timestamp now);
  // Any state → waiting (frees the slot).
  void Requeue(TaskId id, Timestamp now);
  // Forgets the task (frees its slot); returns what it was.
  TaskInfo RemoveTask(TaskId id, Timestamp now);
  // Adopts a task as running on `c` since `since`.
  void AdoptRunning(TaskId id, ComputerId c, Timestamp since, Timestamp now);
  void SetComputerUp(ComputerId c, bool up);
  // Marks `c` draining or not; the tasks there stay where they are.
  void SetComputerDraining(ComputerId c, bool draining);

 private:
  TaskInfo& MutableTask(TaskId id);
  JobInfo& MutableJob(JobId id);
  void Occupy(TaskInfo& t, ComputerId c);
  void Vacate(TaskInfo& t);
  void CloseSpan(TaskInfo& t, Timestamp now);
  void CountState(const TaskInfo& t, int delta);
  // Adds (sign 1) or removes (-1) the computer's slots from the totals, if
  // it is usable.
  void CountSlots(const ComputerInfo& m, int sign);

  Topology topology_;
  std::vector<ComputerInfo> computers_;
  std::vector<std::vector<ComputerId>> rack_computers_;
  std::unordered_map<JobId, JobInfo> jobs_;
  std::unordered_map<TaskId, TaskInfo> tasks_;
  std::vector<JobId> admitted_;
  uint64_t next_admit_seq_ = 1;
  uint64_t next_queued_seq_ = 1;
  uint64_t next_placed_seq_ = 1;
  int up_slots_ = 0;
  int free_slots_ = 0;
  int held_slots_ = 0;  // slots taken on up, draining computers
  int admitted_roots_ = 0;
  int killing_ = 0;
};

}  // namespace copse::scheduler

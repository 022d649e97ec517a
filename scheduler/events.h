// The scheduler's vocabulary (docs/design.md §5): the events the master (or the
// simulator) feeds into scheduler::Scheduler, the attributes that come with
// jobs and tasks, and the decisions the scheduler answers with. Time is never
// read here: every event is handed over together with the time it happened.
//
// Life of a job: JobSubmitted → (admission control, at most K running)
// kAdmitJob decision → its root task is placed like any task (kStartTask with
// root = true) → the root submits worker tasks (TaskSubmitted) → … →
// JobFinished. Life of a task: TaskSubmitted (waiting) → kStartTask decision
// (start requested; the slot is taken) → TaskStarted (running) → TaskCompleted
// or TaskFailed; or kKillTask (kill requested; the slot stays busy) →
// TaskKilled (waiting again, keeping its wait and run times); or
// TaskStartFailed (waiting again).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>

#include "common/clock.h"
#include "scheduler/quincy_costs.h"

namespace copse::scheduler {

using JobId = int64_t;
using TaskId = int64_t;      // unique across jobs; chosen by the sender
using ComputerId = int32_t;  // index into Topology::computers
using RackId = int32_t;      // index into Topology::racks
inline constexpr TaskId kNoTask = -1;
inline constexpr ComputerId kNoComputer = -1;
// A timeout that never fires.
inline constexpr Duration kNever = Duration::max();
// a + b for non-negative durations, kNever when it would overflow.
inline Duration SatAdd(Duration a, Duration b) { return a > kNever - b ? kNever : a + b; }

// Hadoop Fair Scheduler pool a job belongs to (delay scheduling §4). Jobs
// naming the same pool must agree on its settings.
struct PoolSpec {
  std::string name;                     // empty: the job is alone in a pool of its own
  double weight = 1.0;                  // share of the cluster relative to other pools (> 0)
  int min_share = 0;                    // slots guaranteed while the pool has demand
  bool fifo = false;                    // order jobs inside the pool by submission (else fair)
  Duration min_share_timeout = kNever;  // T_min: kill others' tasks after this long below
};

// What a job brings besides its id; given by the client at submission.
struct JobAttributes {
  Timestamp submitted{0};  // client submission time; admission follows it (ties: job id)
  // False when the job's root task runs outside the cluster's slots (a job
  // driven by its client, or a paper example without root tasks); the job
  // then never gets a kStartTask for a root.
  bool root_in_cluster = true;
  // Allocation bounds (Quincy E_j, F_j): at least / at most this many
  // running worker tasks. They narrow what the policy's fairness regime
  // computes; unset means "as the policy decides".
  std::optional<int> min_tasks;
  std::optional<int> max_tasks;
  PoolSpec pool;           // HFS only
  Duration slot_time{0};   // CFQ/SRPT profile L_j (sum of task run times); 0 = estimate
  int expected_tasks = 0;  // task count for the naive L_j estimator; 0 = unknown (1)
};

// ---- Events: what happened, sent by the master (or simulator). ----

// A client submitted a job. Sent once per job, when the master accepts it.
struct JobSubmitted {
  JobId job = 0;
  TaskId root_task = kNoTask;  // the root task's id (ignored unless root_in_cluster)
  JobAttributes attributes;
};
// A job is over: its root exited (done, failed or cancelled), or a queued job
// was cancelled. Its remaining worker tasks are forgotten; running ones get
// kKillTask decisions. With `root_exited` false (the job was killed, or its
// root said it is done and is about to exit) a placed root gets a kKillTask
// decision too and holds its slot until TaskKilled (or any end) for it.
struct JobFinished {
  JobId job = 0;
  bool root_exited = true;
};
// A job's root task died while its computer lives: the job starts again from
// the beginning (Quincy §2.2) without losing its admission place. Its worker
// tasks are forgotten or killed; the root waits to be placed again.
struct RootFailed {
  JobId job = 0;
};
// A root task made a worker task ready, with its locality data (docs/design.md §5).
struct TaskSubmitted {
  TaskId task = 0;
  JobId job = 0;
  TaskLocality locality;
};
// A worker confirmed that a task it was asked to start is running.
struct TaskStarted {
  TaskId task = 0;
};
// A worker could not start a task it was asked to start (or never answered
// and the master gave up). The task waits again.
struct TaskStartFailed {
  TaskId task = 0;
};
// A worker task exited successfully.
struct TaskCompleted {
  TaskId task = 0;
};
// A worker task exited with an error; the scheduler forgets it (its root
// decides whether to resubmit).
struct TaskFailed {
  TaskId task = 0;
};
// Its root no longer wants a worker task (the loser of a duplicate race, a
// consumer whose input was lost): a waiting one is forgotten, a placed one
// gets a kKillTask decision and is forgotten when TaskKilled confirms it.
struct TaskWithdrawn {
  TaskId task = 0;
};
// A worker confirmed that a task is dead after a kill. A task the scheduler
// asked to kill waits again (preempted); any other killed task is forgotten.
struct TaskKilled {
  TaskId task = 0;
};
// A restarted master heard from a worker that this task (a worker task or a
// job's root) is still running there: the scheduler adopts it as running.
// The job must have been submitted again first (JobSubmitted).
struct TaskAdopted {
  TaskId task = 0;
  JobId job = 0;
  ComputerId computer = kNoComputer;
  Timestamp running_since{0};
  TaskLocality locality;  // ignored for roots
};
// A computer's worker registered (again) and may run tasks.
struct ComputerUp {
  ComputerId computer = 0;
};
// A computer's worker is gone. Worker tasks there are forgotten (their roots
// resubmit them); a root there restarts its job from the beginning.
struct ComputerDown {
  ComputerId computer = 0;
};
// An operator drains a computer (`copse cluster drain`) or gives it back
// (`draining` false). A draining computer stays up but no task is started
// there: the tasks it runs finish there, or, with `move_tasks`, its placed
// worker tasks get kKillTask decisions and wait again (preempted: they keep
// their attempts' times) to run elsewhere. A root task is never moved: it
// holds the job's state, so it finishes where it runs (or is lost with its
// computer, as any root). A drained computer that goes down and comes back
// up is still draining.
struct ComputerDraining {
  ComputerId computer = 0;
  bool draining = true;
  bool move_tasks = false;
};
// Time passed. The driver sends it at Scheduler::NextWakeup() (or more often).
struct Timer {};

using Event = std::variant<JobSubmitted, JobFinished, RootFailed, TaskSubmitted, TaskStarted,
                           TaskStartFailed, TaskCompleted, TaskFailed, TaskWithdrawn, TaskKilled,
                           TaskAdopted, ComputerUp, ComputerDown, ComputerDraining, Timer>;

// ---- Decisions: what the master (or simulator) should do. ----
struct Decision {
  enum class Kind {
    kAdmitJob,   // the job leaves the admission queue and runs now
    kStartTask,  // start `task` (of `job`) on `computer`, then report TaskStarted
    kKillTask,   // kill `task` on `computer`, then report TaskKilled
  };
  Kind kind = Kind::kStartTask;
  JobId job = 0;
  TaskId task = kNoTask;
  ComputerId computer = kNoComputer;
  bool root = false;  // the task is the job's root task

  friend bool operator==(const Decision&, const Decision&) = default;
};

// "start task 7 (job 2) on computer 3", for logs and test failures.
std::string ToString(const Decision& d);
// The event's type name, e.g. "TaskSubmitted".
const char* EventName(const Event& e);
// The name and the ids it carries: "TaskCompleted task 7", for logs.
std::string ToString(const Event& e);

}  // namespace copse::scheduler

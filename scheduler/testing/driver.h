// Driver: plays a small workload against a real Scheduler in simulated time,
// for scenario tests and the scheduler benchmark. Jobs arrive at given
// times; when a job is admitted its worker tasks are submitted (at once,
// before the next Schedule(), or after an optional delay); a started task runs for its given time
// and completes, unless it is killed first (the work is lost and the scheduler re-queues it); a job
// finishes when all its tasks have completed. Workers confirm starts and kills after fixed delays
// (0 by default). It runs the scheduler through the one SchedulingLoop
// (scheduling_loop.h): after the events of each instant, rounds until the
// policy decides nothing more, and Timer events at the loop's next wakeup.
// Everything is deterministic.
// This is not the simulator (sim/ models the network and data); it knows
// nothing but run times.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "copse/status.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduling_loop.h"

namespace copse::scheduler::testing {

struct TaskPlan {
  TaskId id = 0;
  Duration run{1'000'000};
  TaskLocality locality;
  Duration submit_after{0};  // after the job's admission
};

struct JobPlan {
  JobId id = 0;
  Timestamp arrival{0};
  JobAttributes attributes;  // `submitted` is set to `arrival`
  TaskId root = kNoTask;     // required when attributes.root_in_cluster
  std::vector<TaskPlan> tasks;
};

// One time a task occupied a computer.
struct Span {
  TaskId task = 0;
  JobId job = 0;
  ComputerId computer = kNoComputer;
  Timestamp start{0};
  Timestamp end{0};
  bool completed = false;  // false: killed (or still running when the run stopped)
};

class Driver final : public DecisionSink {
 public:
  explicit Driver(Scheduler& scheduler);

  Duration confirm_delay{0};  // decision → TaskStarted
  Duration kill_delay{0};     // kill decision → TaskKilled

  void AddJob(JobPlan plan);
  // Injects an event at `at` (for failures, computers going down, ...).
  void At(Timestamp at, Event event);
  // Processes everything up to and including `until`, or until idle.
  Status RunUntil(Timestamp until);
  Status Run() { return RunUntil(Timestamp::max()); }

  Timestamp now() const { return now_; }
  const std::vector<Span>& spans() const { return spans_; }
  std::optional<Timestamp> finished(JobId job) const;
  // Every decision so far, with the time it was made.
  const std::vector<std::pair<Timestamp, Decision>>& decisions() const { return decisions_; }
  // Called with each decision, once the scheduler has recorded it.
  std::function<void(Timestamp, const Decision&)> on_decision;

  // DecisionSink: carries out a decision (workers confirm after the delays).
  Status Apply(const Decision& d, Timestamp at) override;

 private:
  struct Item {
    std::function<Status()> act;
  };
  void Post(Timestamp at, std::function<Status()> act);
  Status Feed(const Event& event);
  Status Complete(TaskId task, uint64_t attempt);
  void CloseSpan(TaskId task, bool completed);

  Scheduler& sched_;
  SchedulingLoop loop_;
  Timestamp now_{0};
  uint64_t seq_ = 0;
  std::map<std::pair<Timestamp, uint64_t>, Item> queue_;
  std::optional<Timestamp> timer_;
  std::map<JobId, JobPlan> jobs_;
  std::set<JobId> unsubmitted_;  // arrived, tasks not yet submitted
  std::map<TaskId, const TaskPlan*> plans_;
  std::map<TaskId, uint64_t> attempt_;
  std::map<TaskId, size_t> open_span_;
  std::map<JobId, int> left_;
  std::map<JobId, Timestamp> finished_;
  std::vector<Span> spans_;
  std::vector<std::pair<Timestamp, Decision>> decisions_;
};

}  // namespace copse::scheduler::testing

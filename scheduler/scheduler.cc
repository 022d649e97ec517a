#include "scheduler/scheduler.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <set>
#include <type_traits>

#include "scheduler/flow/solvers.h"
#include "scheduler/policy_factory.h"

namespace copse::scheduler {

namespace {

Status ValidateAttributes(const JobSubmitted& e) {
  const JobAttributes& a = e.attributes;
  std::string job = "job " + std::to_string(e.job) + ": ";
  if (a.root_in_cluster && e.root_task == kNoTask) {
    return InvalidArgument(job + "root_task is required when the root runs in the cluster");
  }
  if ((a.min_tasks && *a.min_tasks < 0) || (a.max_tasks && *a.max_tasks < 0)) {
    return InvalidArgument(job + "allocation bounds must be >= 0");
  }
  if (a.min_tasks && a.max_tasks && *a.min_tasks > *a.max_tasks) {
    return InvalidArgument(job + "min_tasks exceeds max_tasks");
  }
  if (!(a.pool.weight > 0)) return InvalidArgument(job + "pool weight must be > 0");
  if (a.pool.min_share < 0) return InvalidArgument(job + "pool min_share must be >= 0");
  if (a.pool.min_share_timeout < Duration{0}) {
    return InvalidArgument(job + "pool min_share_timeout must be >= 0");
  }
  if (a.slot_time < Duration{0} || a.expected_tasks < 0) {
    return InvalidArgument(job + "slot_time and expected_tasks must be >= 0");
  }
  return Status::Ok();
}

bool SamePool(const PoolSpec& a, const PoolSpec& b) {
  return a.weight == b.weight && a.min_share == b.min_share && a.fifo == b.fifo &&
         a.min_share_timeout == b.min_share_timeout;
}

Status ValidateLocality(const ClusterState& s, const TaskLocality& loc, TaskId id) {
  std::string task = "task " + std::to_string(id) + ": ";
  auto bad_bytes = [](TransferBytes b) { return b.rack < 0 || b.core < 0; };
  if (bad_bytes(loc.worst)) return InvalidArgument(task + "negative byte count");
  std::set<int32_t> seen;
  for (const PreferredComputer& c : loc.computers) {
    if (c.computer < 0 || c.computer >= s.num_computers() || !seen.insert(c.computer).second) {
      return InvalidArgument(task + "bad or repeated preferred computer " +
                             std::to_string(c.computer));
    }
    if (bad_bytes(c.bytes)) return InvalidArgument(task + "negative byte count");
  }
  seen.clear();
  for (const PreferredRack& r : loc.racks) {
    if (r.rack < 0 || r.rack >= s.num_racks() || !seen.insert(r.rack).second) {
      return InvalidArgument(task + "bad or repeated preferred rack " + std::to_string(r.rack));
    }
    if (bad_bytes(r.bytes)) return InvalidArgument(task + "negative byte count");
  }
  return Status::Ok();
}

}  // namespace

Scheduler::Scheduler(Topology topology, std::unique_ptr<Policy> policy, int max_running_jobs)
    : state_(std::move(topology)),
      policy_(std::move(policy)),
      max_running_jobs_(max_running_jobs) {}

Result<std::unique_ptr<Scheduler>> Scheduler::Create(Topology topology, SchedulerOptions options) {
  COPSE_RETURN_IF_ERROR(ValidateTopology(topology));
  if (options.max_running_jobs < 1) {
    return InvalidArgument("max_running_jobs (K) must be >= 1, got " +
                           std::to_string(options.max_running_jobs));
  }
  std::vector<std::string> solvers = flow::SolverNames();
  if (std::find(solvers.begin(), solvers.end(), options.flow_solver) == solvers.end()) {
    std::string known;
    for (const std::string& n : solvers) known += (known.empty() ? "" : ", ") + n;
    return InvalidArgument("solver = \"" + options.flow_solver + "\": expected one of " + known);
  }
  PolicyContext ctx{&topology, options.seed, std::move(options.flow_solver), options.stats_clock};
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<Policy> policy, MakePolicy(options.policy, ctx));
  return std::unique_ptr<Scheduler>(
      new Scheduler(std::move(topology), std::move(policy), options.max_running_jobs));
}

Result<std::unique_ptr<Scheduler>> Scheduler::FromConfig(const ClusterConfig& config, uint64_t seed,
                                                         const Clock* stats_clock) {
  COPSE_ASSIGN_OR_RETURN(Topology topology, TopologyFromConfig(config));
  SchedulerOptions o;
  o.policy = config.scheduler;
  o.max_running_jobs = config.max_running_jobs;
  o.seed = seed;
  o.flow_solver = config.scheduler.solver;
  o.stats_clock = stats_clock;
  auto s = Create(std::move(topology), std::move(o));
  if (!s.ok()) return s.status().WithContext(config.source.string() + ": [scheduler]");
  return s;
}

Status Scheduler::Handle(const Event& event, Timestamp now) {
  if (now < now_) {
    return InvalidArgument(std::string(EventName(event)) + " at " + std::to_string(now.count()) +
                           "us is earlier than the previous event");
  }
  now_ = now;
  return Dispatch(event);
}

Status Scheduler::Dispatch(const Event& event) {
  return std::visit(
      [this](const auto& e) -> Status {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, JobSubmitted>) return OnJobSubmitted(e);
        if constexpr (std::is_same_v<T, JobFinished>) return OnJobFinished(e);
        if constexpr (std::is_same_v<T, RootFailed>) return OnRootFailed(e);
        if constexpr (std::is_same_v<T, TaskWithdrawn>) return OnTaskWithdrawn(e);
        if constexpr (std::is_same_v<T, TaskSubmitted>) return OnTaskSubmitted(e);
        if constexpr (std::is_same_v<T, TaskStarted>) return OnTaskStarted(e);
        if constexpr (std::is_same_v<T, TaskStartFailed>) return OnTaskStartFailed(e);
        if constexpr (std::is_same_v<T, TaskCompleted>) {
          return OnTaskEnded(e.task, Change::Reason::kCompleted);
        }
        if constexpr (std::is_same_v<T, TaskFailed>) {
          return OnTaskEnded(e.task, Change::Reason::kFailed);
        }
        if constexpr (std::is_same_v<T, TaskKilled>) return OnTaskKilled(e);
        if constexpr (std::is_same_v<T, TaskAdopted>) return OnTaskAdopted(e);
        if constexpr (std::is_same_v<T, ComputerUp>) return OnComputerUp(e);
        if constexpr (std::is_same_v<T, ComputerDown>) return OnComputerDown(e);
        if constexpr (std::is_same_v<T, ComputerDraining>) return OnComputerDraining(e);
        return Status::Ok();  // Timer: only time passes
      },
      event);
}

void Scheduler::Notify(Change::Kind kind, JobId job, const TaskInfo* task, ComputerId c) {
  Tell(Change{kind, job, task, c, Change::Reason::kNone});
}

void Scheduler::Tell(const Change& change) {
  policy_->Observe(state_, change, now_);
  if (observer_ != nullptr) observer_->OnChange(state_, change, now_);
}

Status Scheduler::OnJobSubmitted(const JobSubmitted& e) {
  if (state_.FindJob(e.job) != nullptr) {
    return AlreadyExists("JobSubmitted: job " + std::to_string(e.job) + " exists");
  }
  COPSE_RETURN_IF_ERROR(ValidateAttributes(e));
  if (e.attributes.root_in_cluster && state_.FindTask(e.root_task) != nullptr) {
    return AlreadyExists("JobSubmitted: root task id " + std::to_string(e.root_task) +
                         " is in use");
  }
  const PoolSpec& pool = e.attributes.pool;
  for (JobId other : state_.admitted_jobs()) {
    const PoolSpec& p = state_.job(other).attributes.pool;
    if (!pool.name.empty() && p.name == pool.name && !SamePool(p, pool)) {
      return InvalidArgument("JobSubmitted: job " + std::to_string(e.job) + " gives pool '" +
                             pool.name + "' settings that differ from job " +
                             std::to_string(other) + "'s");
    }
  }
  state_.AddJob(e);
  queue_.insert({e.attributes.submitted, e.job});
  AdmitReady();
  return Status::Ok();
}

void Scheduler::AdmitReady() {
  while (state_.num_admitted() < max_running_jobs_ && !queue_.empty()) {
    JobId job = queue_.begin()->second;
    queue_.erase(queue_.begin());
    Admit(job);
  }
}

void Scheduler::Admit(JobId job) {
  state_.AdmitJob(job, now_);
  pending_.push_back({Decision::Kind::kAdmitJob, job, kNoTask, kNoComputer, false});
  Notify(Change::Kind::kJobAdmitted, job, nullptr, kNoComputer);
  TaskId root = state_.job(job).root_task;
  if (root != kNoTask) {
    const TaskInfo& t = state_.AddTask(root, job, /*root=*/true, {}, now_);
    Notify(Change::Kind::kTaskWaiting, job, &t, kNoComputer);
  }
}

std::vector<JobId> Scheduler::QueuedJobs() const {
  std::vector<JobId> out;
  for (const auto& [when, job] : queue_) out.push_back(job);
  return out;
}

Status Scheduler::OnJobFinished(const JobFinished& e) {
  const JobInfo* j = state_.FindJob(e.job);
  if (j == nullptr || j->finished) {
    return NotFound("JobFinished: no running or queued job " + std::to_string(e.job));
  }
  if (!j->admitted) {  // cancelled while queued
    queue_.erase({j->attributes.submitted, e.job});
    state_.FinishJob(e.job);
    state_.EraseJobIfDone(e.job);
    return Status::Ok();
  }
  if (const TaskInfo* root = state_.FindTask(j->root_task); root != nullptr) {
    if (!e.root_exited && root->state != TaskState::kWaiting) {
      KillOrphan(root->id);  // it holds its slot until it is gone
    } else {
      RemoveTask(root->id, Change::Reason::kJobGone);
    }
  }
  DropJobTasks(e.job);
  state_.FinishJob(e.job);
  Notify(Change::Kind::kJobRemoved, e.job, nullptr, kNoComputer);
  state_.EraseJobIfDone(e.job);
  AdmitReady();
  return Status::Ok();
}

Status Scheduler::OnRootFailed(const RootFailed& e) {
  const JobInfo* j = state_.FindJob(e.job);
  const TaskInfo* root = j != nullptr ? state_.FindTask(j->root_task) : nullptr;
  if (j == nullptr || !j->admitted || root == nullptr) {
    return NotFound("RootFailed: job " + std::to_string(e.job) + " has no root task here");
  }
  if (!root->placed()) {
    return FailedPrecondition("RootFailed: the root of job " + std::to_string(e.job) + " is " +
                              TaskStateName(root->state));
  }
  DropJobTasks(e.job);  // the job starts again from the beginning (Quincy §2.2)
  Requeue(root->id);
  return Status::Ok();
}

Status Scheduler::OnTaskWithdrawn(const TaskWithdrawn& e) {
  COPSE_ASSIGN_OR_RETURN(const TaskInfo* t, LookupTask(e.task, "TaskWithdrawn"));
  if (t->root) {
    return InvalidArgument("TaskWithdrawn: task " + std::to_string(e.task) + " is a root");
  }
  if (t->state == TaskState::kWaiting) {
    RemoveTask(e.task, Change::Reason::kKilled);
  } else {
    KillOrphan(e.task);  // forgotten once the worker confirms it dead
  }
  return Status::Ok();
}

void Scheduler::DropJobTasks(JobId job) {
  std::vector<TaskId> workers(state_.job(job).workers.begin(), state_.job(job).workers.end());
  for (TaskId id : workers) {
    const TaskInfo& t = state_.task(id);
    if (t.state == TaskState::kWaiting) {
      RemoveTask(id, Change::Reason::kJobGone);
    } else {
      KillOrphan(id);
    }
  }
}

void Scheduler::KillOrphan(TaskId id) {
  const TaskInfo& t = state_.task(id);
  bool already = t.state == TaskState::kKillRequested;
  state_.RequestKill(id, /*orphan=*/true, now_);
  if (already) return;  // a kill is on its way
  pending_.push_back({Decision::Kind::kKillTask, t.job, id, t.computer, t.root});
  Notify(Change::Kind::kTaskKillRequested, t.job, &t, t.computer);
}

void Scheduler::RemoveTask(TaskId id, Change::Reason reason) {
  TaskInfo last = state_.RemoveTask(id, now_);
  Tell(Change{Change::Kind::kTaskRemoved, last.job, &last, last.computer, reason});
  const JobInfo* j = state_.FindJob(last.job);
  if (j != nullptr && j->finished) state_.EraseJobIfDone(last.job);
}

void Scheduler::Requeue(TaskId id) {
  state_.Requeue(id, now_);
  const TaskInfo& t = state_.task(id);
  Notify(Change::Kind::kTaskWaiting, t.job, &t, kNoComputer);
}

Result<const TaskInfo*> Scheduler::LookupTask(TaskId id, const char* event) const {
  const TaskInfo* t = state_.FindTask(id);
  if (t == nullptr) return NotFound(std::string(event) + ": unknown task " + std::to_string(id));
  return t;
}

Status Scheduler::OnTaskSubmitted(const TaskSubmitted& e) {
  const JobInfo* j = state_.FindJob(e.job);
  if (j == nullptr || !j->admitted) {
    return FailedPrecondition("TaskSubmitted: job " + std::to_string(e.job) + " is not running");
  }
  if (state_.FindTask(e.task) != nullptr || e.task == kNoTask) {
    return AlreadyExists("TaskSubmitted: task id " + std::to_string(e.task) + " is in use");
  }
  for (JobId q : QueuedJobs()) {
    if (state_.job(q).root_task == e.task) {
      return AlreadyExists("TaskSubmitted: task id " + std::to_string(e.task) +
                           " is a queued job's root");
    }
  }
  COPSE_RETURN_IF_ERROR(ValidateLocality(state_, e.locality, e.task));
  const TaskInfo& t = state_.AddTask(e.task, e.job, false, e.locality, now_);
  Notify(Change::Kind::kTaskWaiting, e.job, &t, kNoComputer);
  return Status::Ok();
}

Status Scheduler::OnTaskStarted(const TaskStarted& e) {
  COPSE_ASSIGN_OR_RETURN(const TaskInfo* t, LookupTask(e.task, "TaskStarted"));
  switch (t->state) {
    case TaskState::kStartRequested:
      state_.MarkRunning(e.task, now_);
      Notify(Change::Kind::kTaskRunning, t->job, t, t->computer);
      return Status::Ok();
    case TaskState::kRunning:        // a repeated confirmation
    case TaskState::kKillRequested:  // the kill is on its way
      return Status::Ok();
    case TaskState::kWaiting:
      break;
  }
  return FailedPrecondition("TaskStarted: task " + std::to_string(e.task) +
                            " was not asked to start");
}

Status Scheduler::OnTaskStartFailed(const TaskStartFailed& e) {
  COPSE_ASSIGN_OR_RETURN(const TaskInfo* t, LookupTask(e.task, "TaskStartFailed"));
  if (t->state == TaskState::kKillRequested) return OnTaskKilled({e.task});
  if (t->state != TaskState::kStartRequested) {
    return FailedPrecondition("TaskStartFailed: task " + std::to_string(e.task) + " is " +
                              TaskStateName(t->state));
  }
  const_cast<TaskInfo*>(t)->start_failures++;
  Requeue(e.task);
  return Status::Ok();
}

Status Scheduler::OnTaskEnded(TaskId id, Change::Reason reason) {
  const char* ev = reason == Change::Reason::kCompleted ? "TaskCompleted" : "TaskFailed";
  COPSE_ASSIGN_OR_RETURN(const TaskInfo* t, LookupTask(id, ev));
  if (t->root && t->orphan) {  // the root of a finished job ended by itself
    RemoveTask(id, Change::Reason::kJobGone);
    return Status::Ok();
  }
  if (t->root) {
    return InvalidArgument(std::string(ev) + ": task " + std::to_string(id) +
                           " is a root; send JobFinished");
  }
  if (t->state == TaskState::kWaiting) {
    return FailedPrecondition(std::string(ev) + ": task " + std::to_string(id) + " is not running");
  }
  if (reason == Change::Reason::kCompleted) {
    auto& j = const_cast<JobInfo&>(state_.job(t->job));
    ++j.completed;
    j.completed_run_time += t->RunTime(now_);
  }
  RemoveTask(id, t->orphan ? Change::Reason::kJobGone : reason);
  return Status::Ok();
}

Status Scheduler::OnTaskKilled(const TaskKilled& e) {
  COPSE_ASSIGN_OR_RETURN(const TaskInfo* t, LookupTask(e.task, "TaskKilled"));
  if (t->state == TaskState::kWaiting) {
    return FailedPrecondition("TaskKilled: task " + std::to_string(e.task) + " is not running");
  }
  if (t->state == TaskState::kKillRequested && !t->orphan) {
    Requeue(e.task);  // preempted: it waits again
  } else if (t->root && !t->orphan) {
    return InvalidArgument("TaskKilled: task " + std::to_string(e.task) +
                           " is a root; send JobFinished");
  } else {
    RemoveTask(e.task, t->orphan ? Change::Reason::kJobGone : Change::Reason::kKilled);
  }
  return Status::Ok();
}

Status Scheduler::OnTaskAdopted(const TaskAdopted& e) {
  const JobInfo* j = state_.FindJob(e.job);
  if (j == nullptr || j->finished) {
    return FailedPrecondition("TaskAdopted: job " + std::to_string(e.job) + " was not submitted");
  }
  if (e.computer < 0 || e.computer >= state_.num_computers() || !state_.computer(e.computer).up) {
    return FailedPrecondition("TaskAdopted: computer " + std::to_string(e.computer) + " is not up");
  }
  bool root = e.task == j->root_task && j->root_task != kNoTask;
  const TaskInfo* t = state_.FindTask(e.task);
  if (t != nullptr && t->job != e.job) {
    return AlreadyExists("TaskAdopted: task " + std::to_string(e.task) + " belongs to job " +
                         std::to_string(t->job));
  }
  if (t != nullptr && t->state != TaskState::kWaiting &&
      !(t->state == TaskState::kStartRequested && t->computer == e.computer)) {
    return FailedPrecondition("TaskAdopted: task " + std::to_string(e.task) + " is " +
                              TaskStateName(t->state) + " elsewhere");
  }
  bool here = t != nullptr && t->computer == e.computer;
  // A draining computer keeps what runs there, so it adopts too.
  if (!here && state_.computer(e.computer).open_slots() == 0) {
    return ResourceExhausted("TaskAdopted: computer " + std::to_string(e.computer) +
                             " has no free slot; kill the task");
  }
  if (!root) COPSE_RETURN_IF_ERROR(ValidateLocality(state_, e.locality, e.task));
  if (!j->admitted) {  // it runs already: admit it even beyond K
    queue_.erase({j->attributes.submitted, e.job});
    Admit(e.job);
    t = state_.FindTask(e.task);
  }
  if (t == nullptr) {
    const TaskInfo& added = state_.AddTask(e.task, e.job, false, e.locality, now_);
    Notify(Change::Kind::kTaskWaiting, e.job, &added, kNoComputer);
  }
  state_.AdoptRunning(e.task, e.computer, e.running_since, now_);
  const TaskInfo& adopted = state_.task(e.task);
  Notify(here ? Change::Kind::kTaskRunning : Change::Kind::kTaskPlaced, e.job, &adopted,
         e.computer);
  return Status::Ok();
}

Status Scheduler::OnComputerUp(const ComputerUp& e) {
  if (e.computer < 0 || e.computer >= state_.num_computers()) {
    return NotFound("ComputerUp: no computer " + std::to_string(e.computer));
  }
  if (state_.computer(e.computer).up) return Status::Ok();
  state_.SetComputerUp(e.computer, true);
  Notify(Change::Kind::kComputerUp, 0, nullptr, e.computer);
  return Status::Ok();
}

Status Scheduler::OnComputerDown(const ComputerDown& e) {
  if (e.computer < 0 || e.computer >= state_.num_computers()) {
    return NotFound("ComputerDown: no computer " + std::to_string(e.computer));
  }
  if (!state_.computer(e.computer).up) return Status::Ok();
  // Worker tasks first, so that a root's restart does not kill tasks that
  // died with this computer anyway.
  std::vector<TaskId> here = state_.computer(e.computer).tasks;
  std::vector<TaskId> roots;
  for (TaskId id : here) {
    const TaskInfo* t = state_.FindTask(id);
    if (t == nullptr || t->computer != e.computer) continue;
    if (t->root) {
      roots.push_back(id);
    } else if (t->state == TaskState::kKillRequested && !t->orphan) {
      Requeue(id);  // the kill happened
    } else {
      RemoveTask(id, t->orphan ? Change::Reason::kJobGone : Change::Reason::kLost);
    }
  }
  for (TaskId id : roots) {  // the job starts again from the beginning (Quincy §2.2)
    DropJobTasks(state_.task(id).job);
    Requeue(id);
  }
  state_.SetComputerUp(e.computer, false);
  Notify(Change::Kind::kComputerDown, 0, nullptr, e.computer);
  return Status::Ok();
}

Status Scheduler::OnComputerDraining(const ComputerDraining& e) {
  if (e.computer < 0 || e.computer >= state_.num_computers()) {
    return NotFound("ComputerDraining: no computer " + std::to_string(e.computer));
  }
  const bool changed = state_.computer(e.computer).draining != e.draining;
  state_.SetComputerDraining(e.computer, e.draining);
  int moved = 0;
  if (e.draining && e.move_tasks) {
    std::vector<TaskId> here = state_.computer(e.computer).tasks;
    for (TaskId id : here) {
      const TaskInfo& t = state_.task(id);
      if (t.root || !t.placed()) continue;             // roots finish where they run
      state_.RequestKill(id, /*orphan=*/false, now_);  // preempted: it waits again when gone
      pending_.push_back({Decision::Kind::kKillTask, t.job, id, e.computer, false});
      Notify(Change::Kind::kTaskKillRequested, t.job, &t, e.computer);
      ++moved;
    }
  }
  if (changed || moved > 0) Notify(Change::Kind::kComputerDraining, 0, nullptr, e.computer);
  return Status::Ok();
}

Status Scheduler::ApplyDecisions(const std::vector<Decision>& ds, size_t first) {
  std::map<ComputerId, int> taken;
  std::set<TaskId> seen;
  for (size_t i = first; i < ds.size(); ++i) {
    const Decision& d = ds[i];
    const TaskInfo* t = state_.FindTask(d.task);
    bool ok = t != nullptr && seen.insert(d.task).second;
    if (ok && d.kind == Decision::Kind::kStartTask) {
      ok = t->state == TaskState::kWaiting && d.computer >= 0 &&
           d.computer < state_.num_computers() &&
           state_.computer(d.computer).free_slots() > taken[d.computer]++;
    } else if (ok) {
      ok = d.kind == Decision::Kind::kKillTask && t->placed();
    }
    if (!ok) return Internal(std::string(policy_->name()) + ": invalid decision " + ToString(d));
  }
  for (size_t i = first; i < ds.size(); ++i) {
    const Decision& d = ds[i];
    if (d.kind == Decision::Kind::kStartTask) {
      state_.Place(d.task, d.computer, now_);
      const TaskInfo& t = state_.task(d.task);
      Notify(Change::Kind::kTaskPlaced, t.job, &t, d.computer);
    } else {
      state_.RequestKill(d.task, /*orphan=*/false, now_);
      const TaskInfo& t = state_.task(d.task);
      Notify(Change::Kind::kTaskKillRequested, t.job, &t, t.computer);
    }
  }
  return Status::Ok();
}

Result<std::vector<Decision>> Scheduler::Schedule(Timestamp now) {
  if (now < now_) return InvalidArgument("Schedule: time went backwards");
  now_ = now;
  std::vector<Decision> out = pending_;
  size_t first = out.size();
  COPSE_RETURN_IF_ERROR(policy_->Schedule(state_, now_, &out));
  COPSE_RETURN_IF_ERROR(ApplyDecisions(out, first));
  pending_.clear();
  for (size_t i = first; i < out.size(); ++i) {  // fill in what the policy may have left out
    const TaskInfo& t = state_.task(out[i].task);
    out[i].job = t.job;
    out[i].root = t.root;
    out[i].computer = t.computer;
  }
  return out;
}

Result<std::vector<Decision>> Scheduler::HandleAndSchedule(const Event& event, Timestamp now) {
  COPSE_RETURN_IF_ERROR(Handle(event, now));
  return Schedule(now);
}

std::optional<Timestamp> Scheduler::NextWakeup() const { return policy_->NextWakeup(state_); }

}  // namespace copse::scheduler

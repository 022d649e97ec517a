#include "scheduler/cluster_state.h"

#include <algorithm>
#include <cassert>

namespace copse::scheduler {

const char* TaskStateName(TaskState s) {
  switch (s) {
    case TaskState::kWaiting:
      return "waiting";
    case TaskState::kStartRequested:
      return "start requested";
    case TaskState::kRunning:
      return "running";
    case TaskState::kKillRequested:
      return "kill requested";
  }
  return "?";
}

Duration TaskInfo::WaitTime(Timestamp now) const {
  return waited + (state == TaskState::kWaiting ? now - since : Duration{0});
}

Duration TaskInfo::RunTime(Timestamp now) const {
  return ran + (placed() ? now - since : Duration{0});
}

ClusterState::ClusterState(Topology topology) : topology_(std::move(topology)) {
  rack_computers_.resize(topology_.racks.size());
  for (size_t i = 0; i < topology_.computers.size(); ++i) {
    ComputerInfo c;
    c.spec = topology_.computers[i];
    computers_.push_back(c);
    rack_computers_[c.spec.rack].push_back(static_cast<ComputerId>(i));
    up_slots_ += c.spec.slots;
  }
  free_slots_ = up_slots_;
}

const JobInfo* ClusterState::FindJob(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const TaskInfo* ClusterState::FindTask(TaskId id) const {
  auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

const JobInfo& ClusterState::job(JobId id) const {
  const JobInfo* j = FindJob(id);
  assert(j != nullptr);
  return *j;
}

const TaskInfo& ClusterState::task(TaskId id) const {
  const TaskInfo* t = FindTask(id);
  assert(t != nullptr);
  return *t;
}

JobInfo& ClusterState::MutableJob(JobId id) { return const_cast<JobInfo&>(job(id)); }
TaskInfo& ClusterState::MutableTask(TaskId id) { return const_cast<TaskInfo&>(task(id)); }

int ClusterState::WorkerSlots() const {
  return std::max(0, up_slots_ + held_slots_ - admitted_roots_ - killing_);
}

std::vector<ComputerId> ClusterState::ComputersWithFreeSlots() const {
  std::vector<ComputerId> out;
  for (size_t i = 0; i < computers_.size(); ++i) {
    if (computers_[i].free_slots() > 0) out.push_back(static_cast<ComputerId>(i));
  }
  return out;
}

bool ClusterState::PrefersComputer(const TaskInfo& t, ComputerId c) {
  for (const PreferredComputer& p : t.locality.computers) {
    if (p.computer == c) return true;
  }
  return false;
}

bool ClusterState::PrefersRack(const TaskInfo& t, RackId r) const {
  for (const PreferredRack& p : t.locality.racks) {
    if (p.rack == r) return true;
  }
  for (const PreferredComputer& p : t.locality.computers) {
    if (p.computer >= 0 && p.computer < num_computers() && rack_of(p.computer) == r) return true;
  }
  return false;
}

bool ClusterState::LocalityFree(const TaskInfo& t) {
  return t.locality.computers.empty() && t.locality.racks.empty();
}

JobInfo& ClusterState::AddJob(const JobSubmitted& e) {
  JobInfo& j = jobs_[e.job];
  j.id = e.job;
  j.attributes = e.attributes;
  j.root_task = e.attributes.root_in_cluster ? e.root_task : kNoTask;
  return j;
}

void ClusterState::AdmitJob(JobId id, Timestamp now) {
  JobInfo& j = MutableJob(id);
  assert(!j.admitted);
  j.admitted = true;
  j.admit_seq = next_admit_seq_++;
  j.admitted_at = now;
  admitted_.push_back(id);
  if (j.root_task != kNoTask) ++admitted_roots_;
}

void ClusterState::FinishJob(JobId id) {
  JobInfo& j = MutableJob(id);
  assert(j.root_task == kNoTask || tasks_.count(j.root_task) == 0 || tasks_.at(j.root_task).orphan);
  if (j.admitted) {
    admitted_.erase(std::find(admitted_.begin(), admitted_.end(), id));
    if (j.root_task != kNoTask) --admitted_roots_;
  }
  j.admitted = false;
  j.finished = true;
}

bool ClusterState::EraseJobIfDone(JobId id) {
  const JobInfo& j = job(id);
  if (j.admitted || !j.workers.empty()) return false;
  if (j.root_task != kNoTask && tasks_.count(j.root_task) != 0) return false;
  jobs_.erase(id);
  return true;
}

void ClusterState::CountState(const TaskInfo& t, int delta) {
  if (t.state == TaskState::kKillRequested && t.orphan) killing_ += delta;
  if (t.root) return;
  JobInfo& j = MutableJob(t.job);
  switch (t.state) {
    case TaskState::kWaiting:
      j.waiting += delta;
      break;
    case TaskState::kStartRequested:
    case TaskState::kRunning:
      j.placed += delta;
      break;
    case TaskState::kKillRequested:
      if (!t.orphan) j.killing += delta;
      break;
  }
}

TaskInfo& ClusterState::AddTask(TaskId id, JobId job, bool root, TaskLocality locality,
                                Timestamp now) {
  assert(tasks_.count(id) == 0);
  TaskInfo& t = tasks_[id];
  t.id = id;
  t.job = job;
  t.root = root;
  t.locality = std::move(locality);
  t.submitted = now;
  t.since = now;
  t.queued_seq = next_queued_seq_++;
  if (!root) MutableJob(job).workers.insert(id);
  CountState(t, +1);
  return t;
}

void ClusterState::CloseSpan(TaskInfo& t, Timestamp now) {
  if (t.state == TaskState::kWaiting) t.waited += now - t.since;
  if (t.placed()) t.ran += now - t.since;
  t.since = now;
}

void ClusterState::Occupy(TaskInfo& t, ComputerId c) {
  ComputerInfo& m = computers_[c];
  assert(m.up && m.used < m.spec.slots);
  ++m.used;
  if (m.usable()) --free_slots_;
  if (m.up && m.draining) ++held_slots_;
  if (t.root) ++m.roots;
  m.tasks.push_back(t.id);
  t.computer = c;
}

void ClusterState::Vacate(TaskInfo& t) {
  if (t.computer == kNoComputer) return;
  ComputerInfo& m = computers_[t.computer];
  --m.used;
  if (m.usable()) ++free_slots_;
  if (m.up && m.draining) --held_slots_;
  if (t.root) --m.roots;
  if (t.state == TaskState::kKillRequested) --m.killing;
  m.tasks.erase(std::find(m.tasks.begin(), m.tasks.end(), t.id));
  t.computer = kNoComputer;
}

void ClusterState::Place(TaskId id, ComputerId c, Timestamp now) {
  TaskInfo& t = MutableTask(id);
  assert(t.state == TaskState::kWaiting);
  CountState(t, -1);
  CloseSpan(t, now);
  Occupy(t, c);
  t.state = TaskState::kStartRequested;
  t.placed_seq = next_placed_seq_++;
  CountState(t, +1);
}

void ClusterState::MarkRunning(TaskId id, Timestamp now) {
  TaskInfo& t = MutableTask(id);
  assert(t.state == TaskState::kStartRequested);
  CloseSpan(t, now);
  t.state = TaskState::kRunning;
}

void ClusterState::RequestKill(TaskId id, bool orphan, Timestamp now) {
  TaskInfo& t = MutableTask(id);
  assert(t.state != TaskState::kWaiting);
  CountState(t, -1);
  CloseSpan(t, now);
  if (t.state != TaskState::kKillRequested) ++computers_[t.computer].killing;
  t.state = TaskState::kKillRequested;
  t.orphan = t.orphan || orphan;
  CountState(t, +1);
}

void ClusterState::Requeue(TaskId id, Timestamp now) {
  TaskInfo& t = MutableTask(id);
  CountState(t, -1);
  CloseSpan(t, now);
  Vacate(t);
  t.state = TaskState::kWaiting;
  t.queued_seq = next_queued_seq_++;
  CountState(t, +1);
}

TaskInfo ClusterState::RemoveTask(TaskId id, Timestamp now) {
  TaskInfo& t = MutableTask(id);
  CountState(t, -1);
  CloseSpan(t, now);
  Vacate(t);
  TaskInfo copy = t;
  if (!t.root) MutableJob(t.job).workers.erase(id);
  tasks_.erase(id);
  return copy;
}

void ClusterState::AdoptRunning(TaskId id, ComputerId c, Timestamp since, Timestamp now) {
  TaskInfo& t = MutableTask(id);
  assert(t.state == TaskState::kWaiting || t.state == TaskState::kStartRequested);
  CountState(t, -1);
  CloseSpan(t, now);
  if (t.computer == kNoComputer) {
    Occupy(t, c);
    t.placed_seq = next_placed_seq_++;
  }
  t.state = TaskState::kRunning;
  t.since = std::min(since, now);
  CountState(t, +1);
}

void ClusterState::CountSlots(const ComputerInfo& m, int sign) {
  if (m.usable()) {
    up_slots_ += sign * m.spec.slots;
    free_slots_ += sign * (m.spec.slots - m.used);
  } else if (m.up) {
    held_slots_ += sign * m.used;
  }
}

void ClusterState::SetComputerUp(ComputerId c, bool up) {
  ComputerInfo& m = computers_[c];
  if (m.up == up) return;
  CountSlots(m, -1);
  m.up = up;
  CountSlots(m, +1);
}

void ClusterState::SetComputerDraining(ComputerId c, bool draining) {
  ComputerInfo& m = computers_[c];
  if (m.draining == draining) return;
  CountSlots(m, -1);
  m.draining = draining;
  CountSlots(m, +1);
}

}  // namespace copse::scheduler

#include "scheduler/quincy_graph.h"

#include <algorithm>
#include <cassert>

namespace copse::scheduler {

using flow::ArcId;
using flow::kNoId;
using flow::NodeId;

QuincyGraph::QuincyGraph(const Topology& topology, const QuincyCostParams& params)
    : topology_(topology), params_(params) {
  sink_ = g_.AddNode(0);
  cluster_ = g_.AddNode(0);
  wait_group_ = g_.AddCostGroup();
  run_group_ = g_.AddCostGroup();
  rack_capacity_.assign(topology.racks.size(), 0);
  for (size_t r = 0; r < topology.racks.size(); ++r) {
    rack_node_.push_back(g_.AddNode(0));
    rack_arc_.push_back(g_.AddArc(cluster_, rack_node_[r], 0, 0));
  }
  for (const ComputerSpec& c : topology.computers) {
    NodeId n = g_.AddNode(0);
    computer_node_.push_back(n);
    computer_sink_.push_back(g_.AddArc(n, sink_, 0, 0));
    computer_rack_.push_back(g_.AddArc(rack_node_[c.rack], n, 0, 0));
    capacity_.push_back(0);
    if (node_computer_.size() <= n) node_computer_.resize(n + 1, kNoComputer);
    node_computer_[n] = static_cast<ComputerId>(computer_node_.size() - 1);
  }
  for (size_t c = 0; c < topology.computers.size(); ++c) {
    SetComputerCapacity(static_cast<ComputerId>(c), topology.computers[c].slots);
  }
}

void QuincyGraph::SetCost(ArcId a, int64_t cost) {
  if (g_.cost(a) == cost) return;
  KeepArc(a);
  g_.SetCost(a, cost);
}

void QuincyGraph::SetCap(ArcId a, int64_t cap) {
  if (g_.capacity(a) == cap) return;
  KeepArc(a);
  g_.SetCapacity(a, cap);
}

void QuincyGraph::SetSupply(NodeId n, int64_t supply) {
  if (g_.supply(n) == supply) return;
  if (journal_ && !g_.IsNewNode(n)) supply_was_.try_emplace(n, g_.supply(n));
  g_.SetSupply(n, supply);
}

void QuincyGraph::SetComputerCapacity(ComputerId c, int slots) {
  if (capacity_[c] == slots) return;
  RackId r = topology_.computers[c].rack;
  rack_capacity_[r] += slots - capacity_[c];
  capacity_[c] = slots;
  SetCap(computer_sink_[c], slots);
  SetCap(computer_rack_[c], slots);
  SetCap(rack_arc_[r], rack_capacity_[r]);
}

void QuincyGraph::MarkNode(NodeId n, TaskId task) {
  if (is_task_.size() <= n) {
    is_task_.resize(n + 1, 0);
    node_task_.resize(n + 1, kNoTask);
  }
  is_task_[n] = 1;
  node_task_[n] = task;
}

void QuincyGraph::UnmarkNode(NodeId n) {
  is_task_[n] = 0;
  node_task_[n] = kNoTask;
}

NodeId QuincyGraph::task_node(TaskId task) const {
  auto it = tasks_.find(task);
  if (it != tasks_.end()) return it->second.node;
  auto r = roots_.find(task);
  return r == roots_.end() ? kNoId : jobs_.at(r->second).root;
}

void QuincyGraph::AddJob(JobId job) {
  assert(!jobs_.count(job));
  Job& j = jobs_[job];
  j.unscheduled = g_.AddNode(0);
  j.to_sink = g_.AddArc(j.unscheduled, sink_, 0, 0);
}

void QuincyGraph::RemoveJob(JobId job) {
  KeepJob(job);
  Job& j = jobs_.at(job);
  assert(j.tasks == 0 && j.root == kNoId);
  sink_demand_ -= j.f;
  g_.RemoveNode(j.unscheduled);
  jobs_.erase(job);
}

void QuincyGraph::SetJobBounds(JobId job, int64_t e, int64_t f) {
  Job& j = jobs_.at(job);
  assert(0 <= e && e <= f && f <= j.tasks);
  if (j.e != e || j.f != f) KeepJob(job);
  sink_demand_ += f - j.f;
  j.e = e;
  j.f = f;
  SetSupply(j.unscheduled, f - j.tasks);
  SetCap(j.to_sink, f - e);
}

void QuincyGraph::BalanceSink() { SetSupply(sink_, -sink_demand_); }

void QuincyGraph::AddRoot(JobId job, TaskId root) {
  Job& j = jobs_.at(job);
  assert(j.root == kNoId);
  j.root_task = root;
  roots_[root] = job;
  j.root = g_.AddNode(1);
  MarkNode(j.root, root);
  j.root_arc = g_.AddArc(j.root, cluster_, 1, 0);
  j.root_wait = g_.AddArc(j.root, sink_, 1, root_wait_cost());
  sink_demand_ += 1;
}

void QuincyGraph::RemoveRoot(JobId job) {
  Job& j = jobs_.at(job);
  if (j.root == kNoId) return;
  KeepTask(j.root_task);
  UnmarkNode(j.root);
  roots_.erase(j.root_task);
  g_.RemoveNode(j.root);
  j.root = j.root_arc = j.root_wait = kNoId;
  j.root_task = kNoTask;
  sink_demand_ -= 1;
}

void QuincyGraph::SetRootComputer(JobId job, ComputerId c) {
  Job& j = jobs_.at(job);
  KeepTask(j.root_task);
  g_.RemoveArc(j.root_arc);
  if (j.root_wait != kNoId) g_.RemoveArc(j.root_wait);
  j.root_wait = kNoId;
  if (c == kNoComputer) {
    j.root_arc = g_.AddArc(j.root, cluster_, 1, 0);
    j.root_wait = g_.AddArc(j.root, sink_, 1, root_wait_cost());
  } else {
    j.root_arc = g_.AddArc(j.root, computer_node_[c], 1, 0);
  }
}

void QuincyGraph::AddTask(TaskId task, JobId job, const TaskLocality& loc) {
  assert(!tasks_.count(task));
  KeepJob(job);
  Job& j = jobs_.at(job);
  Task& t = tasks_[task];
  t.job = job;
  t.node = g_.AddNode(1);
  MarkNode(t.node, task);
  t.unscheduled = g_.AddArc(t.node, j.unscheduled, 1, 0);
  t.cluster = g_.AddArc(t.node, cluster_, 1, 0);
  for (const PreferredRack& r : loc.racks) {
    t.racks.push_back(g_.AddArc(t.node, rack_node_[r.rack], 1, 0));
    t.rack_ids.push_back(r.rack);
  }
  for (const PreferredComputer& c : loc.computers) {
    t.computers.push_back(g_.AddArc(t.node, computer_node_[c.computer], 1, 0));
    t.computer_ids.push_back(c.computer);
  }
  ++j.tasks;
  SetSupply(j.unscheduled, j.f - j.tasks);
}

void QuincyGraph::RemoveTask(TaskId task) {
  auto it = tasks_.find(task);
  if (it == tasks_.end()) return;
  KeepTask(task);
  KeepJob(it->second.job);
  Job& j = jobs_.at(it->second.job);
  UnmarkNode(it->second.node);
  g_.RemoveNode(it->second.node);
  tasks_.erase(it);
  --j.tasks;
  // Keep F_j <= N_j until the next SetJobBounds.
  if (j.f > j.tasks) {
    sink_demand_ -= j.f - j.tasks;
    j.f = j.tasks;
    j.e = std::min(j.e, j.f);
    SetCap(j.to_sink, j.f - j.e);
  }
  SetSupply(j.unscheduled, j.f - j.tasks);
}

ArcId QuincyGraph::RunningArc(const Task& t) const {
  if (t.running == kNoComputer) return kNoId;
  for (size_t i = 0; i < t.computer_ids.size(); ++i) {
    if (t.computer_ids[i] == t.running) return t.computers[i];
  }
  return t.extra;
}

void QuincyGraph::SetTaskComputer(TaskId task, ComputerId c) {
  Task& t = tasks_.at(task);
  if (t.running == c) return;
  KeepTask(task);
  if (ArcId was = RunningArc(t); was != kNoId) SetGroup(was, flow::kNoGroup);
  if (t.extra != kNoId) g_.RemoveArc(t.extra);
  t.extra = kNoId;
  t.running = c;
  if (c != kNoComputer && RunningArc(t) == kNoId) {
    t.extra = g_.AddArc(t.node, computer_node_[c], 1, 0);
  }
  ApplyMovable(t);
  ApplyClock(t);
}

void QuincyGraph::SetGroup(ArcId a, flow::GroupId group) {
  if (g_.cost_group(a) == group) return;
  KeepArc(a);
  g_.SetCostGroup(a, group);
}

void QuincyGraph::ApplyClock(const Task& t) {
  const ArcId run = RunningArc(t);
  SetGroup(t.unscheduled, t.clocked && run == kNoId ? wait_group_ : flow::kNoGroup);
  if (run != kNoId) SetGroup(run, t.clocked ? run_group_ : flow::kNoGroup);
}

void QuincyGraph::SetTaskClocked(TaskId task, bool clocked) {
  Task& t = tasks_.at(task);
  if (t.clocked == clocked) return;
  t.clocked = clocked;
  ApplyClock(t);
}

void QuincyGraph::ShiftClock(int64_t wait, int64_t run) {
  g_.ShiftCostGroup(wait_group_, wait);
  g_.ShiftCostGroup(run_group_, run);
}

void QuincyGraph::SetTaskCosts(TaskId task, const QuincyArcCosts& costs) {
  Task& t = tasks_.at(task);
  SetCost(t.unscheduled, costs.unscheduled);
  SetCost(t.cluster, costs.any_computer);
  for (size_t i = 0; i < t.racks.size(); ++i) SetCost(t.racks[i], costs.racks[i]);
  for (size_t i = 0; i < t.computers.size(); ++i) SetCost(t.computers[i], costs.computers[i]);
  if (t.extra != kNoId) SetCost(t.extra, *costs.running);
}

void QuincyGraph::SetWaitCost(TaskId task, int64_t cost) {
  SetCost(tasks_.at(task).unscheduled, cost);
}

void QuincyGraph::SetRunningCost(TaskId task, int64_t cost) {
  const Task& t = tasks_.at(task);
  assert(t.running != kNoComputer);
  SetCost(RunningArc(t), cost);
}

void QuincyGraph::SetTaskMovable(TaskId task, bool movable) {
  Task& t = tasks_.at(task);
  if (t.movable == movable) return;
  t.movable = movable;
  ApplyMovable(t);
}

void QuincyGraph::ApplyMovable(Task& t) {
  const ArcId keep = RunningArc(t);
  const int64_t cap = (t.movable || keep == kNoId) ? 1 : 0;
  auto set = [&](ArcId a) { SetCap(a, a == keep ? 1 : cap); };
  set(t.unscheduled);
  set(t.cluster);
  for (ArcId a : t.racks) set(a);
  for (ArcId a : t.computers) set(a);
  if (t.extra != kNoId) set(t.extra);
}

QuincyGraph::Route QuincyGraph::RouteOf(TaskId task, const std::vector<int64_t>& flow) const {
  Route r;
  auto it = tasks_.find(task);
  if (it == tasks_.end()) {  // a root: its only placing arc
    const Job& j = jobs_.at(roots_.at(task));
    if (flow[j.root_arc] > 0) {
      NodeId head = g_.head(j.root_arc);
      if (head == cluster_) {
        r.via = Route::Via::kCluster;
      } else {
        r.via = Route::Via::kComputer;
        r.computer = node_computer_[head];
      }
    }
    return r;
  }
  const Task& t = it->second;
  if (flow[t.cluster] > 0) r.via = Route::Via::kCluster;
  for (size_t i = 0; i < t.racks.size(); ++i) {
    if (flow[t.racks[i]] > 0) {
      r.via = Route::Via::kRack;
      r.rack = t.rack_ids[i];
    }
  }
  for (size_t i = 0; i < t.computers.size(); ++i) {
    if (flow[t.computers[i]] > 0) {
      r.via = Route::Via::kComputer;
      r.computer = t.computer_ids[i];
    }
  }
  if (t.extra != kNoId && flow[t.extra] > 0) {
    r.via = Route::Via::kComputer;
    r.computer = t.running;
  }
  return r;
}

int64_t QuincyGraph::ComputerInflow(ComputerId c, const std::vector<int64_t>& flow) const {
  return flow[computer_sink_[c]];
}

int64_t QuincyGraph::RackSpare(RackId r, const std::vector<int64_t>& flow) const {
  return g_.capacity(rack_arc_[r]) - flow[rack_arc_[r]];
}

// ---- The checkpoint ----

void QuincyGraph::Checkpoint() {
  Suspend();
  journal_ = true;
  wait_offset_was_ = g_.group_offset(wait_group_);
  run_offset_was_ = g_.group_offset(run_group_);
}

int64_t QuincyGraph::ClockSinceCheckpoint(ArcId a) const {
  const flow::GroupId group = g_.cost_group(a);
  if (!journal_ || group == flow::kNoGroup) return 0;
  return group == wait_group_ ? g_.group_offset(group) - wait_offset_was_
                              : g_.group_offset(group) - run_offset_was_;
}

void QuincyGraph::Suspend() {
  journal_ = false;
  arc_was_.clear();
  supply_was_.clear();
  task_was_.clear();
  job_was_.clear();
}

void QuincyGraph::KeepArc(ArcId a) {
  if (journal_ && !g_.IsNewArc(a)) {
    arc_was_.try_emplace(a, g_.cost(a) - ClockSinceCheckpoint(a), g_.capacity(a));
  }
}

void QuincyGraph::KeepTask(TaskId task) {
  if (!journal_ || task_was_.count(task) != 0) return;
  NodeId n = task_node(task);
  if (n == kNoId || g_.IsNewNode(n)) return;
  task_was_.emplace(task, ViewTask(task));
}

void QuincyGraph::KeepJob(JobId job) {
  if (!journal_ || job_was_.count(job) != 0) return;
  auto it = jobs_.find(job);
  if (it == jobs_.end() || g_.IsNewNode(it->second.unscheduled)) return;
  job_was_.emplace(job, ViewJob(job));
}

int64_t QuincyGraph::SolvedCost(ArcId a) const {
  auto it = arc_was_.find(a);
  return it != arc_was_.end() ? it->second.first : g_.cost(a) - ClockSinceCheckpoint(a);
}

int64_t QuincyGraph::SolvedCapacity(ArcId a) const {
  auto it = arc_was_.find(a);
  return it != arc_was_.end() ? it->second.second : g_.capacity(a);
}

int64_t QuincyGraph::SolvedSupply(NodeId n) const {
  auto it = supply_was_.find(n);
  return it != supply_was_.end() ? it->second : g_.supply(n);
}

QuincyGraph::SolvedArc QuincyGraph::ViewArc(ArcId a, ArcTo to, int32_t id, bool running) const {
  return {a, g_.head(a), to, id, running, SolvedCost(a), SolvedCapacity(a)};
}

QuincyGraph::SolvedTask QuincyGraph::ViewTask(TaskId task) const {
  SolvedTask out;
  auto add = [&](ArcId a, ArcTo to, int32_t id, bool running) {
    if (a != kNoId && !g_.IsNewArc(a)) out.arcs.push_back(ViewArc(a, to, id, running));
  };
  auto it = tasks_.find(task);
  if (it == tasks_.end()) {  // a root
    const Job& j = jobs_.at(roots_.at(task));
    out.job = roots_.at(task);
    out.root = true;
    out.node = j.root;
    const NodeId head = g_.head(j.root_arc);
    if (head != cluster_) out.running = node_computer_[head];
    if (out.running == kNoComputer) {
      add(j.root_arc, ArcTo::kCluster, -1, false);
    } else {
      add(j.root_arc, ArcTo::kComputer, out.running, true);
    }
    add(j.root_wait, ArcTo::kSink, -1, false);
    return out;
  }
  const Task& t = it->second;
  out.job = t.job;
  out.node = t.node;
  out.running = t.running;
  add(t.unscheduled, ArcTo::kUnscheduled, -1, false);
  add(t.cluster, ArcTo::kCluster, -1, false);
  for (size_t i = 0; i < t.racks.size(); ++i) add(t.racks[i], ArcTo::kRack, t.rack_ids[i], false);
  for (size_t i = 0; i < t.computers.size(); ++i) {
    add(t.computers[i], ArcTo::kComputer, t.computer_ids[i], t.computer_ids[i] == t.running);
  }
  add(t.extra, ArcTo::kComputer, t.running, true);
  return out;
}

QuincyGraph::SolvedJob QuincyGraph::ViewJob(JobId job) const {
  const Job& j = jobs_.at(job);
  return {job,
          j.unscheduled,
          j.to_sink,
          j.e,
          j.f,
          j.tasks,
          SolvedSupply(j.unscheduled),
          SolvedCapacity(j.to_sink)};
}

std::optional<QuincyGraph::SolvedTask> QuincyGraph::SolvedTaskOf(TaskId task) const {
  if (!journal_) return std::nullopt;
  if (auto it = task_was_.find(task); it != task_was_.end()) return it->second;
  NodeId n = task_node(task);
  if (n == kNoId || g_.IsNewNode(n)) return std::nullopt;
  return ViewTask(task);
}

void QuincyGraph::ForEachSolvedTask(const std::function<void(TaskId, const SolvedTask&)>& f) const {
  if (!journal_) return;
  for (const auto& [id, st] : task_was_) f(id, st);
  for (const auto& [id, t] : tasks_) {
    if (task_was_.count(id) == 0 && !g_.IsNewNode(t.node)) f(id, ViewTask(id));
  }
  for (const auto& [id, job] : roots_) {
    if (task_was_.count(id) == 0 && !g_.IsNewNode(jobs_.at(job).root)) f(id, ViewTask(id));
  }
}

std::optional<QuincyGraph::SolvedJob> QuincyGraph::SolvedJobOf(JobId job) const {
  if (!journal_) return std::nullopt;
  if (auto it = job_was_.find(job); it != job_was_.end()) return it->second;
  auto it = jobs_.find(job);
  if (it == jobs_.end() || g_.IsNewNode(it->second.unscheduled)) return std::nullopt;
  return ViewJob(job);
}

std::vector<QuincyGraph::SolvedJob> QuincyGraph::SolvedJobs() const {
  std::vector<SolvedJob> out;
  if (!journal_) return out;
  for (const auto& [id, j] : job_was_) out.push_back(j);
  for (const auto& [id, j] : jobs_) {
    if (job_was_.count(id) == 0 && !g_.IsNewNode(j.unscheduled)) out.push_back(ViewJob(id));
  }
  std::sort(out.begin(), out.end(),
            [](const SolvedJob& a, const SolvedJob& b) { return a.job < b.job; });
  return out;
}

}  // namespace copse::scheduler

#include "bench/flow/quincy_workload.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "scheduler/flow/placement.h"

namespace copse::bench {

using flow::ArcId;
using flow::kNoId;
using flow::NodeId;

namespace {

constexpr int64_t kGB = 1'000'000'000;
constexpr int64_t kSecond = 1'000'000;

}  // namespace

QuincyScaleSpec ScaleSpec(const std::string& name) {
  QuincyScaleSpec s;
  s.name = name;
  if (name == "a") return s;
  if (name == "b") {
    s.racks = 50, s.computers = 2500, s.jobs = 100, s.tasks = 25000;
    return s;
  }
  if (name == "c" || name == "d" || name == "e") {
    s.racks = 250, s.computers = 12500, s.slots_min = 13, s.slots_max = 14, s.jobs = 1800;
    s.tasks = 150000;
    s.initially_running = 0.97;
    if (name == "d") s.burst_tasks = 5000;
    if (name == "e") s.tasks = 252000;  // 1.5 tasks per slot
    return s;
  }
  if (name == "t" || name == "tburst") {
    s.racks = 3, s.computers = 24, s.slots_min = 1, s.slots_max = 2, s.jobs = 4, s.tasks = 50;
    s.churn = 0.05;
    s.initially_running = 0.8;
    if (name == "tburst") s.burst_tasks = 30, s.burst_racks = 1;
    return s;
  }
  throw std::invalid_argument("unknown scale " + name);
}

QuincyWorkload::QuincyWorkload(const QuincyScaleSpec& spec, uint64_t seed,
                               scheduler::QuincyCostParams params)
    : spec_(spec), params_(params), rng_(seed) {
  BuildCluster();
  std::uniform_real_distribution<double> w(0, 3);
  for (int j = 0; j < spec_.jobs; ++j) job_weight_.push_back(std::exp(w(rng_)));
  for (int j = 0; j < spec_.jobs; ++j) {
    int c;
    do {
      c = std::uniform_int_distribution<int>(0, spec_.computers - 1)(rng_);
    } while (free_slots_[c] == 0);
    AddJob(c);
  }
  std::discrete_distribution<int> pick(job_weight_.begin(), job_weight_.end());
  for (int i = 0; i < spec_.tasks; ++i) AddTask(pick(rng_), false);
  PlaceInitially();
  for (int t : live_) UpdateTaskCosts(tasks_[t]);
}

void QuincyWorkload::BuildCluster() {
  sink_ = graph_.AddNode(0);
  cluster_ = graph_.AddNode(0);
  rack_computers_.resize(spec_.racks);
  std::uniform_int_distribution<int> slots(spec_.slots_min, spec_.slots_max);
  for (int r = 0; r < spec_.racks; ++r) rack_nodes_.push_back(graph_.AddNode(0));
  for (int i = 0; i < spec_.computers; ++i) {
    int r = static_cast<int>(int64_t{i} * spec_.racks / spec_.computers);
    Computer c{r, slots(rng_), graph_.AddNode(0)};
    graph_.AddArc(rack_nodes_[r], c.node, c.slots, 0);
    graph_.AddArc(c.node, sink_, c.slots, 0);
    rack_computers_[r].push_back(i);
    computers_.push_back(c);
    free_slots_.push_back(c.slots);
    machine_nodes_.push_back(c.node);
    total_slots_ += c.slots;
  }
  for (int r = 0; r < spec_.racks; ++r) {
    int cap = 0;
    for (int i : rack_computers_[r]) cap += computers_[i].slots;
    graph_.AddArc(cluster_, rack_nodes_[r], cap, 0);
  }
}

int QuincyWorkload::AddJob(int root_computer) {
  Job job;
  job.unscheduled = graph_.AddNode(0);
  job.unscheduled_arc = graph_.AddArc(job.unscheduled, sink_, 0, 0);
  job.root = graph_.AddNode(1);
  graph_.SetSupply(sink_, -(++sink_demand_));
  job.root_computer = root_computer;
  if (root_computer >= 0) {
    job.root_arc = graph_.AddArc(job.root, computers_[root_computer].node, 1, 0);
    --free_slots_[root_computer];
  } else {
    job.root_arc = graph_.AddArc(job.root, cluster_, 1, 0);
  }
  jobs_.push_back(job);
  int j = static_cast<int>(jobs_.size()) - 1;
  if (root_of_node_.size() <= job.root) root_of_node_.resize(job.root + 1, -1);
  root_of_node_[job.root] = j;
  return j;
}

void QuincyWorkload::UpdateJobArcs(int j) {
  int workers = jobs_[j].workers;
  int min_running = std::min(workers, 1);  // E_j = 1, F_j = N_j
  graph_.SetCapacity(jobs_[j].unscheduled_arc, workers - min_running);
}

scheduler::TaskLocality QuincyWorkload::MakeLocality(int64_t bytes, const std::vector<int>& racks) {
  std::map<int, int64_t> local, in_rack;
  int blocks = static_cast<int>(std::max<int64_t>(1, (bytes + kGB - 1) / kGB));
  auto any = [&](const std::vector<int>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng_)];
  };
  for (int b = 0; b < blocks; ++b) {
    int64_t size = bytes / blocks + (b == 0 ? bytes % blocks : 0);
    int r1 = any(racks);
    int c1 = any(rack_computers_[r1]);
    int c2 = any(rack_computers_[r1]);
    int r3 = racks.size() > 1 ? any(racks) : static_cast<int>(rng_() % spec_.racks);
    int c3 = any(rack_computers_[r3]);
    for (int c : {c1, c2, c3}) local[c] += size;
    if (c2 == c1) local[c1] -= size;
    if (c3 == c1 || c3 == c2) local[c3] -= size;
    in_rack[r1] += size;
    if (r3 != r1) in_rack[r3] += size;
  }
  scheduler::TaskLocality loc;
  int64_t min_in_rack = static_cast<int>(in_rack.size()) == spec_.racks ? bytes : 0;
  for (auto& [r, v] : in_rack) min_in_rack = std::min(min_in_rack, v);
  loc.worst = {bytes, bytes - min_in_rack};
  for (auto& [c, v] : local) {
    if (v * 10 > bytes && loc.computers.size() < 10) {
      loc.computers.push_back({c, {bytes - v, bytes - in_rack[computers_[c].rack]}});
    }
  }
  for (auto& [r, v] : in_rack) {
    if (v * 10 > bytes && loc.racks.size() < 10) loc.racks.push_back({r, {bytes, bytes - v}});
  }
  return loc;
}

int QuincyWorkload::AddTask(int job, bool burst) {
  int t;
  if (!free_tasks_.empty()) {
    t = free_tasks_.back();
    free_tasks_.pop_back();
  } else {
    t = static_cast<int>(tasks_.size());
    tasks_.emplace_back();
  }
  Task& task = tasks_[t];
  task = Task{};
  task.job = job;
  std::vector<int> racks;
  int nr = burst ? std::min(spec_.burst_racks, spec_.racks) : spec_.racks;
  for (int r = 0; r < nr; ++r) racks.push_back(r);
  int64_t bytes = std::uniform_int_distribution<int64_t>(kGB / 4, 4 * kGB)(rng_);
  task.locality = MakeLocality(bytes, racks);
  task.node = graph_.AddNode(1);
  graph_.SetSupply(sink_, -(++sink_demand_));
  task.arcs.push_back(graph_.AddArc(task.node, jobs_[job].unscheduled, 1, 0));
  task.arcs.push_back(graph_.AddArc(task.node, cluster_, 1, 0));
  for (const auto& r : task.locality.racks) {
    task.arcs.push_back(graph_.AddArc(task.node, rack_nodes_[r.rack], 1, 0));
  }
  for (const auto& c : task.locality.computers) {
    task.arcs.push_back(graph_.AddArc(task.node, computers_[c.computer].node, 1, 0));
  }
  if (task_of_node_.size() <= task.node) task_of_node_.resize(task.node + 1, -1);
  task_of_node_[task.node] = t;
  ++jobs_[job].workers;
  UpdateJobArcs(job);
  task.live_pos = static_cast<int>(live_.size());
  live_.push_back(t);
  return t;
}

void QuincyWorkload::RemoveTask(int t) {
  Task& task = tasks_[t];
  if (task.running_on >= 0) --running_;
  graph_.RemoveNode(task.node);
  graph_.SetSupply(sink_, -(--sink_demand_));
  task_of_node_[task.node] = -1;
  --jobs_[task.job].workers;
  UpdateJobArcs(task.job);
  int last = live_.back();
  live_[task.live_pos] = last;
  tasks_[last].live_pos = task.live_pos;
  live_.pop_back();
  task.node = kNoId;
  free_tasks_.push_back(t);
}

void QuincyWorkload::UpdateTaskCosts(Task& t) {
  std::optional<scheduler::RunningOn> on;
  if (t.running_on >= 0) on = scheduler::RunningOn{t.running_on, computers_[t.running_on].rack};
  scheduler::QuincyArcCosts c =
      scheduler::ComputeQuincyCosts(params_, t.locality, t.times, on, spec_.racks);
  size_t k = 0;
  graph_.SetCost(t.arcs[k++], c.unscheduled);
  graph_.SetCost(t.arcs[k++], c.any_computer);
  for (int64_t x : c.racks) graph_.SetCost(t.arcs[k++], x);
  for (int64_t x : c.computers) graph_.SetCost(t.arcs[k++], x);
  if (t.extra != kNoId) graph_.SetCost(t.extra, *c.running);
}

void QuincyWorkload::SetRunning(int ti, int computer) {
  Task& t = tasks_[ti];
  if (t.running_on == computer) return;
  running_ += (computer >= 0) - (t.running_on >= 0);
  if (t.extra != kNoId) {
    graph_.RemoveArc(t.extra);
    t.extra = kNoId;
  }
  t.running_on = computer;
  if (computer < 0) return;
  bool preferred = false;
  for (const auto& c : t.locality.computers) preferred |= c.computer == computer;
  if (!preferred) t.extra = graph_.AddArc(t.node, computers_[computer].node, 1, 0);
}

void QuincyWorkload::PlaceInitially() {
  std::vector<int> order = live_;
  std::shuffle(order.begin(), order.end(), rng_);
  size_t target = static_cast<size_t>(spec_.initially_running * static_cast<double>(order.size()));
  std::uniform_int_distribution<int> any(0, spec_.computers - 1);
  std::uniform_int_distribution<int64_t> ran(kSecond, 600 * kSecond), waited(0, 30 * kSecond);
  for (size_t i = 0; i < order.size(); ++i) {
    Task& t = tasks_[order[i]];
    t.times.unscheduled = Duration{waited(rng_)};
    if (i >= target) continue;
    int where = -1;
    for (const auto& c : t.locality.computers) {
      if (free_slots_[c.computer] > 0) where = c.computer;
    }
    for (int tries = 0; where < 0 && tries < 30; ++tries) {
      int c = any(rng_);
      if (free_slots_[c] > 0) where = c;
    }
    if (where < 0) continue;
    --free_slots_[where];
    t.times.running = Duration{ran(rng_)};
    SetRunning(order[i], where);
  }
}

void QuincyWorkload::ApplySolution(const flow::FlowSolution& sol) {
  std::vector<uint8_t> is_task(graph_.node_id_bound(), 0);
  for (int t : live_) is_task[tasks_[t].node] = 1;
  for (const Job& j : jobs_) {
    if (j.root_computer < 0) is_task[j.root] = 1;
  }
  std::vector<int> computer_of(graph_.node_id_bound(), -1);
  for (size_t i = 0; i < computers_.size(); ++i) {
    computer_of[computers_[i].node] = static_cast<int>(i);
  }
  for (int t : live_) tasks_[t].assigned = -1;
  for (const flow::Placement& p :
       flow::ExtractPlacements(graph_, sol.flow, machine_nodes_, is_task)) {
    int c = computer_of[p.machine];
    if (p.task < task_of_node_.size() && task_of_node_[p.task] >= 0) {
      tasks_[task_of_node_[p.task]].assigned = c;
    } else if (p.task < root_of_node_.size() && root_of_node_[p.task] >= 0) {
      Job& j = jobs_[root_of_node_[p.task]];
      graph_.RemoveArc(j.root_arc);
      j.root_arc = graph_.AddArc(j.root, computers_[c].node, 1, 0);
      j.root_computer = c;
    }
  }
  for (int t : live_) {
    if (tasks_[t].assigned != tasks_[t].running_on) {
      SetRunning(t, tasks_[t].assigned);
      UpdateTaskCosts(tasks_[t]);
    }
  }
}

void QuincyWorkload::Step() {
  ++steps_;
  for (int t : live_) {
    Task& task = tasks_[t];
    (task.running_on >= 0 ? task.times.running : task.times.unscheduled) += Duration{kSecond};
  }
  int churn = static_cast<int>(std::lround(spec_.churn * static_cast<double>(live_.size())));
  for (int i = 0; i < churn && running_ > 0; ++i) {
    for (int tries = 0; tries < 50; ++tries) {
      int t = live_[std::uniform_int_distribution<size_t>(0, live_.size() - 1)(rng_)];
      if (tasks_[t].running_on >= 0) {
        RemoveTask(t);
        break;
      }
    }
  }
  std::discrete_distribution<int> pick(job_weight_.begin(), job_weight_.end());
  for (int i = 0; i < churn; ++i) AddTask(pick(rng_), false);
  if (steps_ == 1 && spec_.burst_tasks > 0) {
    int j = AddJob(-1);
    for (int i = 0; i < spec_.burst_tasks; ++i) AddTask(j, true);
  }
  for (int t : live_) UpdateTaskCosts(tasks_[t]);
}

}  // namespace copse::bench

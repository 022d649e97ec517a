#include "bench/flow/quincy_workload.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "bench/flow/placement.h"
#include "rootjob/locality.h"

namespace copse::bench {

using scheduler::ComputerId;
using scheduler::JobId;
using scheduler::kNoComputer;
using scheduler::kNoTask;
using scheduler::QuincyRegime;
using scheduler::TaskId;

namespace {

constexpr int64_t kGB = 1'000'000'000;
constexpr int64_t kSecond = 1'000'000;

}  // namespace

Result<QuincyScaleSpec> ScaleSpec(const std::string& name) {
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
    if (name == "d") s.burst_tasks = 5000;  // preferring 4 racks; all of it fits
    if (name == "e") s.tasks = 252000;      // 1.5 tasks per slot
    return s;
  }
  if (name == "t" || name == "tburst") {
    s.racks = 3, s.computers = 24, s.slots_min = 1, s.slots_max = 2, s.jobs = 4, s.tasks = 50;
    s.churn = 0.05;
    s.initially_running = 0.8;
    if (name == "tburst") s.burst_tasks = 30, s.burst_racks = 1;
    return s;
  }
  return InvalidArgument("unknown scale '" + name + "' (a, b, c, d, e, t, tburst)");
}

Result<QuincyRegime> ParseRegime(const std::string& name) {
  for (QuincyRegime r : scheduler::kQuincyRegimes) {
    if (name == scheduler::QuincyRegimeName(r)) return r;
  }
  return InvalidArgument("unknown regime '" + name + "' (Q, QP, QF, QFP)");
}

QuincyWorkload::QuincyWorkload(const QuincyScaleSpec& spec, uint64_t seed,
                               scheduler::QuincyCostParams params)
    : spec_(spec), params_(params), rng_(seed) {
  wait_tick_ = scheduler::WaitCostMilli(params_, Duration{kSecond});
  run_tick_ = -1000;  // θ: a milli-unit per millisecond run (ComputeQuincyCosts)
  // A tick is a second: exact when the hint's step divides it.
  const Duration step = scheduler::ClockQuantum(params_);
  hint_ = spec_.clock_hint && step.count() > 0 && kSecond % step.count() == 0;
  BuildCluster();
  std::uniform_real_distribution<double> w(0, 3);
  for (int j = 0; j < spec_.jobs; ++j) job_weight_.push_back(std::exp(w(rng_)));
  for (int j = 0; j < spec_.jobs; ++j) {
    ComputerId c;
    do {
      c = std::uniform_int_distribution<ComputerId>(0, spec_.computers - 1)(rng_);
    } while (free_slots_[c] == 0);
    AddJob(c);
  }
  std::discrete_distribution<int> pick(job_weight_.begin(), job_weight_.end());
  for (int i = 0; i < spec_.tasks; ++i) AddTask(pick(rng_), false);
  PlaceInitially();
  Refresh();
}

void QuincyWorkload::BuildCluster() {
  rack_computers_.resize(spec_.racks);
  std::uniform_int_distribution<int> slots(spec_.slots_min, spec_.slots_max);
  for (int r = 0; r < spec_.racks; ++r) topology_.racks.push_back("r" + std::to_string(r));
  for (int i = 0; i < spec_.computers; ++i) {
    int r = static_cast<int>(int64_t{i} * spec_.racks / spec_.computers);
    int n = slots(rng_);
    topology_.computers.push_back({"c" + std::to_string(i), r, n});
    rack_computers_[r].push_back(i);
    rack_of_.push_back(r);
    free_slots_.push_back(n);
    total_slots_ += n;
  }
  quincy_ = std::make_unique<scheduler::QuincyGraph>(topology_, params_);
}

JobId QuincyWorkload::AddJob(ComputerId root_computer) {
  const JobId j = static_cast<JobId>(jobs_.size());
  jobs_.emplace_back();
  quincy_->AddJob(j);
  const TaskId root = static_cast<TaskId>(tasks_.size());
  tasks_.emplace_back();
  tasks_[root].job = j;
  jobs_[j].root = root;
  quincy_->AddRoot(j, root);
  if (root_computer != kNoComputer) {
    quincy_->SetRootComputer(j, root_computer);
    jobs_[j].root_computer = root_computer;
    --free_slots_[root_computer];
  }
  return j;
}

// Blocks of 1 GB, each with three replicas as HDFS places them: two in one
// rack, the third in another; the racks are drawn from `racks` (the burst's
// few racks, or all).
scheduler::TaskLocality QuincyWorkload::MakeLocality(int64_t bytes, const std::vector<int>& racks) {
  auto any = [&](const std::vector<int>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng_)];
  };
  const int blocks = static_cast<int>(std::max<int64_t>(1, (bytes + kGB - 1) / kGB));
  std::vector<rootjob::InputPiece> pieces(blocks);
  for (int b = 0; b < blocks; ++b) {
    pieces[b].bytes = bytes / blocks + (b == 0 ? bytes % blocks : 0);
    int r1 = any(racks);
    int r3 = racks.size() > 1 ? any(racks) : static_cast<int>(rng_() % spec_.racks);
    int c1 = any(rack_computers_[r1]), c2 = any(rack_computers_[r1]);
    int c3 = any(rack_computers_[r3]);
    pieces[b].replicas = {c1};
    for (int c : {c2, c3}) {
      if (std::find(pieces[b].replicas.begin(), pieces[b].replicas.end(), c) ==
          pieces[b].replicas.end()) {
        pieces[b].replicas.push_back(c);
      }
    }
  }
  return rootjob::ComputeLocality(pieces, rack_of_, spec_.racks);
}

void QuincyWorkload::AddTask(JobId job, bool burst) {
  const TaskId t = static_cast<TaskId>(tasks_.size());
  tasks_.emplace_back();
  Task& task = tasks_[t];
  task.job = job;
  std::vector<int> racks;
  int nr = burst ? std::min(spec_.burst_racks, spec_.racks) : spec_.racks;
  for (int r = 0; r < nr; ++r) racks.push_back(r);
  int64_t bytes = std::uniform_int_distribution<int64_t>(kGB / 4, 4 * kGB)(rng_);
  task.locality = MakeLocality(bytes, racks);
  quincy_->AddTask(t, job, task.locality);
  ++jobs_[job].tasks;
  task.live_pos = static_cast<int>(live_.size());
  live_.push_back(t);
}

void QuincyWorkload::RemoveTask(TaskId t) {
  Task& task = tasks_[t];
  if (task.running_on != kNoComputer) {
    --running_;
    --jobs_[task.job].running;
  }
  quincy_->RemoveTask(t);
  --jobs_[task.job].tasks;
  TaskId last = live_.back();
  live_[task.live_pos] = last;
  tasks_[last].live_pos = task.live_pos;
  live_.pop_back();
  task = Task{};
}

void QuincyWorkload::SetRunning(TaskId t, ComputerId c) {
  Task& task = tasks_[t];
  if (task.running_on == c) return;
  const int delta = (c != kNoComputer) - (task.running_on != kNoComputer);
  running_ += delta;
  jobs_[task.job].running += delta;
  task.running_on = c;
  task.stale = true;
  quincy_->SetTaskComputer(t, c);
}

void QuincyWorkload::PlaceInitially() {
  std::vector<TaskId> order = live_;
  std::shuffle(order.begin(), order.end(), rng_);
  size_t target = static_cast<size_t>(spec_.initially_running * static_cast<double>(order.size()));
  std::uniform_int_distribution<ComputerId> any(0, spec_.computers - 1);
  std::uniform_int_distribution<int64_t> ran(kSecond, 600 * kSecond), waited(0, 30 * kSecond);
  for (size_t i = 0; i < order.size(); ++i) {
    Task& t = tasks_[order[i]];
    t.times.unscheduled = Duration{waited(rng_)};
    if (i >= target) continue;
    ComputerId where = kNoComputer;
    for (const auto& c : t.locality.computers) {
      if (free_slots_[c.computer] > 0) where = c.computer;
    }
    for (int tries = 0; where == kNoComputer && tries < 30; ++tries) {
      ComputerId c = any(rng_);
      if (free_slots_[c] > 0) where = c;
    }
    if (where == kNoComputer) continue;
    --free_slots_[where];
    t.times.running = Duration{ran(rng_)};
    SetRunning(order[i], where);
  }
}

void QuincyWorkload::Refresh() {
  const bool preemptive = spec_.regime == QuincyRegime::kQP || spec_.regime == QuincyRegime::kQFP;
  const int64_t cap = params_.max_cost_milli;
  for (TaskId id : live_) {
    Task& t = tasks_[id];
    const bool running = t.running_on != kNoComputer;
    quincy_->SetTaskMovable(id, preemptive || !running);
    // With the hint, the shift made a clocked task's costs what they are
    // now; a waiting one leaves the group while the next shift could still
    // take υ past the cap, and is set in full from then on.
    const bool fits =
        running || scheduler::WaitCostMilli(params_, t.times.unscheduled) + wait_tick_ <= cap;
    if (hint_ && !t.stale) {
      if (!fits) {
        quincy_->SetTaskClocked(id, false);
        t.stale = true;
      }
      continue;
    }
    std::optional<scheduler::RunningOn> on;
    if (running) on = scheduler::RunningOn{t.running_on, rack_of_[t.running_on]};
    quincy_->SetTaskCosts(
        id, scheduler::ComputeQuincyCosts(params_, t.locality, t.times, on, spec_.racks));
    if (hint_) {
      quincy_->SetTaskClocked(id, fits);
      t.stale = !fits;
    }
  }
  // The bounds as the policy sets them (QuincyPolicy::UpdateBounds).
  std::vector<scheduler::QuincyJobLoad> load(jobs_.size());
  int roots = 0, placed_roots = 0;
  for (size_t j = 0; j < jobs_.size(); ++j) {
    load[j].tasks = jobs_[j].tasks;
    load[j].running = jobs_[j].running;
    ++roots;
    placed_roots += jobs_[j].root_computer != kNoComputer;
  }
  std::vector<scheduler::QuincyJobBounds> b = scheduler::QuincyBounds(
      spec_.regime, std::max(0, total_slots_ - roots), total_slots_ - placed_roots, load);
  for (size_t j = 0; j < jobs_.size(); ++j) {
    quincy_->SetJobBounds(static_cast<JobId>(j), b[j].e, b[j].f);
  }
  quincy_->BalanceSink();
}

void QuincyWorkload::ApplySolution(const flow::FlowSolution& sol) {
  for (TaskId t : live_) tasks_[t].assigned = kNoComputer;
  for (const flow::Placement& p :
       flow::ExtractPlacements(graph(), sol.flow, quincy_->computer_nodes(), quincy_->is_task())) {
    const TaskId id = quincy_->task_of_node(p.task);
    const ComputerId c = quincy_->computer_of_node(p.machine);
    Job& job = jobs_[tasks_[id].job];
    if (job.root == id) {
      if (job.root_computer != c) quincy_->SetRootComputer(tasks_[id].job, c);
      job.root_computer = c;
    } else {
      tasks_[id].assigned = c;
    }
  }
  for (TaskId t : live_) SetRunning(t, tasks_[t].assigned);
}

void QuincyWorkload::Step() {
  ++steps_;
  for (TaskId t : live_) {
    Task& task = tasks_[t];
    (task.running_on != kNoComputer ? task.times.running : task.times.unscheduled) +=
        Duration{kSecond};
  }
  if (hint_) quincy_->ShiftClock(wait_tick_, run_tick_);
  int churn = static_cast<int>(std::lround(spec_.churn * static_cast<double>(live_.size())));
  for (int i = 0; i < churn && running_ > 0; ++i) {
    for (int tries = 0; tries < 50; ++tries) {
      TaskId t = live_[std::uniform_int_distribution<size_t>(0, live_.size() - 1)(rng_)];
      if (tasks_[t].running_on != kNoComputer) {
        RemoveTask(t);
        break;
      }
    }
  }
  std::discrete_distribution<int> pick(job_weight_.begin(), job_weight_.end());
  for (int i = 0; i < churn; ++i) AddTask(pick(rng_), false);
  if (steps_ == spec_.burst_step && spec_.burst_tasks > 0) {
    burst_job_ = AddJob(kNoComputer);
    for (int i = 0; i < spec_.burst_tasks; ++i) AddTask(burst_job_, true);
  }
  Refresh();
}

int QuincyWorkload::burst_tasks() const { return burst_job_ < 0 ? 0 : jobs_[burst_job_].tasks; }

int QuincyWorkload::burst_running() const { return burst_job_ < 0 ? 0 : jobs_[burst_job_].running; }

}  // namespace copse::bench

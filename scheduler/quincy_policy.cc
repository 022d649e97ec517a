#include "scheduler/quincy_policy.h"

#include <algorithm>
#include <numeric>

#include "scheduler/fair_share.h"
#include "scheduler/flow/placement.h"
#include "scheduler/flow/solvers.h"
#include "scheduler/root_placement.h"

namespace copse::scheduler {

Result<std::unique_ptr<QuincyPolicy>> QuincyPolicy::Create(std::string name,
                                                           const Topology& topology,
                                                           QuincyOptions options) {
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<flow::FlowSolver> solver,
                         flow::MakeSolver(options.solver));
  return std::unique_ptr<QuincyPolicy>(
      new QuincyPolicy(std::move(name), topology, options, std::move(solver)));
}

QuincyPolicy::QuincyPolicy(std::string name, const Topology& topology, QuincyOptions options,
                           std::unique_ptr<flow::FlowSolver> solver)
    : name_(std::move(name)),
      options_(std::move(options)),
      graph_(topology, options_.costs),
      solver_(std::move(solver)) {}

bool QuincyPolicy::preemptive() const {
  return options_.regime == QuincyRegime::kQP || options_.regime == QuincyRegime::kQFP;
}

bool QuincyPolicy::fair() const {
  return options_.regime == QuincyRegime::kQF || options_.regime == QuincyRegime::kQFP;
}

void QuincyPolicy::set_regime(QuincyRegime regime) {
  options_.regime = regime;
  dirty_ = true;
}

Timestamp QuincyPolicy::Now() const {
  return options_.stats_clock != nullptr ? options_.stats_clock->Now() : Timestamp{0};
}

std::pair<int64_t, int64_t> QuincyPolicy::bounds(JobId job) const {
  auto it = bounds_.find(job);
  return it == bounds_.end() ? std::pair<int64_t, int64_t>{0, 0} : it->second;
}

void QuincyPolicy::Observe(const ClusterState& s, const Change& ch, Timestamp now) {
  (void)s;
  (void)now;
  const TaskInfo* t = ch.task;
  bool own =
      (ch.kind == Change::Kind::kTaskPlaced || ch.kind == Change::Kind::kTaskKillRequested) &&
      own_.erase(t->id) > 0;
  if (!own && ch.kind != Change::Kind::kTaskRunning) dirty_ = true;
  switch (ch.kind) {
    case Change::Kind::kJobAdmitted:
      graph_.AddJob(ch.job);
      break;
    case Change::Kind::kJobRemoved:
      graph_.RemoveJob(ch.job);
      bounds_.erase(ch.job);
      break;
    case Change::Kind::kTaskWaiting:
    case Change::Kind::kTaskPlaced: {
      ComputerId c = ch.kind == Change::Kind::kTaskPlaced ? t->computer : kNoComputer;
      if (t->root) {
        if (tasks_.insert(t->id).second) graph_.AddRoot(t->job, t->id);
        graph_.SetRootComputer(t->job, c);
      } else {
        if (tasks_.insert(t->id).second) graph_.AddTask(t->id, t->job, t->locality);
        graph_.SetTaskComputer(t->id, c);
      }
      break;
    }
    case Change::Kind::kTaskKillRequested:
    case Change::Kind::kTaskRemoved:
      if (tasks_.erase(t->id) == 0) break;
      if (t->root) {
        graph_.RemoveRoot(t->job);
      } else {
        graph_.RemoveTask(t->id);
      }
      break;
    default:
      break;
  }
}

void QuincyPolicy::UpdateCapacities(const ClusterState& s) {
  for (ComputerId c = 0; c < s.num_computers(); ++c) {
    const ComputerInfo& m = s.computer(c);
    graph_.SetComputerCapacity(c, m.up ? m.spec.slots - m.killing : 0);
  }
}

void QuincyPolicy::UpdateCosts(const ClusterState& s, Timestamp now) {
  const int32_t racks = s.num_racks();
  for (TaskId id : tasks_) {
    const TaskInfo& t = s.task(id);
    if (t.root) continue;
    TaskTimes times{t.WaitTime(now), t.RunTime(now)};
    std::optional<RunningOn> on;
    if (t.placed()) on = RunningOn{t.computer, s.rack_of(t.computer)};
    graph_.SetTaskCosts(id, ComputeQuincyCosts(options_.costs, t.locality, times, on, racks));
    graph_.SetTaskMovable(id, preemptive() || !t.placed());
  }
}

void QuincyPolicy::UpdateBounds(const ClusterState& s) {
  const std::vector<JobId>& jobs = s.admitted_jobs();
  const size_t n = jobs.size();
  std::vector<int> tasks(n), running(n), e(n), f(n);
  int total = 0;
  for (size_t i = 0; i < n; ++i) {
    tasks[i] = static_cast<int>(graph_.job_tasks(jobs[i]));
    running[i] = s.job(jobs[i]).placed;
    total += tasks[i];
  }
  const int m = s.WorkerSlots();
  if (fair()) {
    std::vector<JobDemand> demand(n);
    for (size_t i = 0; i < n; ++i) {
      const JobAttributes& a = s.job(jobs[i]).attributes;
      demand[i] = {tasks[i], a.min_tasks.value_or(0), a.max_tasks.value_or(JobDemand{}.cap)};
    }
    std::vector<int> shares = QuincyFairShares(m, demand);
    if (!preemptive()) {
      int run = std::accumulate(running.begin(), running.end(), 0);
      shares = NonPreemptiveShares(std::max(m, run), shares, running);
    }
    e = f = shares;
  } else {
    for (size_t i = 0; i < n; ++i) {
      const JobAttributes& a = s.job(jobs[i]).attributes;
      f[i] = std::min(tasks[i], a.max_tasks.value_or(tasks[i]));
      e[i] = total <= m ? f[i] : std::min(1, f[i]);
      e[i] = std::min(f[i], std::max(e[i], a.min_tasks.value_or(0)));
    }
  }
  // What the network can hold: capacity left after placed roots. Lower
  // bounds beyond it (with running tasks pinned) are lowered, latest job first.
  int capacity = 0;
  for (ComputerId c = 0; c < s.num_computers(); ++c) capacity += graph_.computer_capacity(c);
  for (JobId j : jobs) {
    const JobInfo& job = s.job(j);
    if (job.root_task != kNoTask && s.task(job.root_task).placed()) --capacity;
  }
  int need = 0;
  std::vector<int> pinned(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!preemptive()) {
      pinned[i] = running[i];
      f[i] = std::max(f[i], running[i]);
    }
    need += std::max(e[i], pinned[i]);
  }
  for (size_t k = n; k-- > 0 && need > capacity;) {
    int cut = std::min(need - capacity, std::max(e[k], pinned[k]) - pinned[k]);
    e[k] = std::max(e[k], pinned[k]) - cut;
    need -= cut;
  }
  for (size_t i = 0; i < n; ++i) {
    e[i] = std::min(e[i], f[i]);
    graph_.SetJobBounds(jobs[i], e[i], f[i]);
    bounds_[jobs[i]] = {e[i], f[i]};
  }
  graph_.BalanceSink();
}

void QuincyPolicy::UpdateGraph(const ClusterState& s, Timestamp now) {
  UpdateCapacities(s);
  UpdateCosts(s, now);
  UpdateBounds(s);
}

std::unordered_map<TaskId, ComputerId> QuincyPolicy::ReadPlacements(const ClusterState& s) const {
  std::unordered_map<TaskId, ComputerId> target;
  std::vector<flow::Placement> ps = flow::ExtractPlacements(
      graph_.graph(), solution_.flow, graph_.computer_nodes(), graph_.is_task());
  for (const flow::Placement& p : ps) {
    target[graph_.task_of_node(p.task)] = graph_.computer_of_node(p.machine);
  }
  KeepInPlace(s, target);
  return target;
}

namespace {

bool Covers(const QuincyGraph::Route& r, const ClusterState& s, ComputerId c) {
  if (r.via == QuincyGraph::Route::Via::kCluster) return true;
  return r.via == QuincyGraph::Route::Via::kRack && s.rack_of(c) == r.rack;
}

bool Aggregated(const QuincyGraph::Route& r) {
  return r.via == QuincyGraph::Route::Via::kCluster || r.via == QuincyGraph::Route::Via::kRack;
}

}  // namespace

void QuincyPolicy::KeepInPlace(const ClusterState& s,
                               std::unordered_map<TaskId, ComputerId>& target) const {
  const std::vector<int64_t>& flow = solution_.flow;
  // Tasks routed through an aggregator, by the computer they were handed.
  std::map<ComputerId, std::vector<TaskId>> holders;
  for (TaskId id : tasks_) {
    auto it = target.find(id);
    if (it != target.end() && Aggregated(graph_.RouteOf(id, flow))) {
      holders[it->second].push_back(id);
    }
  }
  std::vector<int64_t> spare(s.num_computers());
  for (ComputerId c = 0; c < s.num_computers(); ++c) {
    spare[c] = graph_.computer_capacity(c) - graph_.ComputerInflow(c, flow);
  }
  std::vector<int64_t> rack_spare(s.num_racks());
  for (RackId r = 0; r < s.num_racks(); ++r) rack_spare[r] = graph_.RackSpare(r, flow);
  for (TaskId id : tasks_) {
    const TaskInfo& t = s.task(id);
    auto it = target.find(id);
    if (!t.placed() || it == target.end() || it->second == t.computer) continue;
    const ComputerId here = t.computer, there = it->second;
    QuincyGraph::Route route = graph_.RouteOf(id, flow);
    if (!Covers(route, s, here)) continue;  // a real move
    std::vector<TaskId>& at_here = holders[here];
    auto swap = std::find_if(at_here.begin(), at_here.end(), [&](TaskId other) {
      const TaskInfo& o = s.task(other);
      return !(o.placed() && o.computer == here) && Covers(graph_.RouteOf(other, flow), s, there);
    });
    RackId rh = s.rack_of(here), rt = s.rack_of(there);
    if (swap != at_here.end()) {
      TaskId other = *swap;
      target[other] = there;
      *swap = id;
      holders[there].push_back(other);
    } else if (spare[here] > 0 &&
               (rh == rt || route.via == QuincyGraph::Route::Via::kRack || rack_spare[rh] > 0)) {
      --spare[here];
      ++spare[there];
      if (rh != rt) {
        --rack_spare[rh];
        ++rack_spare[rt];
      }
      at_here.push_back(id);
    } else {
      continue;
    }
    std::vector<TaskId>& at_there = holders[there];
    at_there.erase(std::find(at_there.begin(), at_there.end(), id));
    it->second = here;
  }
}

void QuincyPolicy::Decide(const ClusterState& s,
                          const std::unordered_map<TaskId, ComputerId>& target,
                          std::vector<Decision>* out) {
  SlotLedger ledger(s);
  std::vector<Decision> starts;
  for (TaskId id : tasks_) {
    const TaskInfo& t = s.task(id);
    auto it = target.find(id);
    ComputerId to = it == target.end() ? kNoComputer : it->second;
    if (t.placed()) {
      if (to != t.computer && !t.root) {
        out->push_back({Decision::Kind::kKillTask, t.job, id, t.computer, false});
        own_.insert(id);
        ++stats_.kills;
      }
    } else if (to != kNoComputer && ledger.free(to) > 0) {
      ledger.Take(to);
      starts.push_back({Decision::Kind::kStartTask, t.job, id, to, t.root});
      own_.insert(id);
      ++stats_.starts;
    }
  }
  out->insert(out->end(), starts.begin(), starts.end());
}

Status QuincyPolicy::Schedule(const ClusterState& s, Timestamp now, std::vector<Decision>* out) {
  bool timer = last_round_ && now >= *last_round_ + options_.round_interval;
  if (!dirty_ && !timer && last_round_) return Status::Ok();
  if (tasks_.empty()) {  // nothing to place
    dirty_ = false;
    last_round_ = now;
    return Status::Ok();
  }
  Timestamp t0 = Now();
  UpdateGraph(s, now);
  size_t changes = graph_.graph().change_count();
  Timestamp t1 = Now();
  COPSE_RETURN_IF_ERROR(
      solver_->Solve(graph_.graph(), &solution_, nullptr).WithContext(name_ + " round"));
  graph_.graph().CommitChanges();
  Timestamp t2 = Now();
  stats_.starts = stats_.kills = 0;
  Decide(s, ReadPlacements(s), out);
  Timestamp t3 = Now();
  ++stats_.rounds;
  stats_.update = t1 - t0;
  stats_.solve = t2 - t1;
  stats_.extract = t3 - t2;
  stats_.nodes = graph_.graph().node_count();
  stats_.arcs = graph_.graph().arc_count();
  stats_.changes = changes;
  stats_.cost = solution_.cost;
  dirty_ = false;
  last_round_ = now;
  return Status::Ok();
}

std::optional<Timestamp> QuincyPolicy::NextWakeup(const ClusterState& s) const {
  (void)s;
  if (tasks_.empty() || !last_round_) return std::nullopt;
  return *last_round_ + options_.round_interval;
}

}  // namespace copse::scheduler

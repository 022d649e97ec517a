#include "scheduler/quincy_policy.h"

#include <algorithm>

#include "scheduler/fair_share.h"
#include "scheduler/flow/solvers.h"
#include "scheduler/root_placement.h"

namespace copse::scheduler {

Result<std::unique_ptr<QuincyPolicy>> QuincyPolicy::Create(std::string name,
                                                           const Topology& topology,
                                                           QuincyOptions options) {
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<flow::FlowSolver> solver,
                         flow::MakeSolver(options.solver));
  return std::unique_ptr<QuincyPolicy>(
      new QuincyPolicy(std::move(name), topology, std::move(options), std::move(solver)));
}

QuincyPolicy::QuincyPolicy(std::string name, const Topology& topology, QuincyOptions options,
                           std::unique_ptr<flow::FlowSolver> solver)
    : name_(std::move(name)),
      options_(std::move(options)),
      graph_(topology, options_.costs),
      solver_(std::move(solver)),
      clock_quantum_(options_.clock_hint ? ClockQuantum(options_.costs) : Duration{0}) {}

bool QuincyPolicy::preemptive() const {
  return options_.regime == QuincyRegime::kQP || options_.regime == QuincyRegime::kQFP;
}

bool QuincyPolicy::fair() const {
  return options_.regime == QuincyRegime::kQF || options_.regime == QuincyRegime::kQFP;
}

void QuincyPolicy::set_regime(QuincyRegime regime) {
  options_.regime = regime;
  dirty_ = true;
  regime_changed_ = true;
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
      bool fresh = position_.count(t->id) == 0;
      if (fresh) AddMember(&s.task(t->id));
      if (t->root) {
        if (fresh) graph_.AddRoot(t->job, t->id);
        graph_.SetRootComputer(t->job, c);
      } else {
        if (fresh) graph_.AddTask(t->id, t->job, t->locality);
        graph_.SetTaskComputer(t->id, c);
        members_[position_.at(t->id)].stale = true;
      }
      break;
    }
    case Change::Kind::kComputerDraining:
      drain_changed_ = true;
      break;
    case Change::Kind::kTaskKillRequested:
    case Change::Kind::kTaskRemoved:
      if (position_.count(t->id) == 0) break;
      RemoveMember(t->id);
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

void QuincyPolicy::AddMember(const TaskInfo* task) {
  position_[task->id] = members_.size();
  members_.push_back({task->id, task});
}

void QuincyPolicy::RemoveMember(TaskId id) {
  auto it = position_.find(id);
  const size_t i = it->second;
  position_.erase(it);
  if (i + 1 != members_.size()) {
    members_[i] = members_.back();
    position_[members_[i].id] = i;
  }
  members_.pop_back();
}

void QuincyPolicy::UpdateCapacities(const ClusterState& s) {
  for (ComputerId c = 0; c < s.num_computers(); ++c) {
    const ComputerInfo& m = s.computer(c);
    // A draining computer holds the tasks placed there (its roots
    // included) and no more, so the flow places nothing new there.
    const int slots = m.draining ? m.used : m.spec.slots;
    graph_.SetComputerCapacity(c, m.up ? slots - m.killing : 0);
  }
}

void QuincyPolicy::UpdateCosts(const ClusterState& s, Timestamp now) {
  const int32_t racks = s.num_racks();
  const bool hint = clock_quantum_.count() > 0;
  if (hint) {
    // The hint's clock: `now` in whole steps. Clocked tasks move with it.
    const Timestamp clock{now.count() - now.count() % clock_quantum_.count()};
    if (!clock_at_) clock_at_ = clock;
    if (clock > *clock_at_) {
      const Duration moved = clock - *clock_at_;
      graph_.ShiftClock(WaitCostMilli(options_.costs, moved), -InvestedMilli(moved));
      clock_at_ = clock;
    }
  }
  // Whether a task may move changes with its state, the regime or a drain
  // only. A task on a draining computer is never moved by the flow: it
  // finishes there (a drain that moves tasks kills them itself), and its
  // slot could not be given to another task anyway.
  const bool all_movable = regime_changed_ || drain_changed_;
  regime_changed_ = drain_changed_ = false;
  for (Member& m : members_) {
    const TaskInfo& t = *m.info;
    const TaskId id = m.id;
    if (t.root) continue;
    if (m.stale || all_movable) {
      const bool stays = t.placed() && s.computer(t.computer).draining;
      graph_.SetTaskMovable(id, (preemptive() && !stays) || !t.placed());
    }
    if (m.stale) {
      m.stale = false;
      TaskTimes times{t.WaitTime(now), t.RunTime(now)};
      std::optional<RunningOn> on;
      if (t.placed()) on = RunningOn{t.computer, s.rack_of(t.computer)};
      QuincyArcCosts costs = ComputeQuincyCosts(options_.costs, t.locality, times, on, racks);
      graph_.SetTaskCosts(id, costs);
      if (on) m.data_cost = *costs.running + InvestedMilli(times.running);
      m.running_arc = graph_.running_arc(id);
      m.clocked = hint && (on || costs.unscheduled < options_.costs.max_cost_milli);
      graph_.SetTaskClocked(id, m.clocked);
      continue;
    }
    if (m.clocked) {
      // The shift moved it; a waiting task leaves the group at the cap.
      if (t.placed() || graph_.wait_cost(id) < options_.costs.max_cost_milli) continue;
      m.clocked = false;
      graph_.SetTaskClocked(id, false);
    }
    if (t.placed()) {
      graph_.SetRunningCost(id, m.data_cost - InvestedMilli(t.RunTime(now)));
    } else {
      graph_.SetWaitCost(id, std::min(WaitCostMilli(options_.costs, t.WaitTime(now)),
                                      options_.costs.max_cost_milli));
    }
  }
}

void QuincyPolicy::UpdateBounds(const ClusterState& s) {
  const std::vector<JobId>& jobs = s.admitted_jobs();
  std::vector<QuincyJobLoad> load(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& job = s.job(jobs[i]);
    load[i].tasks = static_cast<int>(graph_.job_tasks(jobs[i]));
    load[i].running = job.placed;
    load[i].floor = job.attributes.min_tasks.value_or(0);
    load[i].cap = job.attributes.max_tasks.value_or(QuincyJobLoad{}.cap);
  }
  // What the network can hold: capacity left after placed roots.
  int capacity = 0;
  for (ComputerId c = 0; c < s.num_computers(); ++c) capacity += graph_.computer_capacity(c);
  for (JobId j : jobs) {
    const JobInfo& job = s.job(j);
    if (job.root_task != kNoTask && s.task(job.root_task).placed()) --capacity;
  }
  std::vector<QuincyJobBounds> b = QuincyBounds(options_.regime, s.WorkerSlots(), capacity, load);
  for (size_t i = 0; i < jobs.size(); ++i) {
    graph_.SetJobBounds(jobs[i], b[i].e, b[i].f);
    bounds_[jobs[i]] = {b[i].e, b[i].f};
  }
  graph_.BalanceSink();
}

void QuincyPolicy::UpdateGraph(const ClusterState& s, Timestamp now) {
  UpdateCapacities(s);
  UpdateCosts(s, now);
  UpdateBounds(s);
}

std::vector<ComputerId> QuincyPolicy::Assign(const ClusterState& s) const {
  using Via = QuincyGraph::Route::Via;
  const std::vector<int64_t>& flow = solution_.flow;
  std::vector<ComputerId> target(members_.size(), kNoComputer);
  // Units of flow each computer received through its rack node, and each
  // rack node through X: the places aggregated tasks share.
  std::vector<int64_t> slot(s.num_computers()), xcap(s.num_racks());
  for (ComputerId c = 0; c < s.num_computers(); ++c) slot[c] = graph_.RackToComputerFlow(c, flow);
  for (RackId r = 0; r < s.num_racks(); ++r) xcap[r] = graph_.ClusterToRackFlow(r, flow);
  std::vector<std::vector<size_t>> rack_pool(s.num_racks());
  std::vector<size_t> cluster_pool;
  for (size_t i = 0; i < members_.size(); ++i) {
    // Most tasks stay where they run: one arc tells.
    const flow::ArcId stay = members_[i].running_arc;
    if (stay != flow::kNoId && flow[stay] > 0) {
      target[i] = members_[i].info->computer;
      continue;
    }
    QuincyGraph::Route r = graph_.RouteOf(members_[i].id, flow);
    if (r.via == Via::kComputer) target[i] = r.computer;
    if (r.via == Via::kRack) rack_pool[r.rack].push_back(i);
    if (r.via == Via::kCluster) cluster_pool.push_back(i);
  }
  // Flow conservation at R_l: sum of slot over l's computers equals
  // |rack_pool[l]| + xcap[l], and every step below keeps it so.
  auto keep = [&](size_t i, RackId only) {
    const TaskInfo& t = *members_[i].info;
    if (!t.placed() || slot[t.computer] == 0) return false;
    const RackId r = s.rack_of(t.computer);
    if (only >= 0 ? r != only : xcap[r] == 0) return false;
    if (only < 0) --xcap[r];
    --slot[t.computer];
    target[i] = t.computer;
    return true;
  };
  for (RackId r = 0; r < s.num_racks(); ++r) {
    std::erase_if(rack_pool[r], [&](size_t i) { return keep(i, r); });
  }
  std::erase_if(cluster_pool, [&](size_t i) { return keep(i, -1); });
  RackId r = 0;
  for (size_t i : cluster_pool) {
    while (xcap[r] == 0) ++r;
    --xcap[r];
    rack_pool[r].push_back(i);
  }
  for (RackId l = 0; l < s.num_racks(); ++l) {
    const std::vector<ComputerId>& computers = s.rack_computers(l);
    size_t k = 0;
    for (size_t i : rack_pool[l]) {
      while (slot[computers[k]] == 0) ++k;
      --slot[computers[k]];
      target[i] = computers[k];
    }
  }
  return target;
}

void QuincyPolicy::Decide(const ClusterState& s, const std::vector<ComputerId>& target,
                          std::vector<Decision>* out) {
  SlotLedger ledger(s);
  std::vector<Decision> starts;
  started_.clear();
  held_.clear();
  preempted_.clear();
  for (size_t i = 0; i < members_.size(); ++i) {
    const TaskId id = members_[i].id;
    const TaskInfo& t = *members_[i].info;
    const ComputerId to = target[i];
    if (t.placed()) {
      if (to != t.computer && !t.root) {
        out->push_back({Decision::Kind::kKillTask, t.job, id, t.computer, false});
        own_.insert(id);
        preempted_.insert(id);
        ++stats_.kills;
      }
    } else if (to != kNoComputer && ledger.free(to) > 0) {
      ledger.Take(to);
      starts.push_back({Decision::Kind::kStartTask, t.job, id, to, t.root});
      own_.insert(id);
      started_.insert(id);
      ++stats_.starts;
    } else if (to != kNoComputer) {
      held_[id] = to;  // its slot is still being freed
    }
  }
  out->insert(out->end(), starts.begin(), starts.end());
}

Status QuincyPolicy::Schedule(const ClusterState& s, Timestamp now, std::vector<Decision>* out) {
  bool timer = last_round_ && now >= *last_round_ + options_.round_interval;
  if (!dirty_ && !timer && last_round_) return Status::Ok();
  if (members_.empty()) {  // nothing to place
    dirty_ = false;
    last_round_ = now;
    return Status::Ok();
  }
  Timestamp t0 = Now();
  graph_.Suspend();  // the last solution no longer matches the graph
  solved_at_.reset();
  UpdateGraph(s, now);
  size_t changes = graph_.graph().change_count();
  Timestamp t1 = Now();
  Status solved = solver_->Solve(graph_.graph(), &solution_, nullptr).WithContext(name_ + " round");
  if (!solved.ok()) {
    round_error_ = solved.ToString();
    return solved;
  }
  graph_.graph().CommitChanges();
  graph_.Checkpoint();
  solved_at_ = now;
  round_error_.clear();
  Timestamp t2 = Now();
  stats_.starts = stats_.kills = 0;
  Decide(s, Assign(s), out);
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
  if (members_.empty() || !last_round_) return std::nullopt;
  return *last_round_ + options_.round_interval;
}

}  // namespace copse::scheduler

#include "sim/scale_sim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <random>
#include <set>
#include <unordered_map>
#include <utility>

#include "scheduler/scheduler.h"
#include "scheduler/scheduling_loop.h"
#include "scheduler/topology.h"

namespace copse::sim {

namespace {

using scheduler::Decision;
using scheduler::JobId;
using scheduler::TaskId;

Timestamp ToTime(double s) { return Timestamp(std::llround(s * 1e6)); }
double Ms(Duration d) { return static_cast<double>(d.count()) / 1e3; }

enum class EventKind { kArrival, kCompletion, kBurst };

struct Event {
  double at = 0;
  uint64_t seq = 0;
  EventKind kind = EventKind::kArrival;
  TaskId task = 0;
  uint64_t generation = 0;  // a completion is stale once its task was killed
  bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

struct SimTask {
  JobId job = 0;
  double submitted = 0;  // arrival, or the kill that made it wait again
  double duration = 0;
  bool running = false;
  int computer = -1;
  uint64_t generation = 0;
  bool burst = false;  // a burst task not yet placed
};

// The workload and the computers: it feeds the scheduling loop arrivals and
// completions and carries out its decisions (scheduler::DecisionSink); each
// round's wall time is charged through the loop's after_round hook.
class ScaleSim final : public scheduler::DecisionSink {
 public:
  ScaleSim(const ScaleOptions& o, scheduler::Scheduler& sched)
      : o_(o),
        sched_(sched),
        loop_(sched, *this, scheduler::LoopOptions{1000, copse::Duration{1000}, o.wall},
              {[this](const scheduler::RoundInfo& r) { return AfterRound(r); }}),
        rng_(o.seed),
        age_rng_(o.seed ^ 0x9e3779b97f4a7c15ull) {
    for (const ComputerConfig& c : o.config.computers) {
      slots_.push_back(c.slots);
      rack_of_.push_back(c.rack_index);
      total_slots_ += c.slots;
      if (c.rack_index < o.burst_racks)
        burst_computers_.push_back(static_cast<int>(rack_of_.size()) - 1);
    }
    busy_.assign(slots_.size(), 0);
  }

  Status Run();
  ScaleResult TakeResult() { return std::move(r_); }
  Status Apply(const Decision& d, Timestamp at) override;

 private:
  Status Handle(const scheduler::Event& e, double at) {
    changed_ = true;
    return loop_.Handle(e, ToTime(at));
  }
  // Counts and charges a round: the events that happen while it runs are
  // delivered first, its decisions take effect when it ends.
  Result<Timestamp> AfterRound(const scheduler::RoundInfo& r);
  void Push(double at, EventKind kind, TaskId task, uint64_t generation) {
    events_.push({at, next_seq_++, kind, task, generation});
  }
  // Three replicas on distinct random computers among `among` (all if empty).
  scheduler::TaskLocality Locality(const std::vector<int>& among = {});
  // A new job of `n` tasks; returns their ids.
  Result<std::vector<TaskId>> NewJob(int n, double at);
  Status Adopt(TaskId id, double at);
  Status Deliver(double until, bool inclusive);
  Status OnEvent(const Event& e);
  int JobSize() {
    std::geometric_distribution<int> g(1.0 / o_.mean_tasks_per_job);
    return 1 + g(rng_);
  }
  double Duration() { return std::exponential_distribution<double>(1.0 / o_.mean_task_s)(rng_); }
  double NextEventTime() const {
    return events_.empty() ? std::numeric_limits<double>::infinity() : events_.top().at;
  }

  const ScaleOptions& o_;
  scheduler::Scheduler& sched_;
  scheduler::SchedulingLoop loop_;
  std::mt19937_64 rng_;
  // Ages of the tasks running at time 0, from their own generator so that
  // the workload (rng_) is the same as without ages.
  std::mt19937_64 age_rng_;
  std::vector<int> slots_, busy_, rack_of_;
  std::vector<int> burst_computers_;  // the computers of the burst's racks
  double burst_at_ = -1;              // when the burst arrived; -1: not yet
  int total_slots_ = 0;
  int busy_total_ = 0;
  std::unordered_map<TaskId, SimTask> tasks_;
  std::unordered_map<JobId, int> job_left_;  // unfinished tasks per job
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t next_seq_ = 1;
  JobId next_job_ = 1;
  TaskId next_task_ = 1;
  int waiting_ = 0;
  bool changed_ = false;
  bool warming_up_ = false;  // the uncharged, uncounted round at time 0
  double round_start_ = 0;   // when the current round started
  double decided_at_ = 0;    // when the last round's decisions take effect
  double utilisation_sum_ = 0;
  ScaleResult r_;
};

scheduler::TaskLocality ScaleSim::Locality(const std::vector<int>& among) {
  // Three replicas on distinct random computers: no transfer there, rack
  // transfer in their racks, core transfer elsewhere.
  const size_t n = among.empty() ? slots_.size() : among.size();
  std::uniform_int_distribution<int> pick(0, static_cast<int>(n) - 1);
  scheduler::TaskLocality loc;
  loc.worst = {0, o_.input_bytes};
  std::set<int> chosen;
  while (chosen.size() < std::min<size_t>(3, n)) {
    const int i = pick(rng_);
    chosen.insert(among.empty() ? i : among[static_cast<size_t>(i)]);
  }
  std::set<int> racks;
  for (int c : chosen) {
    loc.computers.push_back({c, {0, 0}});
    if (racks.insert(rack_of_[c]).second) loc.racks.push_back({rack_of_[c], {o_.input_bytes, 0}});
  }
  return loc;
}

Result<std::vector<TaskId>> ScaleSim::NewJob(int n, double at) {
  JobId job = next_job_++;
  scheduler::JobSubmitted js{job, scheduler::kNoTask, {}};
  js.attributes.submitted = ToTime(at);
  js.attributes.root_in_cluster = false;
  js.attributes.expected_tasks = n;
  COPSE_RETURN_IF_ERROR(Handle(js, at));
  job_left_[job] = n;
  std::vector<TaskId> ids;
  for (int i = 0; i < n; ++i) {
    TaskId id = next_task_++;
    tasks_[id] = SimTask{job, at, Duration(), false, -1, 0};
    ids.push_back(id);
  }
  return ids;
}

// Seats a task that runs at time 0: on a replica holder with a free slot if
// any, else on a random computer with a free slot.
Status ScaleSim::Adopt(TaskId id, double at) {
  scheduler::TaskLocality loc = Locality();
  int computer = -1;
  for (const scheduler::PreferredComputer& p : loc.computers) {
    if (busy_[p.computer] < slots_[p.computer]) {
      computer = p.computer;
      break;
    }
  }
  std::uniform_int_distribution<int> pick(0, static_cast<int>(slots_.size()) - 1);
  while (computer < 0) {
    int c = pick(rng_);
    if (busy_[c] < slots_[c]) computer = c;
  }
  SimTask& t = tasks_.at(id);
  // In the steady state a running task's age is exponential with the mean
  // duration, as its remaining time is: the preemptive policies see θ of a
  // task that has been running, not of one that has just started.
  double age = std::exponential_distribution<double>(1.0 / o_.mean_task_s)(age_rng_);
  COPSE_RETURN_IF_ERROR(
      Handle(scheduler::TaskAdopted{id, t.job, computer, ToTime(at - age), loc}, at));
  t.running = true;
  t.computer = computer;
  ++busy_[computer];
  ++busy_total_;
  Push(at + t.duration, EventKind::kCompletion, id, t.generation);
  return Status::Ok();
}

Status ScaleSim::OnEvent(const Event& e) {
  if (e.kind == EventKind::kBurst) {
    COPSE_ASSIGN_OR_RETURN(std::vector<TaskId> ids, NewJob(o_.burst_tasks, e.at));
    ++r_.jobs_arrived;
    burst_at_ = e.at;
    for (TaskId id : ids) {
      tasks_.at(id).burst = true;
      COPSE_RETURN_IF_ERROR(Handle(
          scheduler::TaskSubmitted{id, tasks_.at(id).job, Locality(burst_computers_)}, e.at));
      ++waiting_;
      ++r_.tasks_submitted;
    }
    return Status::Ok();
  }
  if (e.kind == EventKind::kArrival) {
    int n = JobSize();
    COPSE_ASSIGN_OR_RETURN(std::vector<TaskId> ids, NewJob(n, e.at));
    ++r_.jobs_arrived;
    for (TaskId id : ids) {
      COPSE_RETURN_IF_ERROR(
          Handle(scheduler::TaskSubmitted{id, tasks_.at(id).job, Locality()}, e.at));
      ++waiting_;
      ++r_.tasks_submitted;
    }
    double task_rate = o_.utilisation * total_slots_ / o_.mean_task_s;
    double job_rate = task_rate / o_.mean_tasks_per_job;
    Push(e.at + std::exponential_distribution<double>(job_rate)(rng_), EventKind::kArrival, 0, 0);
    return Status::Ok();
  }
  auto it = tasks_.find(e.task);
  if (it == tasks_.end() || !it->second.running || it->second.generation != e.generation) {
    return Status::Ok();  // killed meanwhile
  }
  SimTask t = it->second;
  tasks_.erase(it);
  --busy_[t.computer];
  --busy_total_;
  ++r_.tasks_completed;
  COPSE_RETURN_IF_ERROR(Handle(scheduler::TaskCompleted{e.task}, e.at));
  if (--job_left_.at(t.job) == 0) {
    job_left_.erase(t.job);
    ++r_.jobs_finished;
    COPSE_RETURN_IF_ERROR(Handle(scheduler::JobFinished{t.job}, e.at));
  }
  return Status::Ok();
}

// Delivers the events before `until` (or at it, if inclusive), in order.
Status ScaleSim::Deliver(double until, bool inclusive) {
  while (!events_.empty() &&
         (events_.top().at < until || (inclusive && events_.top().at <= until))) {
    Event e = events_.top();
    events_.pop();
    COPSE_RETURN_IF_ERROR(OnEvent(e));
  }
  return Status::Ok();
}

Result<Timestamp> ScaleSim::AfterRound(const scheduler::RoundInfo& r) {
  if (warming_up_) {
    decided_at_ = ToSeconds(r.at);
    return r.at;
  }
  double now = round_start_;  // r.at to the microsecond
  double round_s = ToSeconds(r.wall);
  ++r_.rounds;
  r_.round_ms.push_back(Ms(r.wall));
  if (burst_at_ >= 0 && r_.burst_round_ms < 0) r_.burst_round_ms = Ms(r.wall);
  utilisation_sum_ += static_cast<double>(busy_total_) / total_slots_;
  // What happened while the solver ran, then its decisions take effect.
  double done = now + round_s;
  COPSE_RETURN_IF_ERROR(Deliver(done, false));
  decided_at_ = done;
  return ToTime(done);
}

Status ScaleSim::Apply(const Decision& d, Timestamp when) {
  const double at = decided_at_;  // `when` to the microsecond
  switch (d.kind) {
    case Decision::Kind::kAdmitJob:
      return Status::Ok();  // its tasks were submitted with it
    case Decision::Kind::kStartTask: {
      auto it = tasks_.find(d.task);
      bool ok = !d.root && it != tasks_.end() && !it->second.running && d.computer >= 0 &&
                d.computer < static_cast<int>(slots_.size()) &&
                busy_[d.computer] < slots_[d.computer];
      if (!ok) {
        ++r_.violations;
        return Status::Ok();
      }
      SimTask& t = it->second;
      // A confirmation, not a change that calls for another round.
      COPSE_RETURN_IF_ERROR(loop_.Handle(scheduler::TaskStarted{d.task}, when));
      t.running = true;
      t.computer = d.computer;
      ++busy_[d.computer];
      ++busy_total_;
      --waiting_;
      ++r_.tasks_placed;
      r_.latency_ms.push_back((at - t.submitted) * 1e3);
      if (t.burst) {
        t.burst = false;
        if (++r_.burst_placed == o_.burst_tasks) r_.burst_all_placed_s = at - burst_at_;
      }
      Push(at + t.duration, EventKind::kCompletion, d.task, t.generation);
      return Status::Ok();
    }
    case Decision::Kind::kKillTask: {
      auto it = tasks_.find(d.task);
      if (it == tasks_.end()) return Status::Ok();  // completed while the round ran
      SimTask& t = it->second;
      if (!t.running) {
        ++r_.violations;
        return Status::Ok();
      }
      --busy_[t.computer];
      --busy_total_;
      t.running = false;
      t.computer = -1;
      t.submitted = at;
      ++t.generation;  // its completion is void; it runs its full duration again
      ++waiting_;
      ++r_.tasks_killed;
      return Handle(scheduler::TaskKilled{d.task}, at);
    }
  }
  return Status::Ok();
}

Status ScaleSim::Run() {
  if (o_.wall == nullptr) return InvalidArgument("scale simulation: no wall clock");
  if (o_.utilisation <= 0 || o_.utilisation > 1.5 || o_.mean_task_s <= 0 ||
      o_.mean_tasks_per_job < 1 || o_.max_rounds < 1 || o_.max_time_s <= 0) {
    return InvalidArgument(
        "scale simulation: need 0 < utilisation <= 1.5, mean_task_s > 0, mean_tasks_per_job >= 1, "
        "max_rounds >= 1, max_time_s > 0");
  }
  if (o_.burst_tasks < 0 || o_.burst_at_s < 0 ||
      (o_.burst_tasks > 0 && (o_.burst_racks < 1 || burst_computers_.empty()))) {
    return InvalidArgument(
        "scale simulation: a burst needs burst_tasks >= 0, burst_at_s >= 0 and burst_racks >= 1 "
        "naming racks that have computers");
  }
  r_.burst_tasks = o_.burst_tasks;
  r_.policy = o_.scheduler.policy;
  r_.solver = o_.flow_solver;
  r_.seed = o_.seed;
  r_.computers = static_cast<int>(slots_.size());
  r_.slots = total_slots_;
  // The running population at time 0.
  int target = static_cast<int>(std::floor(std::min(o_.utilisation, 1.0) * total_slots_));
  while (busy_total_ < target) {
    int n = std::min(JobSize(), target - busy_total_);
    COPSE_ASSIGN_OR_RETURN(std::vector<TaskId> ids, NewJob(n, 0));
    for (TaskId id : ids) COPSE_RETURN_IF_ERROR(Adopt(id, 0));
  }
  r_.initial_tasks = busy_total_;
  Push(0, EventKind::kArrival, 0, 0);
  if (o_.burst_tasks > 0) Push(o_.burst_at_s, EventKind::kBurst, 0, 0);
  // Warm-up round at time 0 (builds the flow network of the adopted tasks;
  // no task waits, so nothing is placed); not charged, not counted.
  warming_up_ = true;
  COPSE_RETURN_IF_ERROR(loop_.RunRounds(Timestamp(0), 1).status());
  warming_up_ = false;
  changed_ = false;

  double now = 0;
  while (r_.rounds < o_.max_rounds && now < o_.max_time_s) {
    COPSE_RETURN_IF_ERROR(Deliver(now, true));
    COPSE_ASSIGN_OR_RETURN(bool woke, loop_.Wakeup(ToTime(now)));
    if (woke) changed_ = true;         // the costs moved with time
    if (waiting_ == 0 || !changed_) {  // nothing to place: move to the next event or wakeup
      double next = NextEventTime();
      if (std::optional<Timestamp> w = loop_.NextWakeup(); w && waiting_ > 0) {
        next = std::min(next, ToSeconds(*w));
      }
      now = std::max(now, next);
      continue;
    }
    changed_ = false;
    // One charged round per pass, so that the events of its wall time are
    // delivered before the next.
    round_start_ = now;
    Result<Timestamp> done = loop_.RunRounds(ToTime(now), 1);
    if (!done.ok()) return done.status().WithContext("round " + std::to_string(r_.rounds));
    (void)done;
    now = std::max(now, decided_at_);
  }
  r_.sim_time_s = now;
  r_.tasks_waiting_at_end = waiting_;
  r_.mean_utilisation = r_.rounds > 0 ? utilisation_sum_ / r_.rounds : 0;
  return Status::Ok();
}

}  // namespace

Result<ScaleResult> RunScaleSimulation(const ScaleOptions& options) {
  COPSE_ASSIGN_OR_RETURN(scheduler::Topology topology,
                         scheduler::TopologyFromConfig(options.config));
  scheduler::SchedulerOptions so;
  so.policy = options.scheduler;
  so.max_running_jobs = 1'000'000;  // no admission limit: every job runs on arrival
  so.seed = options.seed;
  so.flow_solver = options.flow_solver;
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<scheduler::Scheduler> sched,
                         scheduler::Scheduler::Create(std::move(topology), so));
  ScaleSim sim(options, *sched);
  COPSE_RETURN_IF_ERROR(sim.Run());
  return sim.TakeResult();
}

}  // namespace copse::sim

#include "master/scheduling_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/net/guard.h"

namespace copse::master {
namespace {

using scheduler::Change;
using scheduler::Decision;
using scheduler::TaskState;

constexpr uint64_t kTaskIdBlock = 4096;  // ids reserved per write to the store
constexpr const char* kTaskIdKey = "sched/next_task";
constexpr size_t kMaxPendingEvents = 1'000'000;

}  // namespace

SchedulingService::SchedulingService(asio::io_context& io, const ClusterConfig& config,
                                     std::unique_ptr<scheduler::Scheduler> scheduler,
                                     dfs::MetaStore& store, const Clock& clock, Peers peers,
                                     Options options)
    : io_(io),
      config_(config),
      sched_(std::move(scheduler)),
      store_(store),
      clock_(clock),
      options_(options),
      messenger_(peers.messenger),
      jobs_(peers.jobs),
      files_(peers.files),
      observer_(peers.observer),
      on_recovered_(std::move(peers.on_recovered)),
      wakeup_(io),
      recovery_timer_(io),
      root_watch_(io) {
  scheduler::LoopOptions lo;
  lo.wall = &clock_;
  scheduler::SchedulingLoop::Hooks hooks;
  hooks.after_round = [this](const scheduler::RoundInfo& info) -> Result<Timestamp> {
    if (observer_) {
      nlohmann::json policy;
      sched_->policy().LastRound(&policy);
      observer_->OnRound(info, std::move(policy));
    }
    return info.at;
  };
  loop_ = std::make_unique<scheduler::SchedulingLoop>(*sched_, *this, lo, std::move(hooks));
  for (size_t c = 0; c < config.computers.size(); ++c) {
    computer_ids_[config.computers[c].name] = static_cast<int>(c);
  }
  for (size_t r = 0; r < config.racks.size(); ++r) {
    rack_ids_[config.racks[r].name] = static_cast<int>(r);
  }
}

SchedulingService::~SchedulingService() {
  Stop();
  sched_->set_observer(nullptr);
}

Status SchedulingService::Start() {
  COPSE_ASSIGN_OR_RETURN(dfs::MetaStore::Entries e, store_.Scan(kTaskIdKey));
  for (const auto& [k, v] : e) {
    if (k == kTaskIdKey) next_task_ = std::stoull(v);
  }
  task_limit_ = next_task_;
  sched_->set_observer(this);
  Timestamp now = clock_.Now();
  for (size_t c = 0; c < config_.computers.size(); ++c) {
    Status s = sched_->Handle(scheduler::ComputerDown{static_cast<int>(c)}, now);
    if (!s.ok()) return s;
  }
  if (options_.restarted) {
    recovering_ = true;
    recovery_timer_.expires_after(options_.recovery);
    std::weak_ptr<int> alive = alive_;
    recovery_timer_.async_wait([this, alive](const asio::error_code& ec) {
      if (!ec && !alive.expired()) EndRecovery();
    });
    spdlog::info("recovering: waiting up to {:.1f} s for workers to report their tasks",
                 ToSeconds(options_.recovery));
  }
  ArmRootWatch();
  return Status::Ok();
}

// ---- roots that went quiet ----------------------------------------------------

void SchedulingService::ArmRootWatch() {
  if (stopped_) return;
  Duration period =
      std::clamp(config_.jobs.root_timeout / 4, Duration{100'000}, Duration{1'000'000});
  root_watch_.expires_after(std::chrono::microseconds(period.count()));
  std::weak_ptr<int> alive = alive_;
  root_watch_.async_wait([this, alive](const asio::error_code& ec) {
    if (ec || alive.expired()) return;
    // The daemon's own state: a fault here stops the master (common/net/guard.h).
    net::GuardState("watching roots", [&] { WatchRoots(); });
    ArmRootWatch();
  });
}

void SchedulingService::WatchRoots() {
  if (recovering_) return;
  Timestamp now = clock_.Now();
  for (auto& [job, j] : job_state_) {
    if (j.over || j.root_kill_sent) continue;
    const scheduler::TaskInfo* st = sched_->state().FindTask(j.root_task);
    if (st == nullptr || st->state != TaskState::kRunning) continue;
    if (now - j.root_heard < config_.jobs.root_timeout) continue;
    auto t = tasks_.find(j.root_task);
    if (t == tasks_.end()) continue;
    std::string why = fmt::format("its root was not heard from for {:.0f} s",
                                  ToSeconds(config_.jobs.root_timeout));
    spdlog::warn("job {}: {}; killing it on {} (the job restarts)", job, why, t->second.computer);
    j.root_kill_sent = true;
    (void)messenger_.Kill(t->second.computer, t->second.id, t->second.attempt, why);
  }
}

void SchedulingService::RootHeard(uint64_t job) {
  if (auto it = job_state_.find(job); it != job_state_.end()) it->second.root_heard = clock_.Now();
}

void SchedulingService::Stop() {
  stopped_ = true;
  wakeup_.cancel();
  recovery_timer_.cancel();
  root_watch_.cancel();
  root_kills_.clear();  // cancels them
}

Status SchedulingService::ReserveTaskIds(size_t n) {
  if (next_task_ + n <= task_limit_) return Status::Ok();
  // An id is handed out only once the store holds a limit above it, so a
  // restarted master never hands it out again.
  uint64_t limit = next_task_ + std::max<uint64_t>(kTaskIdBlock, n);
  COPSE_RETURN_IF_ERROR(
      store_.Apply({{kTaskIdKey, std::to_string(limit)}}).WithContext("recording task ids"));
  task_limit_ = limit;
  return Status::Ok();
}

uint64_t SchedulingService::NewTaskId() { return next_task_++; }

int SchedulingService::ComputerId(const std::string& name) const {
  auto it = computer_ids_.find(name);
  return it == computer_ids_.end() ? -1 : it->second;
}

std::string SchedulingService::ComputerName(int id) const {
  return id >= 0 && id < static_cast<int>(config_.computers.size()) ? config_.computers[id].name
                                                                    : std::string();
}

std::vector<SchedulingService::TaskSummary> SchedulingService::TasksOf(uint64_t job) const {
  std::vector<TaskSummary> out;
  const scheduler::ClusterState& state = sched_->state();
  for (const auto& [id, t] : tasks_) {
    if (t.job != job) continue;
    const scheduler::TaskInfo* info = state.FindTask(static_cast<scheduler::TaskId>(id));
    if (info == nullptr) continue;
    TaskSummary s;
    s.id = id;
    s.job = t.job;
    s.root = t.root;
    s.label = t.label;
    s.attempt = t.attempt;
    s.state = scheduler::TaskStateName(info->state);
    if (info->state != scheduler::TaskState::kWaiting) s.computer = ComputerName(info->computer);
    out.push_back(std::move(s));
  }
  return out;
}

uint64_t SchedulingService::TasksVersion(uint64_t job) const {
  auto it = job_state_.find(job);
  return it == job_state_.end() ? 0 : it->second.tasks_version;
}

void SchedulingService::AddNames(nlohmann::json& doc) const {
  if (doc.is_array()) {
    for (nlohmann::json& x : doc) AddNames(x);
    return;
  }
  if (!doc.is_object()) return;
  for (auto& [key, value] : doc.items()) AddNames(value);
  if (auto c = doc.find("computer"); c != doc.end() && c->is_number_integer()) {
    doc["computer_name"] = ComputerName(c->get<int>());
  }
  if (auto r = doc.find("rack"); r != doc.end() && r->is_number_integer()) {
    int id = r->get<int>();
    doc["rack_name"] = id >= 0 && id < static_cast<int>(config_.racks.size())
                           ? config_.racks[static_cast<size_t>(id)].name
                           : std::string();
  }
}

nlohmann::json SchedulingService::Describe() const {
  nlohmann::json d = sched_->Describe(clock_.Now());
  AddNames(d);
  return d;
}

Result<nlohmann::json> SchedulingService::Explain(uint64_t task) const {
  COPSE_ASSIGN_OR_RETURN(nlohmann::json e,
                         sched_->Explain(static_cast<scheduler::TaskId>(task), clock_.Now()));
  AddNames(e);
  if (auto it = tasks_.find(task); it != tasks_.end()) {
    e["label"] = it->second.label;
    e["attempt"] = it->second.attempt;
  }
  return e;
}

nlohmann::json SchedulingService::FlowGraph() const {
  nlohmann::json g;
  if (!sched_->policy().FlowGraph(sched_->state(), &g)) return nullptr;
  AddNames(g);
  return g;
}

void SchedulingService::Handle(const scheduler::Event& e) {
  Timestamp now = clock_.Now();
  if (!first_event_) first_event_ = now;
  // The scheduler's own state, and the decisions and changes it hands out:
  // a fault there stops the master (common/net/guard.h).
  Status s;
  net::GuardState("handling a scheduler event", [&] { s = loop_->Handle(e, now); });
  if (!s.ok()) spdlog::warn("scheduler refused {}: {}", scheduler::EventName(e), s.ToString());
  if (spdlog::should_log(spdlog::level::debug)) {  // not built on every event otherwise
    spdlog::debug("scheduler event: {}", scheduler::ToString(e));
  }
  ScheduleSoon();
}

void SchedulingService::ScheduleSoon() {
  if (run_posted_ || stopped_) return;
  run_posted_ = true;
  std::weak_ptr<int> alive = alive_;
  asio::post(io_, [this, alive] {
    if (alive.expired()) return;
    run_posted_ = false;
    RunNow();
  });
}

void SchedulingService::RunNow() {
  if (recovering_ || stopped_) return;
  Result<Timestamp> r = Status::Ok();
  net::GuardState("running a scheduling round", [&] { r = loop_->Run(clock_.Now()); });
  if (!r.ok()) spdlog::error("scheduling round failed: {}", r.status().ToString());
  first_event_.reset();
  ArmWakeup();
}

void SchedulingService::ArmWakeup() {
  std::optional<Timestamp> w = loop_->NextWakeup();
  if (!w || stopped_) return;
  wakeup_.expires_at(std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(*w)));
  std::weak_ptr<int> alive = alive_;
  wakeup_.async_wait([this, alive](const asio::error_code& ec) {
    if (ec || alive.expired() || recovering_) return;
    Result<bool> woke = false;
    net::GuardState("waking the scheduler", [&] { woke = loop_->Wakeup(clock_.Now()); });
    if (woke.ok() && *woke) {
      if (!first_event_) first_event_ = clock_.Now();
      RunNow();
    } else {
      ArmWakeup();
    }
  });
}

// ---- jobs -------------------------------------------------------------------

Result<uint64_t> SchedulingService::AddJob(uint64_t job, uint32_t incarnation,
                                           const scheduler::JobAttributes& a, uint64_t root_task,
                                           std::vector<ProgramRef> programs) {
  if (root_task == 0) {
    COPSE_RETURN_IF_ERROR(ReserveTaskIds(1));
    root_task = NewTaskId();
  }
  scheduler::JobSubmitted e{static_cast<scheduler::JobId>(job),
                            static_cast<scheduler::TaskId>(root_task), a};
  e.attributes.root_in_cluster = true;
  COPSE_RETURN_IF_ERROR(loop_->Handle(e, clock_.Now()));
  job_state_[job] = Job{root_task, incarnation, {}, false};
  job_state_[job].programs = std::move(programs);
  Task t;
  t.id = root_task;
  t.job = job;
  t.root = true;
  t.label = "root";
  tasks_[root_task] = t;
  ScheduleSoon();
  return root_task;
}

Status SchedulingService::EndJob(uint64_t job, bool root_said_so) {
  auto it = job_state_.find(job);
  if (it == job_state_.end() || it->second.over) return Status::Ok();
  it->second.over = true;
  it->second.root_said_so = root_said_so;
  it->second.pending.clear();
  Handle(scheduler::JobFinished{static_cast<scheduler::JobId>(job), /*root_exited=*/false});
  messenger_.JobEnded(job);
  return Status::Ok();
}

void SchedulingService::SetIncarnation(uint64_t job, uint32_t incarnation) {
  auto it = job_state_.find(job);
  if (it != job_state_.end()) {
    it->second.incarnation = incarnation;
    it->second.pending.clear();  // news of the last incarnation's tasks
  }
}

bool SchedulingService::RootAdopted(uint64_t job) const {
  auto it = job_state_.find(job);
  if (it == job_state_.end()) return false;
  const scheduler::TaskInfo* t = sched_->state().FindTask(it->second.root_task);
  return t != nullptr && t->placed();
}

// ---- roots ------------------------------------------------------------------

std::vector<TaskStateReport> SchedulingService::RootHello(uint64_t job,
                                                          const std::vector<uint64_t>& live) {
  std::vector<TaskStateReport> out;
  std::set<uint64_t> pending;
  if (auto j = job_state_.find(job); j != job_state_.end()) {
    for (const TaskEvent& e : j->second.pending) pending.insert(e.task);
  }
  for (uint64_t id : live) {
    TaskStateReport r;
    r.task = id;
    auto it = tasks_.find(id);
    const scheduler::TaskInfo* st =
        it != tasks_.end() && it->second.job == job ? sched_->state().FindTask(id) : nullptr;
    if (st != nullptr) {
      r.state = st->state == TaskState::kWaiting ? TaskStateReport::State::kWaiting
                                                 : TaskStateReport::State::kRunning;
      r.attempt = it->second.attempt;
      r.computer = it->second.computer;
    } else if (pending.count(id) != 0) {
      r.state = TaskStateReport::State::kRunning;  // its end follows
    }
    out.push_back(r);
  }
  // Tasks of the job its root does not list: their submission's answer was
  // lost with the root's last connection, so it cannot name them and runs
  // them again. They go.
  std::set<uint64_t> listed(live.begin(), live.end());
  std::vector<uint64_t> orphans;
  for (const auto& [id, t] : tasks_) {
    if (t.job == job && !t.root && !t.withdrawn && listed.count(id) == 0) orphans.push_back(id);
  }
  for (uint64_t id : orphans) {
    spdlog::info("job {}: its root does not know task {} ({}); withdrawing it", job, id,
                 tasks_[id].label);
    (void)Withdraw(job, id);
  }
  return out;
}

void SchedulingService::RootConnected(uint64_t job) {
  auto it = job_state_.find(job);
  if (it == job_state_.end()) return;
  std::deque<TaskEvent> pending = std::move(it->second.pending);
  it->second.pending.clear();
  for (TaskEvent& e : pending) Tell(job, std::move(e));
}

void SchedulingService::Tell(uint64_t job, TaskEvent e) {
  auto it = job_state_.find(job);
  if (it == job_state_.end() || it->second.over) return;
  if (it->second.pending.empty() && messenger_.ToRoot(job, e)) return;
  if (it->second.pending.size() < kMaxPendingEvents) it->second.pending.push_back(std::move(e));
}

scheduler::TaskLocality SchedulingService::ToLocality(const NamedLocality& l, Status* error) const {
  scheduler::TaskLocality out;
  out.worst = {l.worst_rack_bytes, l.worst_core_bytes};
  for (const NamedLocality::Place& p : l.computers) {
    int id = ComputerId(p.name);
    if (id < 0) *error = InvalidArgument("no computer '" + p.name + "' in this cluster");
    out.computers.push_back({id, {p.rack_bytes, p.core_bytes}});
  }
  for (const NamedLocality::Place& p : l.racks) {
    auto it = rack_ids_.find(p.name);
    if (it == rack_ids_.end()) *error = InvalidArgument("no rack '" + p.name + "' in this cluster");
    out.racks.push_back({it == rack_ids_.end() ? -1 : it->second, {p.rack_bytes, p.core_bytes}});
  }
  return out;
}

Result<std::vector<uint64_t>> SchedulingService::Submit(uint64_t job,
                                                        std::vector<VertexTaskRequest> tasks) {
  auto j = job_state_.find(job);
  const scheduler::JobInfo* info = sched_->state().FindJob(static_cast<scheduler::JobId>(job));
  if (j == job_state_.end() || j->second.over || info == nullptr || !info->admitted) {
    return FailedPrecondition(fmt::format("job {} is not running", job));
  }
  std::vector<scheduler::TaskLocality> localities;
  for (const VertexTaskRequest& t : tasks) {
    Status error;
    localities.push_back(ToLocality(t.locality, &error));
    if (!error.ok()) return error.WithContext("task " + t.label);
  }
  COPSE_RETURN_IF_ERROR(ReserveTaskIds(tasks.size()));
  std::vector<uint64_t> ids;
  Timestamp now = clock_.Now();
  if (!first_event_) first_event_ = now;
  for (size_t i = 0; i < tasks.size(); ++i) {
    uint64_t id = NewTaskId();
    Task t;
    t.id = id;
    t.job = job;
    t.program = std::move(tasks[i].program);
    t.descriptor = std::move(tasks[i].descriptor);
    t.label = std::move(tasks[i].label);
    t.timeout = tasks[i].timeout;
    tasks_[id] = std::move(t);
    Status s = loop_->Handle(
        scheduler::TaskSubmitted{static_cast<scheduler::TaskId>(id),
                                 static_cast<scheduler::JobId>(job), std::move(localities[i])},
        now);
    if (!s.ok()) {
      std::string label = tasks_[id].label;
      tasks_.erase(id);
      return s.WithContext("task " + label);
    }
    ids.push_back(id);
  }
  ScheduleSoon();
  return ids;
}

Status SchedulingService::Withdraw(uint64_t job, uint64_t task) {
  auto it = tasks_.find(task);
  if (it == tasks_.end() || it->second.job != job || it->second.root) {
    return NotFound(fmt::format("job {} has no task {}", job, task));
  }
  if (sched_->state().FindTask(static_cast<scheduler::TaskId>(task)) == nullptr) {
    return Status::Ok();  // ended already; its end is on its way
  }
  it->second.withdrawn = true;
  Handle(scheduler::TaskWithdrawn{static_cast<scheduler::TaskId>(task)});
  return Status::Ok();
}

// ---- decisions --------------------------------------------------------------

Status SchedulingService::Apply(const Decision& d, Timestamp at) {
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("scheduler decision: {}", scheduler::ToString(d));
  }
  switch (d.kind) {
    case Decision::Kind::kAdmitJob:
      jobs_.OnAdmitted(static_cast<uint64_t>(d.job));
      return Status::Ok();
    case Decision::Kind::kStartTask: {
      Task& t = tasks_[static_cast<uint64_t>(d.task)];
      const Job& j = job_state_[t.job];
      t.attempt++;
      t.computer = ComputerName(d.computer);
      LaunchRequest r;
      r.task = t.id;
      r.attempt = t.attempt;
      r.job = t.job;
      r.incarnation = j.incarnation;
      r.root = t.root;
      r.program = t.program;
      r.descriptor = t.root ? "{}" : t.descriptor;
      r.timeout = t.timeout;
      r.label = t.label;
      if (!t.root) r.programs = j.programs;
      if (!messenger_.Launch(t.computer, r)) {
        // Its worker is not connected: the task waits again.
        return loop_->Handle(scheduler::TaskStartFailed{d.task}, at);
      }
      if (first_event_ && observer_) observer_->OnLaunchLatency(clock_.Now() - *first_event_);
      jobs_.OnRun({t.job, t.id, t.attempt, t.root, t.label, t.computer, RunNews::What::kLaunched,
                   std::nullopt, ""});
      return Status::Ok();
    }
    case Decision::Kind::kKillTask: {
      Task& t = tasks_[static_cast<uint64_t>(d.task)];
      const Job& j = job_state_[t.job];
      std::string why = t.withdrawn ? "withdrawn by its root"
                        : j.over    ? "its job is over"
                                    : "preempted";
      if (t.root && j.root_said_so) {
        // It exits by itself once it hears the master's answer; killed only
        // if it does not.
        auto& timer = root_kills_[t.id];
        timer = std::make_unique<asio::steady_timer>(io_, options_.root_grace);
        std::weak_ptr<int> alive = alive_;
        uint64_t id = t.id;
        uint32_t attempt = t.attempt;
        std::string computer = t.computer;
        timer->async_wait([this, alive, id, attempt, computer](const asio::error_code& ec) {
          if (ec || alive.expired()) return;
          root_kills_.erase(id);
          if (tasks_.count(id) == 0) return;
          (void)messenger_.Kill(computer, id, attempt, "its job is over and it did not exit");
        });
        return Status::Ok();
      }
      (void)messenger_.Kill(t.computer, t.id, t.attempt, why);
      return Status::Ok();
    }
  }
  return Status::Ok();
}

// ---- what became of tasks (the scheduler's own changes) ---------------------

void SchedulingService::OnChange(const scheduler::ClusterState& state, const Change& c,
                                 Timestamp now) {
  (void)state;
  (void)now;
  if (c.task == nullptr) return;
  auto it = tasks_.find(static_cast<uint64_t>(c.task->id));
  if (it == tasks_.end()) return;
  Task& t = it->second;
  if (auto j = job_state_.find(t.job); j != job_state_.end()) ++j->second.tasks_version;
  TaskEvent e;
  e.task = t.id;
  e.attempt = t.attempt;
  e.computer = t.computer;
  switch (c.kind) {
    case Change::Kind::kTaskPlaced:
      t.placed = true;
      return;
    case Change::Kind::kTaskRunning:
      if (t.root) {
        // A root that starts counts as heard from; the watch begins.
        Job& j = job_state_[t.job];
        j.root_heard = clock_.Now();
        j.root_kill_sent = false;
        return;
      }
      jobs_.OnRun({t.job, t.id, t.attempt, false, t.label, t.computer, RunNews::What::kStarted,
                   std::nullopt, ""});
      e.kind = TaskEventKind::kStarted;
      Tell(t.job, std::move(e));
      return;
    case Change::Kind::kTaskWaiting: {
      if (!t.placed) return;  // newly submitted, or its start failed before running
      t.placed = false;
      if (t.root) {
        jobs_.OnRun({t.job, t.id, t.attempt, true, t.label, t.computer, RunNews::What::kEnded,
                     t.exit, "root lost"});
        jobs_.OnRootLost(t.job, t.exit ? "its root task ended: " + t.exit->reason
                                       : "its root task's computer " + t.computer + " was lost");
        t.exit.reset();
        return;
      }
      jobs_.OnRun({t.job, t.id, t.attempt, false, t.label, t.computer, RunNews::What::kEnded,
                   t.exit, "preempted"});
      if (observer_) observer_->OnVertexRunEnded("preempted");
      e.kind = TaskEventKind::kPreempted;
      e.reason = "preempted";
      Tell(t.job, std::move(e));
      t.exit.reset();
      return;
    }
    case Change::Kind::kTaskRemoved:
      break;
    default:
      return;
  }
  // Removed: its last news.
  bool tell = true;
  switch (c.reason) {
    case Change::Reason::kCompleted:
      e.kind = TaskEventKind::kCompleted;
      break;
    case Change::Reason::kFailed:
      e.kind = TaskEventKind::kFailed;
      break;
    case Change::Reason::kKilled:
      e.kind = TaskEventKind::kWithdrawn;
      break;
    case Change::Reason::kLost:
      e.kind = TaskEventKind::kLost;
      e.reason = "its computer " + t.computer + " was lost";
      break;
    default:  // its job is gone, or a withdrawn task's kill was confirmed
      e.kind = TaskEventKind::kWithdrawn;
      tell = t.withdrawn;
      break;
  }
  if (t.exit) {
    e.reason = t.exit->reason;
    e.log_tail = t.exit->log_tail;
    e.result = t.exit->result;
    e.exit_code = t.exit->exit_code;
  }
  if (t.placed || t.exit) {
    jobs_.OnRun({t.job, t.id, t.attempt, t.root, t.label, t.computer, RunNews::What::kEnded, t.exit,
                 e.reason.empty() ? TaskEventKindName(e.kind) : e.reason});
    if (observer_ && !t.root) observer_->OnVertexRunEnded(TaskEventKindName(e.kind));
  }
  uint64_t job = t.job;
  bool root = t.root;
  if (root) root_kills_.erase(t.id);  // it is gone: no kill needed
  tasks_.erase(it);
  if (tell && !root) Tell(job, std::move(e));
}

// ---- workers ----------------------------------------------------------------

void SchedulingService::TaskStarted(const std::string& computer, uint64_t task, uint32_t attempt) {
  auto it = tasks_.find(task);
  if (it == tasks_.end() || it->second.attempt != attempt || it->second.computer != computer) {
    // Not a run this master knows of (a stale attempt): it must not hold a slot.
    spdlog::warn("{} started task {} attempt {}, which is not running there; killing it", computer,
                 task, attempt);
    (void)messenger_.Kill(computer, task, attempt, "not a task of this master");
    return;
  }
  Handle(scheduler::TaskStarted{static_cast<scheduler::TaskId>(task)});
}

void SchedulingService::TaskExited(const std::string& computer, const TaskExitReport& exit) {
  messenger_.AckExit(computer, exit.task, exit.attempt);
  if (exit.kind != ExitKind::kCompleted) files_.AbandonRun(exit.task, exit.attempt);
  auto it = tasks_.find(exit.task);
  if (it == tasks_.end() || it->second.attempt != exit.attempt || it->second.computer != computer) {
    return;  // a run this master no longer counts (lost, or an older attempt)
  }
  Task& t = it->second;
  t.exit = exit;
  const scheduler::TaskInfo* st = sched_->state().FindTask(static_cast<scheduler::TaskId>(t.id));
  if (st == nullptr) {
    tasks_.erase(it);
    return;
  }
  auto id = static_cast<scheduler::TaskId>(t.id);
  if (st->state == TaskState::kKillRequested) {
    Handle(scheduler::TaskKilled{id});  // preempted, withdrawn or its job is over
  } else if (exit.kind == ExitKind::kStartFailed) {
    Handle(scheduler::TaskStartFailed{id});
  } else if (t.root) {
    // A root ends only after it said the job is over (then it is being
    // killed, above): any other end restarts its job.
    Handle(scheduler::RootFailed{static_cast<scheduler::JobId>(t.job)});
  } else if (exit.kind == ExitKind::kCompleted) {
    Handle(scheduler::TaskCompleted{id});
  } else {
    Handle(scheduler::TaskFailed{id});
  }
}

void SchedulingService::Adopt(const std::string& computer, const RunningTaskReport& r) {
  auto j = job_state_.find(r.job);
  bool current = j != job_state_.end() && !j->second.over &&
                 r.incarnation == j->second.incarnation &&
                 (!r.root || r.task == j->second.root_task);
  const scheduler::TaskInfo* st = sched_->state().FindTask(static_cast<scheduler::TaskId>(r.task));
  if (!current || (st != nullptr && st->placed())) {
    spdlog::info("{} runs task {} ({}) of job {} that is not current here; killing it", computer,
                 r.task, r.label, r.job);
    (void)messenger_.Kill(computer, r.task, r.attempt, "not a current task of this master");
    return;
  }
  Task& t = tasks_[r.task];
  if (r.root) j->second.root_heard = clock_.Now();
  t.id = r.task;
  t.job = r.job;
  t.root = r.root;
  t.label = r.label;
  t.program = r.program;
  t.descriptor = r.descriptor;
  t.timeout = r.timeout;
  t.attempt = r.attempt;
  t.computer = computer;
  scheduler::TaskAdopted e{static_cast<scheduler::TaskId>(r.task),
                           static_cast<scheduler::JobId>(r.job),
                           ComputerId(computer),
                           clock_.Now() - r.running,
                           {}};
  Status s = loop_->Handle(e, clock_.Now());
  if (!s.ok()) {
    spdlog::warn("cannot adopt task {} on {}: {}; killing it", r.task, computer, s.ToString());
    if (!r.root) tasks_.erase(r.task);
    (void)messenger_.Kill(computer, r.task, r.attempt, "could not be adopted");
    return;
  }
  spdlog::info("adopted task {} ({}) of job {} running on {}", r.task, r.label, r.job, computer);
}

void SchedulingService::OnWorkerRegistered(const std::string& computer, net::Connection& conn,
                                           const WorkerTasks& tasks) {
  (void)conn;
  registered_.insert(computer);
  for (const RunningTaskReport& r : tasks.running) {
    auto it = tasks_.find(r.task);
    if (it != tasks_.end() && it->second.attempt == r.attempt && it->second.computer == computer) {
      continue;  // known: it runs where we put it
    }
    if (recovering_) {
      Adopt(computer, r);
    } else {
      (void)messenger_.Kill(computer, r.task, r.attempt, "not a task of this master");
    }
  }
  for (const TaskExitReport& e : tasks.ended) {
    auto it = tasks_.find(e.task);
    if (it != tasks_.end()) {
      TaskExited(computer, e);
      continue;
    }
    // An end this master never saw start (it happened while the master was
    // away): the root hears of it; the scheduler never knew the task.
    messenger_.AckExit(computer, e.task, e.attempt);
    if (e.kind != ExitKind::kCompleted) files_.AbandonRun(e.task, e.attempt);
    if (e.root) continue;
    TaskEvent ev;
    ev.task = e.task;
    ev.attempt = e.attempt;
    ev.computer = computer;
    ev.kind = e.kind == ExitKind::kCompleted ? TaskEventKind::kCompleted : TaskEventKind::kFailed;
    if (e.kind == ExitKind::kKilled || e.kind == ExitKind::kStartFailed) {
      ev.kind = TaskEventKind::kLost;
    }
    ev.reason = e.reason;
    ev.log_tail = e.log_tail;
    ev.result = e.result;
    ev.exit_code = e.exit_code;
    Tell(e.job, std::move(ev));
  }
  if (recovering_ && registered_.size() == config_.computers.size()) EndRecovery();
  ScheduleSoon();
}

void SchedulingService::EndRecovery() {
  if (!recovering_) return;
  recovering_ = false;
  recovery_timer_.cancel();
  // Tasks of a job whose root did not come back belong to a root that is
  // gone: the job restarts (the job service gives it a new incarnation).
  for (const auto& [job, j] : job_state_) {
    if (j.over || RootAdopted(job)) continue;
    std::vector<uint64_t> orphans;
    for (const auto& [id, t] : tasks_) {
      if (t.job == job && !t.root) orphans.push_back(id);
    }
    for (uint64_t id : orphans)
      Handle(scheduler::TaskWithdrawn{static_cast<scheduler::TaskId>(id)});
  }
  spdlog::info("recovery over: {} of {} computers registered, {} tasks adopted", registered_.size(),
               config_.computers.size(), tasks_.size());
  if (on_recovered_) on_recovered_();
  ScheduleSoon();
}

void SchedulingService::OnComputerUp(const std::string& computer) {
  int id = ComputerId(computer);
  if (id >= 0) Handle(scheduler::ComputerUp{id});
}

void SchedulingService::OnComputerDown(const std::string& computer) {
  registered_.erase(computer);
  int id = ComputerId(computer);
  if (id >= 0) Handle(scheduler::ComputerDown{id});
}

void SchedulingService::OnComputerDraining(const std::string& computer, bool draining,
                                           bool move_tasks) {
  int id = ComputerId(computer);
  if (id >= 0) Handle(scheduler::ComputerDraining{id, draining, move_tasks});
}

}  // namespace copse::master

#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <utility>

#include "dfs/placement.h"
#include "rootjob/job_dag.h"
#include "rootjob/job_manager.h"
#include "rootjob/locality.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduling_loop.h"
#include "scheduler/topology.h"
#include "sim/sim_network.h"

namespace copse::sim {

namespace {

namespace sg4 = simgrid::s4u;
using rootjob::ReadLevel;
using rootjob::VertexId;
using scheduler::Decision;
using scheduler::TaskId;

// A task reading from more computers than this reads through rack pools.
constexpr size_t kMaxFlowsPerTask = 10;
constexpr double kEpsilon = 1e-7;

Timestamp ToTime(double s) { return Timestamp(std::llround(s * 1e6)); }

struct Flow {
  TaskId task = 0;
  ReadLevel level = ReadLevel::kCore;
  int64_t bytes = 0;
  int64_t many_to_one = 0;  // of `bytes`, those of gather/all-to-all pieces
};

struct Attempt {
  int job = 0;
  VertexId vertex;
  int computer = 0;
  double started = 0;
  int pending_flows = 0;
  int64_t bytes_read = 0;  // input size (all levels)
  uint64_t timer = 0;      // sequence of its compute-done timer; 0 while reading
  // Share of its gather/all-to-all bytes that would cross the core even on a
  // computer of the rack holding most of them.
  double many_to_one_floor = 0;
};

struct SimJob {
  apps::InstanceSpec spec;
  // The root task's state machine: the same code copse-rootjob runs.
  std::unique_ptr<rootjob::JobManager> dag;
  TaskId root = 0;
  std::vector<int> stage_offset;  // first worker task id offset of each stage
  JobResult result;
  bool done = false;
};

bool Synthetic(const SimJob& j) { return j.spec.app == "synthetic"; }

enum class TimerKind { kArrival, kRootReady, kComputeDone };

struct TimerEvent {
  double at = 0;
  uint64_t seq = 0;
  TimerKind kind = TimerKind::kArrival;
  int job = 0;
  TaskId task = 0;
  bool operator>(const TimerEvent& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

// The master and the computers: it feeds the scheduling loop the events a
// master would and carries out its decisions (scheduler::DecisionSink).
class Sim final : public scheduler::DecisionSink {
 public:
  Sim(const SimOptions& o, const SimNetwork& net, scheduler::Scheduler& sched,
      std::vector<SimJob> jobs)
      : o_(o),
        net_(net),
        sched_(sched),
        loop_(sched, *this),
        jobs_(std::move(jobs)),
        running_(jobs_.size(), 0) {}

  Status Run();
  RunResult TakeResult();
  Status Apply(const Decision& d, Timestamp at) override;

 private:
  double Clock() const { return sg4::Engine::get_clock(); }
  Status Handle(const scheduler::Event& e) { return loop_.Handle(e, ToTime(Clock())); }
  void AddTimer(double at, TimerKind kind, int job, TaskId task, uint64_t* seq_out = nullptr);
  Status StartWorker(TaskId id, int computer);
  Status StartFlows(TaskId id, Attempt& a);
  Status KillWorker(TaskId id);
  Status OnFlowDone(size_t index);
  Status OnTimer(const TimerEvent& t);
  Status ComputeDone(TaskId id);
  Status SubmitReady(int job);
  // `bytes` read at `level`, `many_to_one` of them through gather/all-to-all
  // inputs, whose unavoidable cross-core share is `floor`.
  void Account(JobResult& r, ReadLevel level, int64_t bytes, int64_t many_to_one = 0,
               double floor = 0);
  void SampleUntil(double t);
  std::pair<int, VertexId> Locate(TaskId id) const;
  std::string Progress() const;

  const SimOptions& o_;
  const SimNetwork& net_;
  scheduler::Scheduler& sched_;
  scheduler::SchedulingLoop loop_;
  std::vector<SimJob> jobs_;
  std::vector<int> running_;  // running worker attempts per job
  std::map<TaskId, Attempt> attempts_;
  std::vector<sg4::CommPtr> comms_;
  std::vector<Flow> flows_;  // parallel to comms_
  std::priority_queue<TimerEvent, std::vector<TimerEvent>, std::greater<>> timers_;
  uint64_t next_seq_ = 1;
  int done_jobs_ = 0;
  double next_sample_ = 0;
  std::vector<std::vector<int>> utilisation_;
};

// Task ids: job j's root is (j + 1) * 10^7, its vertices follow it.
constexpr TaskId kIdsPerJob = 10'000'000;

std::pair<int, VertexId> Sim::Locate(TaskId id) const {
  int j = static_cast<int>(id / kIdsPerJob) - 1;
  int off = static_cast<int>(id % kIdsPerJob) - 1;
  const std::vector<int>& so = jobs_[j].stage_offset;
  int s = static_cast<int>(std::upper_bound(so.begin(), so.end(), off) - so.begin()) - 1;
  return {j, VertexId{s, off - so[s]}};
}

// "3 jobs unfinished, 12 tasks waiting, 5 running, 0 free slots", for errors.
std::string Sim::Progress() const {
  const scheduler::ClusterState& st = sched_.state();
  int waiting = 0, placed = 0;
  for (scheduler::JobId j : st.admitted_jobs()) {
    waiting += st.job(j).waiting;
    placed += st.job(j).placed;
  }
  return std::to_string(jobs_.size() - done_jobs_) + " jobs unfinished, " +
         std::to_string(st.num_admitted()) + " admitted, " + std::to_string(waiting) +
         " tasks waiting, " + std::to_string(placed) + " placed, " +
         std::to_string(st.free_slots_total()) + " free slots";
}

void Sim::AddTimer(double at, TimerKind kind, int job, TaskId task, uint64_t* seq_out) {
  uint64_t seq = next_seq_++;
  timers_.push({at, seq, kind, job, task});
  if (seq_out != nullptr) *seq_out = seq;
}

void Sim::Account(JobResult& r, ReadLevel level, int64_t bytes, int64_t many_to_one, double floor) {
  r.many_to_one_bytes += many_to_one;
  if (level == ReadLevel::kCore) r.many_to_one_core_bytes += many_to_one;
  r.many_to_one_floor_core_bytes += std::llround(floor * static_cast<double>(many_to_one));
  switch (level) {
    case ReadLevel::kLocal:
      r.local_bytes += bytes;
      break;
    case ReadLevel::kRack:
      r.rack_bytes += bytes;
      break;
    case ReadLevel::kCore:
      r.core_bytes += bytes;
      break;
  }
}

void Sim::SampleUntil(double t) {
  while (next_sample_ <= t + kEpsilon) {
    utilisation_.push_back(running_);
    next_sample_ += o_.utilisation_step_s;
  }
}

Status Sim::SubmitReady(int j) {
  SimJob& job = jobs_[j];
  for (rootjob::RunId r : job.dag->TakeSubmissions(ToTime(Clock()))) {
    VertexId v = r.vertex;
    TaskId id = job.root + 1 + job.stage_offset[v.stage] + v.index;
    scheduler::TaskSubmitted e{
        id, j + 1,
        rootjob::ComputeLocality(job.dag->Inputs(r), net_.spec().rack_of, net_.spec().num_racks)};
    COPSE_RETURN_IF_ERROR(Handle(e));
  }
  return Status::Ok();
}

Status Sim::StartFlows(TaskId id, Attempt& a) {
  SimJob& job = jobs_[a.job];
  const std::vector<int>& rack_of = net_.spec().rack_of;
  // Every vertex runs once in the simulator: its first version.
  const std::vector<rootjob::InputPiece>& pieces = job.dag->Inputs(rootjob::RunId{a.vertex, 1});
  std::vector<rootjob::PlannedRead> reads = rootjob::PlanReads(pieces, a.computer, rack_of);
  // The gather/all-to-all pieces' floor: the bytes a reader in the rack that
  // holds most of them would still pull across the core.
  int64_t m2o_total = 0;
  std::map<int, int64_t> m2o_held;  // rack -> bytes of pieces with a replica there
  for (const rootjob::InputPiece& p : pieces) {
    if (!p.many_to_one) continue;
    m2o_total += p.bytes;
    std::set<int> racks;
    for (int c : p.replicas) racks.insert(rack_of[c]);
    for (int rk : racks) m2o_held[rk] += p.bytes;
  }
  int64_t m2o_best = 0;
  for (const auto& [rk, held] : m2o_held) m2o_best = std::max(m2o_best, held);
  a.many_to_one_floor =
      m2o_total > 0 ? static_cast<double>(m2o_total - m2o_best) / static_cast<double>(m2o_total)
                    : 0.0;
  struct SourceBytes {
    int64_t bytes = 0;
    int64_t many_to_one = 0;
    ReadLevel level = ReadLevel::kCore;
  };
  std::map<int, SourceBytes> by_source;
  for (size_t i = 0; i < reads.size(); ++i) {
    const rootjob::PlannedRead& r = reads[i];
    int64_t m2o = pieces[i].many_to_one ? r.bytes : 0;
    a.bytes_read += r.bytes;
    if (r.level == ReadLevel::kLocal) {
      Account(job.result, r.level, r.bytes, m2o, a.many_to_one_floor);
    } else {
      by_source[r.source].bytes += r.bytes;
      by_source[r.source].many_to_one += m2o;
      by_source[r.source].level = r.level;
    }
  }
  std::vector<std::pair<sg4::Host*, Flow>> flows;
  if (by_source.size() <= kMaxFlowsPerTask) {
    for (const auto& [src, sb] : by_source) {
      flows.push_back({net_.computer(src), Flow{id, sb.level, sb.bytes, sb.many_to_one}});
    }
  } else {  // one flow per source rack, from the rack's pool
    std::map<int, std::pair<int64_t, int64_t>> by_rack;
    for (const auto& [src, sb] : by_source) {
      by_rack[rack_of[src]].first += sb.bytes;
      by_rack[rack_of[src]].second += sb.many_to_one;
    }
    for (const auto& [rack, bm] : by_rack) {
      ReadLevel level = rack == rack_of[a.computer] ? ReadLevel::kRack : ReadLevel::kCore;
      flows.push_back({net_.rack_pool(rack), Flow{id, level, bm.first, bm.second}});
    }
  }
  for (auto& [src, flow] : flows) {
    if (flow.bytes <= 0) continue;
    comms_.push_back(
        sg4::Comm::sendto_async(src, net_.computer(a.computer), static_cast<uint64_t>(flow.bytes)));
    flows_.push_back(flow);
    ++a.pending_flows;
  }
  return Status::Ok();
}

Status Sim::StartWorker(TaskId id, int computer) {
  auto [j, v] = Locate(id);
  COPSE_RETURN_IF_ERROR(Handle(scheduler::TaskStarted{id}));
  Attempt& a = attempts_[id];
  a = Attempt{j, v, computer, Clock(), 0, 0, 0, 0.0};
  ++jobs_[j].result.tasks;
  ++running_[j];
  COPSE_RETURN_IF_ERROR(StartFlows(id, a));
  if (a.pending_flows == 0) return ComputeDone(id);
  return Status::Ok();
}

// All inputs are read: compute.
Status Sim::ComputeDone(TaskId id) {
  Attempt& a = attempts_.at(id);
  const SimJob& job = jobs_[a.job];
  Result<double> secs =
      Synthetic(job) ? Result<double>(job.spec.task_seconds)
                     : o_.costs.Seconds(job.spec.app, job.dag->dag().stages[a.vertex.stage].name,
                                        a.bytes_read);
  if (!secs.ok()) return secs.status();
  AddTimer(Clock() + *secs, TimerKind::kComputeDone, a.job, id, &a.timer);
  return Status::Ok();
}

Status Sim::KillWorker(TaskId id) {
  auto it = attempts_.find(id);
  if (it == attempts_.end()) return Internal("kill of task " + std::to_string(id) + " not running");
  Attempt& a = it->second;
  JobResult& r = jobs_[a.job].result;
  for (size_t i = comms_.size(); i-- > 0;) {
    if (flows_[i].task != id) continue;
    double left = comms_[i]->get_remaining();
    const Flow& f = flows_[i];
    int64_t read = std::max<int64_t>(0, f.bytes - static_cast<int64_t>(std::llround(left)));
    int64_t m2o = f.bytes > 0
                      ? std::llround(static_cast<double>(f.many_to_one) *
                                     static_cast<double>(read) / static_cast<double>(f.bytes))
                      : 0;
    Account(r, f.level, read, m2o, a.many_to_one_floor);
    comms_[i]->cancel();
    comms_[i] = comms_.back();
    comms_.pop_back();
    flows_[i] = flows_.back();
    flows_.pop_back();
  }
  double ran = Clock() - a.started;
  r.slot_seconds += ran;
  r.max_task_s = std::max(r.max_task_s, ran);
  ++r.preempted;
  --running_[a.job];
  attempts_.erase(it);
  return Handle(scheduler::TaskKilled{id});
}

Status Sim::OnFlowDone(size_t index) {
  Flow f = flows_[index];
  comms_[index] = comms_.back();
  comms_.pop_back();
  flows_[index] = flows_.back();
  flows_.pop_back();
  Attempt& a = attempts_.at(f.task);
  Account(jobs_[a.job].result, f.level, f.bytes, f.many_to_one, a.many_to_one_floor);
  if (--a.pending_flows == 0) return ComputeDone(f.task);
  return Status::Ok();
}

Status Sim::OnTimer(const TimerEvent& t) {
  switch (t.kind) {
    case TimerKind::kArrival: {
      const SimJob& job = jobs_[t.job];
      scheduler::JobSubmitted e{t.job + 1, job.root, {}};
      e.attributes.submitted = ToTime(job.result.submit_s);
      e.attributes.root_in_cluster = !Synthetic(job);
      int tasks = job.dag->dag().TotalVertices();
      if (o_.profiles != SimOptions::Profiles::kNone) e.attributes.expected_tasks = tasks;
      if (o_.profiles == SimOptions::Profiles::kAccurate && Synthetic(job)) {
        e.attributes.slot_time = ToTime(tasks * job.spec.task_seconds);
      }
      return Handle(e);
    }
    case TimerKind::kRootReady:
      return SubmitReady(t.job);
    case TimerKind::kComputeDone:
      break;
  }
  auto it = attempts_.find(t.task);
  if (it == attempts_.end() || it->second.timer != t.seq) return Status::Ok();  // killed
  Attempt a = it->second;
  attempts_.erase(it);
  SimJob& job = jobs_[a.job];
  double ran = Clock() - a.started;
  job.result.slot_seconds += ran;
  job.result.max_task_s = std::max(job.result.max_task_s, ran);
  --running_[a.job];
  COPSE_RETURN_IF_ERROR(Handle(scheduler::TaskCompleted{t.task}));
  job.dag->Completed(rootjob::RunId{a.vertex, 1}, 0, a.computer,
                     job.dag->OutputBytes(a.vertex, a.bytes_read), {}, ToTime(Clock()));
  if (!job.dag->Done()) return SubmitReady(a.job);
  job.done = true;
  job.result.finish_s = Clock();
  ++done_jobs_;
  return Handle(scheduler::JobFinished{a.job + 1});
}

Status Sim::Apply(const Decision& d, Timestamp) {
  switch (d.kind) {
    case Decision::Kind::kAdmitJob: {
      int j = static_cast<int>(d.job) - 1;
      if (!Synthetic(jobs_[j])) return Status::Ok();  // starts with its root task
      jobs_[j].result.start_s = Clock();
      return SubmitReady(j);
    }
    case Decision::Kind::kStartTask:
      if (d.root) {
        int j = static_cast<int>(d.job) - 1;
        COPSE_RETURN_IF_ERROR(Handle(scheduler::TaskStarted{d.task}));
        jobs_[j].result.start_s = Clock();
        AddTimer(Clock() + o_.costs.root_startup_s, TimerKind::kRootReady, j, d.task);
        return Status::Ok();
      }
      return StartWorker(d.task, d.computer);
    case Decision::Kind::kKillTask:
      if (d.root) return Internal("the scheduler killed a root task: " + scheduler::ToString(d));
      return KillWorker(d.task);
  }
  return Status::Ok();
}

Status Sim::Run() {
  for (size_t j = 0; j < jobs_.size(); ++j) {
    AddTimer(jobs_[j].result.submit_s, TimerKind::kArrival, static_cast<int>(j), 0);
  }
  const double inf = std::numeric_limits<double>::infinity();
  while (done_jobs_ < static_cast<int>(jobs_.size())) {
    double now = Clock();
    double next = timers_.empty() ? inf : timers_.top().at;
    if (std::optional<Timestamp> w = loop_.NextWakeup()) {
      next = std::min(next, std::max(ToSeconds(*w), now));
    }
    if (next > o_.max_time_s) next = inf;  // a wakeup past the horizon never comes
    if (comms_.empty() && next == inf) {
      return DeadlineExceeded("simulation stuck at " + std::to_string(now) + " s: " + Progress());
    }
    if (now > o_.max_time_s) {
      return DeadlineExceeded("simulation passed " + std::to_string(o_.max_time_s) + " s at " +
                              std::to_string(now) + " s: " + Progress());
    }
    ssize_t index = -1;
    if (!comms_.empty()) {
      index = sg4::Comm::wait_any_for(comms_, next == inf ? -1.0 : std::max(0.0, next - now));
    } else if (next > now) {
      sg4::this_actor::sleep_until(next);
    }
    SampleUntil(Clock());
    if (index >= 0) {
      COPSE_RETURN_IF_ERROR(OnFlowDone(static_cast<size_t>(index)));
    } else {
      while (!timers_.empty() && timers_.top().at <= Clock() + kEpsilon) {
        TimerEvent t = timers_.top();
        timers_.pop();
        COPSE_RETURN_IF_ERROR(OnTimer(t));
      }
      COPSE_RETURN_IF_ERROR(loop_.Wakeup(ToTime(Clock())).status());
    }
    COPSE_RETURN_IF_ERROR(loop_.Run(ToTime(Clock())).status());
  }
  SampleUntil(Clock());
  return Status::Ok();
}

RunResult Sim::TakeResult() {
  RunResult r;
  r.policy = o_.scheduler.policy;
  r.seed = o_.seed;
  r.slots = o_.config.TotalSlots();
  for (SimJob& j : jobs_) {
    r.makespan_s = std::max(r.makespan_s, j.result.finish_s);
    r.jobs.push_back(j.result);
  }
  r.utilisation = std::move(utilisation_);
  return r;
}

// Places every instance's input files, in workload order, from one generator.
Result<std::vector<SimJob>> PlaceJobs(const SimOptions& o,
                                      const std::vector<apps::InstanceSpec>& workload) {
  std::vector<dfs::PlacementComputer> live;
  std::map<std::string, int> index;
  for (size_t c = 0; c < o.config.computers.size(); ++c) {
    live.push_back({o.config.computers[c].name, o.config.computers[c].rack});
    index[o.config.computers[c].name] = static_cast<int>(c);
  }
  std::mt19937_64 rng(o.seed);
  std::vector<SimJob> jobs;
  for (size_t j = 0; j < workload.size(); ++j) {
    const apps::InstanceSpec& spec = workload[j];
    Result<rootjob::JobDag> dag = apps::BuildInstanceDag(spec, o.scale);
    if (!dag.ok()) return dag.status();
    std::vector<std::vector<std::string>> first;
    std::vector<std::vector<std::vector<int>>> replicas;
    for (size_t f = 0; f < dag->files.size(); ++f) {
      std::string mode_text =
          apps::FitPlacement(apps::FilePlacement(spec, *dag, static_cast<int>(f)), o.config);
      Result<dfs::PlacementMode> mode = dfs::ParsePlacementMode(mode_text);
      if (!mode.ok()) return mode.status().WithContext("instance " + spec.name);
      dfs::PlacementRequest req{*mode, "", o.config.replication, dag->files[f].partitions, {}};
      if (mode->kind == dfs::PlacementMode::Kind::kColocate) req.colocate_sets = first;
      auto sets = dfs::PlaceFile(live, req, rng);
      if (!sets.ok()) return sets.status().WithContext("instance " + spec.name);
      if (f == 0) first = *sets;
      std::vector<std::vector<int>> parts;
      for (const auto& set : *sets) {
        std::vector<int> ids;
        for (const std::string& name : set) ids.push_back(index.at(name));
        parts.push_back(ids);
      }
      replicas.push_back(std::move(parts));
    }
    SimJob job;
    job.spec = spec;
    job.root = static_cast<TaskId>(j + 1) * kIdsPerJob;
    int off = 0;
    for (const rootjob::Stage& s : dag->stages) {
      job.stage_offset.push_back(off);
      off += s.vertices;
    }
    job.dag = std::make_unique<rootjob::JobManager>(std::move(dag).value(), std::move(replicas));
    job.result.name = spec.name;
    job.result.submit_s = spec.submit_s;
    job.result.vertices = job.dag->dag().TotalVertices();
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace

Result<RunResult> RunSimulation(const SimOptions& options,
                                const std::vector<apps::InstanceSpec>& workload) {
  if (workload.empty()) return InvalidArgument("simulation: empty workload");
  COPSE_ASSIGN_OR_RETURN(std::vector<SimJob> jobs, PlaceJobs(options, workload));
  COPSE_ASSIGN_OR_RETURN(scheduler::Topology topology,
                         scheduler::TopologyFromConfig(options.config));
  scheduler::SchedulerOptions so;
  so.policy = options.scheduler;
  so.max_running_jobs = options.max_running_jobs;
  so.seed = options.seed;
  so.flow_solver = options.flow_solver;
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<scheduler::Scheduler> sched,
                         scheduler::Scheduler::Create(std::move(topology), so));
  sg4::Engine& engine = CreateEngine();
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<SimNetwork> net,
                         SimNetwork::Build(NetworkSpecFromConfig(options.config)));
  Sim sim(options, *net, *sched, std::move(jobs));
  Status status;
  sg4::Actor::create("master", net->controller(), [&] { status = sim.Run(); });
  engine.run();
  if (!status.ok()) return status;
  return sim.TakeResult();
}

}  // namespace copse::sim

// Event → decisions time of every scheduling policy under a steady,
// realistic load, and the split of a Quincy round into graph update, solve
// and placement extraction.
//
// Load: a cluster of C computers (one slot each, racks of about 31 as in the
// paper's 243-computer, 8-rack cluster) with K = 10 admitted jobs, each with
// its root task in the cluster and 2C/K worker tasks outstanding, so the
// cluster is full and about C tasks wait. Every task reads one input of
// 0.1–2 GB with three replicas (one in one rack, two in another, as HDFS
// places them), so it prefers three computers and two racks. One iteration
// is one "salient event" as a master sees it: a random running worker task
// completes and its job submits a replacement (two events), and the
// scheduling loop (scheduler/scheduling_loop.h, as in the master) runs
// rounds until the policy decides nothing more, the driver confirming every
// start and kill it was asked for as it comes.
// Simulated time advances 10 s / C per iteration (a task takes about 10 s).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "scheduler/policy_factory.h"
#include "scheduler/quincy_policy.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduling_loop.h"

namespace copse::scheduler {
namespace {

constexpr int kJobs = 10;
constexpr int64_t kGB = 1'000'000'000;

std::string Name(char prefix, int i) {
  std::string s(1, prefix);
  s += std::to_string(i);
  return s;
}

Topology PaperLikeTopology(int computers) {
  const int racks = std::max(1, (computers + 30) / 31);
  Topology t;
  for (int r = 0; r < racks; ++r) t.racks.push_back(Name('r', r));
  for (int c = 0; c < computers; ++c) {
    t.computers.push_back({Name('c', c), c * racks / computers, 1});
  }
  return t;
}

class Load final : public DecisionSink {
 public:
  Load(const std::string& policy, int computers, const Clock* stats_clock)
      : topo_(PaperLikeTopology(computers)), rng_(42), step_(10'000'000 / computers) {
    SchedulerOptions o;
    o.policy.policy = policy;
    o.max_running_jobs = kJobs;
    o.stats_clock = stats_clock;
    auto s = Scheduler::Create(topo_, o);
    if (!s.ok()) std::abort();
    sched_ = std::move(s).value();
    loop_ = std::make_unique<SchedulingLoop>(*sched_, *this);
    for (JobId j = 1; j <= kJobs; ++j) {
      JobSubmitted e;
      e.job = j;
      e.root_task = 1'000'000 + j;
      e.attributes.submitted = now_;
      Check(loop_->Handle(e, now_));
    }
    Decide();  // roots
    const int per_job = 2 * computers / kJobs;
    for (JobId j = 1; j <= kJobs; ++j) {
      for (int i = 0; i < per_job; ++i) Submit(j);
    }
    for (int i = 0; i < 20; ++i) {  // settle: the first rounds place the backlog
      now_ += Duration{1'000'000};
      Check(loop_->Handle(Timer{}, now_));
      Decide();
    }
  }

  // One salient event and the decisions that follow. Returns the number of
  // decisions.
  size_t Step() {
    now_ += Duration{step_};
    if (running_.empty()) return 0;
    auto it = running_.begin();
    std::advance(it, static_cast<long>(rng_() % running_.size()));
    TaskId done = *it;
    running_.erase(it);
    JobId job = sched_->state().task(done).job;
    Check(loop_->Handle(TaskCompleted{done}, now_));
    Submit(job);
    return Decide();
  }

  Scheduler& scheduler() { return *sched_; }

  // DecisionSink: the workers confirm every start and kill at once.
  Status Apply(const Decision& d, Timestamp at) override {
    ++decided_;
    if (d.kind == Decision::Kind::kStartTask) {
      if (!d.root) running_.insert(d.task);
      return loop_->Handle(TaskStarted{d.task}, at);
    }
    if (d.kind == Decision::Kind::kKillTask) {
      running_.erase(d.task);
      return loop_->Handle(TaskKilled{d.task}, at);
    }
    return Status::Ok();
  }

 private:
  static void Check(const Status& s) {
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::abort();
    }
  }

  // Rounds until the policy decides nothing more; returns the decisions.
  size_t Decide() {
    decided_ = 0;
    Check(loop_->Run(now_).status());
    return decided_;
  }

  void Submit(JobId job) {
    const int c = topo_.num_computers();
    const int racks = topo_.num_racks();
    const int64_t bytes = kGB / 10 + static_cast<int64_t>(rng_() % (19 * kGB / 10));
    ComputerId a = static_cast<ComputerId>(rng_() % c);
    ComputerId b = static_cast<ComputerId>(rng_() % c);
    ComputerId b2 = static_cast<ComputerId>(rng_() % c);
    TaskLocality l;
    l.worst = {bytes, bytes};
    for (ComputerId x : {a, b, b2}) {
      bool seen = false;
      for (const auto& p : l.computers) seen |= p.computer == x;
      if (!seen) l.computers.push_back({x, {0, 0}});
    }
    for (ComputerId x : {a, b}) {
      RackId r = topo_.computers[x].rack;
      bool seen = false;
      for (const auto& p : l.racks) seen |= p.rack == r;
      if (!seen && racks > 1) l.racks.push_back({r, {bytes, 0}});
    }
    Check(loop_->Handle(TaskSubmitted{next_task_++, job, l}, now_));
  }

  Topology topo_;
  std::mt19937_64 rng_;
  int64_t step_;
  std::unique_ptr<Scheduler> sched_;
  std::unique_ptr<SchedulingLoop> loop_;
  size_t decided_ = 0;
  Timestamp now_{0};
  TaskId next_task_ = 1;
  std::set<TaskId> running_;
};

void BM_EventToDecisions(benchmark::State& state, std::string policy) {
  SteadyClock clock;
  const int computers = static_cast<int>(state.range(0));
  Load load(policy, computers, &clock);
  auto* quincy = dynamic_cast<QuincyPolicy*>(&load.scheduler().policy());
  size_t decisions = 0;
  Duration update{0}, solve{0}, extract{0};
  uint64_t rounds = 0;
  for (auto _ : state) {
    uint64_t before = quincy != nullptr ? quincy->stats().rounds : 0;
    decisions += load.Step();
    if (quincy != nullptr && quincy->stats().rounds != before) {
      const QuincyRoundStats& s = quincy->stats();
      update += s.update;
      solve += s.solve;
      extract += s.extract;
      ++rounds;
    }
  }
  state.counters["decisions/event"] =
      benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kAvgIterations);
  if (quincy != nullptr && rounds > 0) {
    const double n = static_cast<double>(rounds);
    const double u = ToSeconds(update) * 1e6 / n, so = ToSeconds(solve) * 1e6 / n,
                 e = ToSeconds(extract) * 1e6 / n;
    state.counters["update_us"] = u;
    state.counters["solve_us"] = so;
    state.counters["extract_us"] = e;
    state.counters["overhead_frac"] = (u + e) / (u + so + e);
    state.counters["arcs"] = quincy->stats().arcs;
  }
}

void RegisterAll() {
  for (const std::string& p : PolicyNames()) {
    benchmark::RegisterBenchmark(("EventToDecisions/" + p).c_str(), BM_EventToDecisions, p)
        ->Arg(243)
        ->Arg(2500)
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace copse::scheduler

int main(int argc, char** argv) {
  copse::scheduler::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

#include "master/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <array>
#include <mutex>

namespace copse::master {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

// Round and solve times: 100 µs to 10 s (a round at the paper's scale takes
// tens of milliseconds; a cold solve of a large graph, seconds).
const Histogram::BucketBoundaries& RoundBuckets() {
  static const Histogram::BucketBoundaries kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return kBuckets;
}

double Seconds(Duration d) { return static_cast<double>(d.count()) / 1e6; }

constexpr std::array<const char*, 5> kOutcomes = {"completed", "failed", "preempted", "lost",
                                                  "withdrawn"};
constexpr std::array<const char*, 3> kComputerStates = {"live", "dead", "unknown"};
constexpr std::array<const char*, 5> kJobStates = {"queued", "running", "succeeded", "failed",
                                                   "killed"};

}  // namespace

struct MasterMetrics::Impl {
  prometheus::Registry registry;

  Family<Gauge>& computers =
      prometheus::BuildGauge()
          .Name("copse_computers")
          .Help("Computers of the config, by the master's view of their state")
          .Register(registry);
  Gauge& slots = prometheus::BuildGauge()
                     .Name("copse_slots")
                     .Help("Task slots of every computer of the config")
                     .Register(registry)
                     .Add({});
  Gauge& busy_slots = prometheus::BuildGauge()
                          .Name("copse_busy_slots")
                          .Help("Task slots taken by running vertices and roots")
                          .Register(registry)
                          .Add({});
  Family<Gauge>& jobs = prometheus::BuildGauge()
                            .Name("copse_jobs")
                            .Help("Jobs in the master's job table, by state")
                            .Register(registry);
  Family<Counter>& vertex_runs = prometheus::BuildCounter()
                                     .Name("copse_vertex_runs_total")
                                     .Help("Vertex runs that ended, by outcome")
                                     .Register(registry);
  Counter& rounds = prometheus::BuildCounter()
                        .Name("copse_scheduler_rounds_total")
                        .Help("Scheduling rounds run")
                        .Register(registry)
                        .Add({});
  Counter& decisions = prometheus::BuildCounter()
                           .Name("copse_scheduler_decisions_total")
                           .Help("Decisions (task starts and kills) of scheduling rounds")
                           .Register(registry)
                           .Add({});
  Histogram& round_seconds = prometheus::BuildHistogram()
                                 .Name("copse_scheduler_round_duration_seconds")
                                 .Help("Wall time of a scheduling round")
                                 .Register(registry)
                                 .Add({}, RoundBuckets());
  Histogram& solve_seconds =
      prometheus::BuildHistogram()
          .Name("copse_scheduler_solve_duration_seconds")
          .Help("Wall time of a round's min-cost flow solve (Quincy policies)")
          .Register(registry)
          .Add({}, RoundBuckets());
  Gauge& dfs_files = prometheus::BuildGauge()
                         .Name("copse_dfs_files")
                         .Help("Files in the DFS namespace, scratch files included")
                         .Register(registry)
                         .Add({});
  Gauge& dfs_blocks = prometheus::BuildGauge()
                          .Name("copse_dfs_blocks")
                          .Help("Blocks in the DFS namespace")
                          .Register(registry)
                          .Add({});
  Gauge& dfs_under =
      prometheus::BuildGauge()
          .Name("copse_dfs_under_replicated_blocks")
          .Help("Committed blocks with fewer live replicas than their file's replication")
          .Register(registry)
          .Add({});
  Gauge& dfs_stored = prometheus::BuildGauge()
                          .Name("copse_dfs_stored_bytes")
                          .Help("Bytes of committed block replicas on every computer")
                          .Register(registry)
                          .Add({});
  Family<Counter>& http = prometheus::BuildCounter()
                              .Name("copse_http_requests_total")
                              .Help("Requests the HTTP API answered, by status code")
                              .Register(registry);
  // The HTTP family's children by status; Family::Add looks labels up under
  // a lock of its own, this keeps the common codes a pointer away.
  std::mutex http_mu;
  std::map<int, Counter*> http_by_code;  // guarded by http_mu
};

MasterMetrics::MasterMetrics() : impl_(std::make_unique<Impl>()) {
  // Every fixed label value is present from the start, at 0, so that a rate
  // over it exists before the first event.
  for (const char* o : kOutcomes) impl_->vertex_runs.Add({{"outcome", o}});
  impl_->vertex_runs.Add({{"outcome", "other"}});
  for (const char* s : kComputerStates) impl_->computers.Add({{"state", s}});
  for (const char* s : kJobStates) impl_->jobs.Add({{"state", s}});
}

MasterMetrics::~MasterMetrics() = default;

void MasterMetrics::SchedulerRound(Duration wall, size_t decisions, std::optional<Duration> solve) {
  impl_->rounds.Increment();
  impl_->decisions.Increment(static_cast<double>(decisions));
  impl_->round_seconds.Observe(Seconds(wall));
  if (solve) impl_->solve_seconds.Observe(Seconds(*solve));
}

void MasterMetrics::VertexRunEnded(std::string_view outcome) {
  const char* label = "other";
  for (const char* o : kOutcomes) {
    if (outcome == o) label = o;
  }
  impl_->vertex_runs.Add({{"outcome", label}}).Increment();
}

void MasterMetrics::HttpResponse(int status) {
  // Codes outside 100-599 are not HTTP's; one label value holds them all.
  if (status < 100 || status > 599) status = 0;
  std::lock_guard<std::mutex> lock(impl_->http_mu);
  Counter*& c = impl_->http_by_code[status];
  if (c == nullptr) {
    c = &impl_->http.Add({{"code", status == 0 ? "other" : std::to_string(status)}});
  }
  c->Increment();
}

void MasterMetrics::SetState(const State& s) {
  for (const char* state : kComputerStates) {
    auto it = s.computers.find(state);
    impl_->computers.Add({{"state", state}}).Set(it == s.computers.end() ? 0 : it->second);
  }
  impl_->slots.Set(s.slots);
  impl_->busy_slots.Set(s.busy_slots);
  for (const char* state : kJobStates) {
    auto it = s.jobs.find(state);
    impl_->jobs.Add({{"state", state}}).Set(it == s.jobs.end() ? 0 : it->second);
  }
  impl_->dfs_files.Set(static_cast<double>(s.dfs_files));
  impl_->dfs_blocks.Set(static_cast<double>(s.dfs_blocks));
  impl_->dfs_under.Set(static_cast<double>(s.dfs_under_replicated_blocks));
  impl_->dfs_stored.Set(static_cast<double>(s.dfs_stored_bytes));
}

std::string MasterMetrics::Serialize() const {
  return prometheus::TextSerializer().Serialize(impl_->registry.Collect());
}

}  // namespace copse::master

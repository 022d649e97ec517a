#include "worker/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>

namespace copse::worker {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

constexpr std::array<ExitKind, 4> kExitKinds = {ExitKind::kCompleted, ExitKind::kFailed,
                                                ExitKind::kKilled, ExitKind::kStartFailed};

const char* KindLabel(bool root) { return root ? "root" : "vertex"; }

// ExitKindName as a label value: "start failed" -> "start_failed".
std::string OutcomeLabel(ExitKind k) {
  std::string label = ExitKindName(k);
  std::replace(label.begin(), label.end(), ' ', '_');
  return label;
}

// Launch latencies: 1 ms to 30 s (a program fetched from the program store
// on its first run takes longest).
const Histogram::BucketBoundaries& LaunchBuckets() {
  static const Histogram::BucketBoundaries kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                       0.25,  0.5,    1,     2.5,  5,     10,   30};
  return kBuckets;
}

}  // namespace

struct WorkerMetrics::Impl {
  explicit Impl(std::function<Disk()> d) : disk(std::move(d)) {}

  std::function<Disk()> disk;
  prometheus::Registry registry;

  Gauge& slots = prometheus::BuildGauge()
                     .Name("copse_worker_slots")
                     .Help("Task slots of this computer")
                     .Register(registry)
                     .Add({});
  Family<Gauge>& running =
      prometheus::BuildGauge()
          .Name("copse_worker_tasks")
          .Help("Tasks this worker holds now (starting or running), by kind (root, vertex)")
          .Register(registry);
  Family<Counter>& launches = prometheus::BuildCounter()
                                  .Name("copse_worker_task_launches_total")
                                  .Help("Launch requests this worker took, by kind")
                                  .Register(registry);
  Family<Counter>& runs = prometheus::BuildCounter()
                              .Name("copse_worker_task_runs_total")
                              .Help("Runs that ended here, by kind and outcome")
                              .Register(registry);
  Histogram& launch_seconds =
      prometheus::BuildHistogram()
          .Name("copse_worker_task_launch_duration_seconds")
          .Help(
              "From a launch request's arrival to its process running (programs found, "
              "working directory made, process spawned)")
          .Register(registry)
          .Add({}, LaunchBuckets());
  Family<Counter>& served = prometheus::BuildCounter()
                                .Name("copse_worker_served_bytes_total")
                                .Help(
                                    "Block bytes served to readers, by where the reader is: this "
                                    "computer (local), its rack (rack), elsewhere (remote)")
                                .Register(registry);
  std::array<Counter*, 3> served_by{};
  Gauge& capacity = prometheus::BuildGauge()
                        .Name("copse_worker_disk_capacity_bytes")
                        .Help("Size of the file system holding the data dir")
                        .Register(registry)
                        .Add({});
  Gauge& free = prometheus::BuildGauge()
                    .Name("copse_worker_disk_free_bytes")
                    .Help("Free bytes for the worker on the file system holding the data dir")
                    .Register(registry)
                    .Add({});
  Gauge& blocks = prometheus::BuildGauge()
                      .Name("copse_worker_block_bytes")
                      .Help("Bytes in the block store's files")
                      .Register(registry)
                      .Add({});
};

WorkerMetrics::WorkerMetrics(int slots, std::function<Disk()> disk)
    : impl_(std::make_unique<Impl>(std::move(disk))) {
  impl_->slots.Set(slots);
  for (bool root : {false, true}) {
    impl_->running.Add({{"kind", KindLabel(root)}});
    impl_->launches.Add({{"kind", KindLabel(root)}});
    for (ExitKind k : kExitKinds) {
      impl_->runs.Add({{"kind", KindLabel(root)}, {"outcome", OutcomeLabel(k)}});
    }
  }
  impl_->served_by = {&impl_->served.Add({{"locality", "local"}}),
                      &impl_->served.Add({{"locality", "rack"}}),
                      &impl_->served.Add({{"locality", "remote"}})};
}

WorkerMetrics::~WorkerMetrics() = default;

void WorkerMetrics::TaskLaunched(bool root) {
  impl_->launches.Add({{"kind", KindLabel(root)}}).Increment();
}

void WorkerMetrics::TaskStarted(Duration latency) {
  impl_->launch_seconds.Observe(static_cast<double>(latency.count()) / 1e6);
}

void WorkerMetrics::TaskEnded(bool root, ExitKind kind) {
  impl_->runs.Add({{"kind", KindLabel(root)}, {"outcome", OutcomeLabel(kind)}}).Increment();
}

void WorkerMetrics::SetRunning(int roots, int vertices) {
  impl_->running.Add({{"kind", "root"}}).Set(roots);
  impl_->running.Add({{"kind", "vertex"}}).Set(vertices);
}

void WorkerMetrics::Served(Locality where, uint64_t bytes) {
  impl_->served_by[static_cast<size_t>(where)]->Increment(static_cast<double>(bytes));
}

std::string WorkerMetrics::Serialize() const {
  if (impl_->disk) {
    Disk d = impl_->disk();
    impl_->capacity.Set(static_cast<double>(d.capacity_bytes));
    impl_->free.Set(static_cast<double>(d.free_bytes));
    impl_->blocks.Set(static_cast<double>(d.block_bytes));
  }
  return prometheus::TextSerializer().Serialize(impl_->registry.Collect());
}

}  // namespace copse::worker

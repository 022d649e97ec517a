#include "worker/metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace copse::worker {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(WorkerMetricsTest, TasksByKindAndOutcome) {
  WorkerMetrics m(3, nullptr);
  m.TaskLaunched(false);
  m.TaskLaunched(false);
  m.TaskLaunched(true);
  m.SetRunning(1, 2);
  m.TaskStarted(Duration(30'000));  // 30 ms
  m.TaskEnded(false, ExitKind::kCompleted);
  m.TaskEnded(false, ExitKind::kStartFailed);
  std::string t = m.Serialize();
  EXPECT_TRUE(Has(t, "copse_worker_slots 3")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_task_launches_total{kind=\"vertex\"} 2")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_task_launches_total{kind=\"root\"} 1")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_tasks{kind=\"root\"} 1")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_tasks{kind=\"vertex\"} 2")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_task_runs_total{kind=\"vertex\",outcome=\"completed\"} 1")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_task_runs_total{kind=\"vertex\",outcome=\"start_failed\"} 1"))
      << t;
  EXPECT_TRUE(Has(t, "copse_worker_task_runs_total{kind=\"root\",outcome=\"killed\"} 0")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_task_launch_duration_seconds_bucket{le=\"0.025\"} 0")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_task_launch_duration_seconds_bucket{le=\"0.05\"} 1")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_task_launch_duration_seconds_count 1")) << t;
}

TEST(WorkerMetricsTest, ServedBytesByLocalityAndDiskReadAtEachScrape) {
  int scrapes = 0;
  WorkerMetrics m(1, [&scrapes] {
    ++scrapes;
    WorkerMetrics::Disk d;
    d.capacity_bytes = 1000;
    d.free_bytes = 400 - static_cast<uint64_t>(scrapes);
    d.block_bytes = 77;
    return d;
  });
  m.Served(WorkerMetrics::Locality::kLocal, 10);
  m.Served(WorkerMetrics::Locality::kRemote, 5);
  m.Served(WorkerMetrics::Locality::kRemote, 5);
  std::string t = m.Serialize();
  EXPECT_TRUE(Has(t, "copse_worker_served_bytes_total{locality=\"local\"} 10")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_served_bytes_total{locality=\"rack\"} 0")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_served_bytes_total{locality=\"remote\"} 10")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_disk_capacity_bytes 1000")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_disk_free_bytes 399")) << t;
  EXPECT_TRUE(Has(t, "copse_worker_block_bytes 77")) << t;
  t = m.Serialize();
  EXPECT_TRUE(Has(t, "copse_worker_disk_free_bytes 398")) << t;
}

}  // namespace
}  // namespace copse::worker

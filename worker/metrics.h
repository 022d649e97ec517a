// WorkerMetrics: a worker's Prometheus metrics, served at /metrics on the
// computer's metrics_port in the text exposition format (docs/deploy.md
// "Metrics" lists them). Definitions live here alone; prometheus-cpp is
// included only by metrics.cc.
//
// The task manager counts launches, starts (with the launch latency) and
// ends, and sets how many tasks run; the block servers count the bytes they
// serve, by where the reader is relative to this computer: on it (local), on
// another computer of its rack (rack), anywhere else (remote). The disk
// gauges are read when a scrape asks (`disk`, on the HTTP server's thread).
// Thread-safety: thread-safe (prometheus-cpp's metrics are atomic or locked).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/tasks.h"

namespace copse::worker {

class WorkerMetrics {
 public:
  // The file system holding the data dir, and the block store's files.
  struct Disk {
    uint64_t capacity_bytes = 0;
    uint64_t free_bytes = 0;  // for an unprivileged writer
    uint64_t block_bytes = 0;
  };
  // `slots`: the computer's; `disk` is called for each scrape.
  WorkerMetrics(int slots, std::function<Disk()> disk);
  ~WorkerMetrics();
  WorkerMetrics(const WorkerMetrics&) = delete;
  WorkerMetrics& operator=(const WorkerMetrics&) = delete;

  // ---- the task manager
  void TaskLaunched(bool root);
  // The run's process runs, `latency` after its launch request arrived.
  void TaskStarted(Duration latency);
  void TaskEnded(bool root, ExitKind kind);
  void SetRunning(int roots, int vertices);

  // ---- the block servers
  enum class Locality { kLocal, kRack, kRemote };
  void Served(Locality where, uint64_t bytes);

  // Every metric in the text exposition format (version 0.0.4), the disk
  // gauges read now.
  std::string Serialize() const;
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::worker

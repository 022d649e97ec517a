// Api: the master's read-only HTTP API under /api/v1 and its dashboard at /
// (docs/design.md §13; every field is documented in docs/api.md).
//
// Requests never run on the master's event loop and never change its state.
// Most are answered from a snapshot: every `refresh` the loop copies what the
// API shows — computers, jobs' status documents, the scheduler's description
// and its recent rounds — into an immutable Snapshot that request threads
// share. Its cost does not grow with the jobs' vertices: a job that has not
// changed since the last snapshot keeps its status document (only its
// elapsed time moves). A job's detail (its vertex table, DAG and run
// timeline, in proportion to its vertices and runs) is built only when a
// request asks for it, on the loop, and kept for later requests until the job
// or its tasks change, but at least for `refresh`, like the snapshot: a
// running job changes all the time, and rebuilding its detail for every
// request would cost the loop a walk of its vertices per request (at most
// kDetailsKept jobs). A few requests need the
// live state and are too large or too rare to copy: a task's explanation,
// the current flow graph and the DFS listing. Those, and a detail not built
// yet, post one bounded piece of work to the loop (one task; one
// aggregation; one page of files; one job) and wait for it at most
// `loop_wait`, answering 503 when the loop is busy beyond it. The DFS
// listing's counts of blocks per computer and of under-replicated blocks
// walk every block, so they are refreshed every `holdings_refresh`, not per
// request.
//
// The dashboard is static files from `dashboard_dir` and JavaScript
// libraries from Debian packages (node-d3, node-dagre-d3-renderer,
// libjs-chart.js), served from where those packages install them; nothing is
// fetched from the internet.
// /metrics (master/metrics.h) sets the gauges from the live state on the
// loop, as one bounded piece of work (counts of computers, jobs and DFS
// entries; the under-replicated blocks and stored bytes from the walk kept
// for `holdings_refresh`), then serializes on the request's thread.
// Thread-safety: Start, Stop and the refresh timer on the loop's thread;
// request handlers on the HTTP server's threads read only the snapshot, the
// kept details and the clock (a SteadyClock in the master; thread-safe).
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/http/http_server.h"
#include "copse/status.h"

namespace copse::master {

using http::HttpRequest;
using http::HttpResponse;
using http::HttpServer;
using http::JsonError;

class ClusterManager;
class MasterMetrics;
class DfsService;
class JobService;
class SchedulingRecord;
class SchedulingService;

// One vertex as the API's vertex table shows it: its latest run, or where
// it stands when it has none.
struct VertexRow {
  int stage = 0;  // index into the job's stages
  int index = 0;
  uint32_t version = 0;
  uint64_t task = 0;  // 0: never submitted
  uint32_t attempt = 0;
  std::string state;  // pending, submitted, launched, running, completed, failed, ...
  std::string computer;
  std::string reason;
  int64_t launched_ms = -1, ended_ms = -1;
  int64_t read_local = 0, read_rack = 0, read_core = 0;
  int runs = 0;  // runs of this vertex so far, every version
};

// What the snapshot keeps of a job.
struct JobView {
  uint64_t id = 0;
  uint64_t version = 0;        // JobService::Job::version it was built from
  uint64_t tasks_version = 0;  // SchedulingService::TasksVersion of the job then
  bool live = false;           // queued or running
  nlohmann::json status;
};

// The part of a job's view in proportion to its vertices and runs.
struct JobDetail {
  uint64_t version = 0, tasks_version = 0;  // of the job it was built from
  Timestamp built_at{0};                    // on the master's clock
  std::vector<std::string> stage_names;
  std::vector<VertexRow> vertices;  // by stage, then index
  nlohmann::json dag;
  nlohmann::json timeline;  // every run, in launch order
};

struct ApiSnapshot {
  int64_t taken_ms = 0;  // wall clock
  nlohmann::json cluster;
  nlohmann::json jobs;  // the job list
  std::map<uint64_t, std::shared_ptr<const JobView>> job;
  nlohmann::json scheduler;
};

class Api {
 public:
  struct Options {
    std::chrono::milliseconds refresh{500};
    std::chrono::milliseconds loop_wait{2000};
    std::chrono::milliseconds holdings_refresh{2000};  // per-computer block counts
    std::filesystem::path dashboard_dir;
    std::string token;  // required of clients when non-empty
    // Served at /metrics, its gauges set on the loop for each scrape, and
    // every response counted; null: no /metrics.
    MasterMetrics* metrics = nullptr;
  };

  // REQUIRES: every argument outlives the Api.
  Api(asio::io_context& io, const ClusterConfig& config, const Clock& clock, const Clock& wall,
      ClusterManager& cluster, DfsService& dfs, JobService& jobs, SchedulingService& scheduling,
      const SchedulingRecord& record, Options options);
  ~Api();

  // Takes the first snapshot and starts serving on [http] host and port.
  Status Start();
  void Stop();
  uint16_t port() const { return server_ ? server_->port() : 0; }

  // The snapshot requests read now (tests).
  std::shared_ptr<const ApiSnapshot> snapshot() const;
  // Builds and publishes a snapshot now (the refresh timer does it too).
  void Refresh();

 private:
  void Routes();
  void ArmRefresh();
  nlohmann::json BuildCluster();
  // The detail of `view`'s job: kept, or built on the loop; null with
  // `error` set when the job is gone or the loop is busy.
  std::shared_ptr<const JobDetail> Detail(const JobView& view, HttpResponse* error);
  // Runs `f` on the loop and waits for it at most loop_wait.
  HttpResponse OnLoop(std::function<HttpResponse()> f);

  std::shared_ptr<const JobView> PlainJob(const HttpRequest& r, int64_t* taken_ms,
                                          HttpResponse* error) const;
  HttpResponse Cluster(const HttpRequest& r);
  HttpResponse Jobs(const HttpRequest& r);
  HttpResponse JobDoc(const HttpRequest& r);
  HttpResponse Vertices(const HttpRequest& r);
  HttpResponse Dag(const HttpRequest& r);
  HttpResponse Timeline(const HttpRequest& r);
  HttpResponse Scheduler(const HttpRequest& r);
  HttpResponse FlowGraph(const HttpRequest& r);
  HttpResponse Explain(const HttpRequest& r);
  HttpResponse Dfs(const HttpRequest& r);
  HttpResponse Metrics(const HttpRequest& r);
  HttpResponse Static(const HttpRequest& r);
  HttpResponse Library(const HttpRequest& r);

  asio::io_context& io_;
  const ClusterConfig& config_;
  const Clock& clock_;
  const Clock& wall_;
  ClusterManager& cluster_;
  DfsService& dfs_;
  JobService& jobs_;
  SchedulingService& scheduling_;
  const SchedulingRecord& record_;  // the rounds
  Options options_;
  std::unique_ptr<HttpServer> server_;
  asio::steady_timer timer_;
  bool stopped_ = false;
  mutable std::mutex mu_;
  std::shared_ptr<const ApiSnapshot> snapshot_;  // guarded by mu_
  // Per-computer committed replicas, refreshed every holdings_refresh.
  nlohmann::json holdings_ = nlohmann::json::object();
  Timestamp holdings_at_{0};
  uint64_t stored_bytes_ = 0;  // the holdings' sum
  size_t under_total_ = 0;     // under-replicated blocks, from the same walk
  // The DFS's under-replicated blocks (the first 100 and the count), from
  // the same walk.
  std::shared_ptr<const nlohmann::json> under_replicated_;  // guarded by mu_
  // Details built for requests, by job; the least recently used go first.
  static constexpr size_t kDetailsKept = 16;
  struct KeptDetail {
    std::shared_ptr<const JobDetail> detail;
    uint64_t used = 0;
  };
  std::map<uint64_t, KeptDetail> details_;  // guarded by mu_
  uint64_t detail_uses_ = 0;                // guarded by mu_
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace copse::master

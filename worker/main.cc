// copse-worker: the daemon on every computer (docs/design.md §1). main()
// reads the flags, loads the cluster config and sets up logging; RunWorker
// builds the worker's parts, starts them and runs until a signal.
//
//   copse-worker --config F --computer NAME [--log-level L]
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <asio/post.hpp>
#include <iostream>
#include <random>

#include "common/daemon.h"
#include "common/disk.h"
#include "common/http/http_server.h"
#include "common/log.h"
#include "common/net/auth.h"
#include "common/process.h"
#include "dfs/chunk_memory.h"
#include "worker/metrics.h"
#include "worker/program_cache.h"
#include "worker/task_manager.h"
#include "worker/task_service.h"
#include "worker/worker_agent.h"
#include "worker/worker_dfs.h"
#include "worker/worker_service.h"

namespace {

namespace worker = copse::worker;

struct Flags {
  std::string config_path, computer_name, level;
  bool quiet = false;
};

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("--config", f.config_path, "cluster config (TOML)")->required();
  app.add_option("--computer", f.computer_name, "this computer's name in the config")->required();
  app.add_option("--log-level", f.level, "trace, debug, info, warn, error (default: the config's)");
  app.add_flag("--quiet", f.quiet, "log only errors to stderr (the log file gets everything)");
}

// A random number for this run of the worker, which the agent registers with.
uint64_t NewIncarnation() {
  uint64_t incarnation = 0;
  for (uint8_t b : copse::net::RandomBytes(8)) incarnation = (incarnation << 8) | b;
  return incarnation;
}

// Prometheus metrics, when the computer has a metrics port (docs/deploy.md
// "Metrics"); else null. The disk gauges read the file system on the HTTP
// server's thread, and the DFS's blocks once `*dfs` is set: the DFS is
// started before the server and stopped after it.
std::unique_ptr<worker::WorkerMetrics> MakeMetrics(const copse::ComputerConfig& computer,
                                                   worker::WorkerDfs* const* dfs) {
  if (computer.metrics_port == 0) return nullptr;
  const std::filesystem::path data_dir = computer.data_dir;
  return std::make_unique<worker::WorkerMetrics>(computer.slots, [data_dir, dfs] {
    worker::WorkerMetrics::Disk d;
    if (auto c = copse::DiskCapacityBytes(data_dir); c.ok()) d.capacity_bytes = *c;
    if (auto f = copse::FreeDiskBytes(data_dir); f.ok()) d.free_bytes = *f;
    if (*dfs != nullptr) d.block_bytes = (*dfs)->BlockBytes();
    return d;
  });
}

// Where tasks run, what they are handed and the limits they run under.
worker::TaskManagerOptions TaskOptions(const copse::ClusterConfig& config,
                                       const copse::ComputerConfig& computer,
                                       const std::string& secret, worker::WorkerMetrics* metrics) {
  worker::TaskManagerOptions to;
  to.computer = computer.name;
  to.config_path = std::filesystem::absolute(config.source);
  to.data_dir = computer.data_dir;
  to.bin_dir = copse::ExecutableDir();
  to.apps_dir = config.apps_dir.empty() ? copse::DefaultAppsDir() : config.apps_dir;
  to.lib_dir = copse::ExecutableDir().parent_path() / "lib";
  to.secret = secret;
  to.limits.timeout = config.worker.vertex_timeout;
  to.limits.memory_bytes = config.worker.memory_bytes;
  to.limits.log_bytes = config.worker.log_bytes;
  to.limits.workdir_bytes = config.worker.workdir_bytes;
  to.limits.kill_grace = config.worker.kill_grace;
  to.limits.retention = config.worker.task_retention;
  to.metrics = metrics;
  return to;
}

// Programs: the apps directory's, and the program store's, fetched into a
// cache in the data dir (docs/sdk.md).
worker::ProgramCache::Options ProgramOptions(asio::io_context& io,
                                             const copse::ClusterConfig& config,
                                             const copse::ComputerConfig& computer,
                                             const std::filesystem::path& apps_dir) {
  worker::ProgramCache::Options po;
  po.dir = computer.data_dir / "programs";
  po.apps_dir = apps_dir;
  po.max_bytes = config.worker.program_cache_bytes;
  po.computer = computer.name;
  po.post = [&io](std::function<void()> fn) { asio::post(io, std::move(fn)); };
  return po;
}

// Serves `metrics` at /metrics on the computer's metrics port.
copse::Result<std::unique_ptr<copse::http::HttpServer>> StartMetricsServer(
    const copse::ComputerConfig& computer, worker::WorkerMetrics* metrics) {
  copse::http::HttpServer::Options ho;
  ho.host = computer.host;
  ho.port = computer.metrics_port;
  ho.threads = 2;
  ho.allowed_hosts = {computer.host_name};  // the name the config gives, besides its address
  ho.hosts_hint = "the worker's metrics answer to the computer's host only";
  ho.listen_hint = "set " + computer.name + ".metrics_port";
  auto server = std::make_unique<copse::http::HttpServer>(ho);
  server->Get("/metrics", [metrics](const copse::http::HttpRequest& r) {
    if (!r.params.empty()) {
      return copse::http::JsonError(400, "/metrics takes no query parameters");
    }
    copse::http::HttpResponse res;
    res.body = metrics->Serialize();
    res.content_type = worker::WorkerMetrics::kContentType;
    return res;
  });
  copse::Status s = server->Start();
  if (!s.ok()) return s;
  return server;
}

int Fail(const copse::Status& s) {
  spdlog::critical("{}", s.ToString());
  return 1;
}

// Builds the worker's parts, starts them, and runs until a signal or a
// fatal error of the agent; then shuts logging down (before the parts go).
// Returns the exit code.
int RunWorker(const copse::ClusterConfig& config, const copse::ComputerConfig& computer,
              const std::string& secret) {
  const uint64_t incarnation = NewIncarnation();
  asio::io_context io;
  copse::SteadyClock clock;
  worker::WorkerDfs* dfs_ptr = nullptr;
  std::unique_ptr<worker::WorkerMetrics> metrics = MakeMetrics(computer, &dfs_ptr);
  int exit_code = 0;
  worker::WorkerAgent agent(io, config, computer, secret, incarnation, [&](const copse::Status&) {
    exit_code = 1;
    io.stop();
  });
  // Tasks: the manager runs them, the task service carries its news to the
  // master and the master's requests to it.
  worker::TaskService task_service(agent);
  worker::TaskManagerOptions to = TaskOptions(config, computer, secret, metrics.get());
  worker::ProgramCache programs(config, secret, ProgramOptions(io, config, computer, to.apps_dir));
  worker::TaskManager tasks(io, to, clock, task_service, programs);
  tasks.Sweep();
  task_service.set_manager(&tasks);
  agent.AddPart(copse::net::Protocol::kScheduling, &task_service);
  agent.set_busy_slots([&tasks] { return tasks.busy(); });
  spdlog::info("vertex programs from {}", to.apps_dir.string());

  worker::WorkerService service(io, config, computer, secret, agent, tasks, clock);
  if (copse::Status s = service.Start(); !s.ok()) return Fail(s);
  worker::WorkerDfs dfs(io, config, computer, secret, agent);
  dfs.set_metrics(metrics.get());
  if (copse::Status s = dfs.Start(); !s.ok()) return Fail(s);
  dfs_ptr = &dfs;
  std::unique_ptr<copse::http::HttpServer> metrics_server;
  if (metrics) {
    auto started = StartMetricsServer(computer, metrics.get());
    if (!started.ok()) {
      spdlog::critical("metrics port of {}: {}", computer.name, started.status().ToString());
      return 1;
    }
    metrics_server = std::move(*started);
    spdlog::info("metrics on http://{}:{}/metrics", computer.host, metrics_server->port());
  }
  agent.Start();
  copse::RunUntilSignalled(io, [&] {
    if (metrics_server) metrics_server->Stop();
    tasks.KillAll();
    agent.Stop();
    service.Stop();
    dfs.Stop();
  });
  copse::ShutdownLogging();
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"copse-worker: the Copse daemon on one computer"};
  Flags flags;
  AddFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  copse::dfs::TuneHeapForChunks();

  auto env = copse::LoadDaemonEnv(flags.config_path);
  if (!env.ok()) {
    std::cerr << "copse-worker: " << env.status().ToString() << "\n";
    return env.status().code() == copse::StatusCode::kInvalidArgument ? 2 : 1;
  }
  const copse::ClusterConfig& config = env->config;
  const copse::ComputerConfig* computer = config.FindComputer(flags.computer_name);
  if (!computer) {
    std::cerr << "copse-worker: computer '" << flags.computer_name << "' is not in "
              << config.source.string() << "\n";
    return 2;
  }
  copse::Status s =
      copse::InitDaemonLogging("worker " + computer->name, computer->data_dir / "worker.log",
                               flags.level, flags.quiet, config);
  if (!s.ok()) {
    std::cerr << "copse-worker: " << s.ToString() << "\n";
    return 2;
  }
  return RunWorker(config, *computer, env->secret);
}

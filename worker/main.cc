// copse-worker: the daemon on every computer (docs/design.md §1).
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

int main(int argc, char** argv) {
  CLI::App app{"copse-worker: the Copse daemon on one computer"};
  std::string config_path, computer_name, level;
  app.add_option("--config", config_path, "cluster config (TOML)")->required();
  app.add_option("--computer", computer_name, "this computer's name in the config")->required();
  app.add_option("--log-level", level, "trace, debug, info, warn, error (default: the config's)");
  bool quiet = false;
  app.add_flag("--quiet", quiet, "log only errors to stderr (the log file gets everything)");
  CLI11_PARSE(app, argc, argv);
  copse::dfs::TuneHeapForChunks();

  auto env = copse::LoadDaemonEnv(config_path);
  if (!env.ok()) {
    std::cerr << "copse-worker: " << env.status().ToString() << "\n";
    return env.status().code() == copse::StatusCode::kInvalidArgument ? 2 : 1;
  }
  const copse::ClusterConfig& config = env->config;
  const copse::ComputerConfig* computer = config.FindComputer(computer_name);
  if (!computer) {
    std::cerr << "copse-worker: computer '" << computer_name << "' is not in "
              << config.source.string() << "\n";
    return 2;
  }
  copse::Status s = copse::InitDaemonLogging(
      "worker " + computer->name, computer->data_dir / "worker.log", level, quiet, config);
  if (!s.ok()) {
    std::cerr << "copse-worker: " << s.ToString() << "\n";
    return 2;
  }
  uint64_t incarnation = 0;
  for (uint8_t b : copse::net::RandomBytes(8)) incarnation = (incarnation << 8) | b;

  asio::io_context io;
  copse::SteadyClock clock;
  // Prometheus metrics, when the computer has a metrics port (docs/deploy.md
  // "Metrics"). The disk gauges read the file system on the HTTP server's
  // thread; `dfs` (below) is started before the server and stopped after it.
  std::unique_ptr<copse::worker::WorkerMetrics> metrics;
  copse::worker::WorkerDfs* dfs_ptr = nullptr;
  if (computer->metrics_port != 0) {
    const std::filesystem::path data_dir = computer->data_dir;
    metrics = std::make_unique<copse::worker::WorkerMetrics>(computer->slots, [data_dir, &dfs_ptr] {
      copse::worker::WorkerMetrics::Disk d;
      if (auto c = copse::DiskCapacityBytes(data_dir); c.ok()) d.capacity_bytes = *c;
      if (auto f = copse::FreeDiskBytes(data_dir); f.ok()) d.free_bytes = *f;
      if (dfs_ptr != nullptr) d.block_bytes = dfs_ptr->BlockBytes();
      return d;
    });
  }
  int exit_code = 0;
  copse::worker::WorkerAgent agent(io, config, *computer, env->secret, incarnation,
                                   [&](const copse::Status&) {
                                     exit_code = 1;
                                     io.stop();
                                   });
  // Tasks: the manager runs them, the task service carries its news to the
  // master and the master's requests to it.
  copse::worker::TaskService task_service(agent);
  copse::worker::TaskManagerOptions to;
  to.computer = computer->name;
  to.config_path = std::filesystem::absolute(config.source);
  to.data_dir = computer->data_dir;
  to.bin_dir = copse::ExecutableDir();
  to.apps_dir = config.apps_dir.empty() ? copse::DefaultAppsDir() : config.apps_dir;
  to.lib_dir = copse::ExecutableDir().parent_path() / "lib";
  to.secret = env->secret;
  to.limits.timeout = config.worker.vertex_timeout;
  to.limits.memory_bytes = config.worker.memory_bytes;
  to.limits.log_bytes = config.worker.log_bytes;
  to.limits.workdir_bytes = config.worker.workdir_bytes;
  to.limits.kill_grace = config.worker.kill_grace;
  to.limits.retention = config.worker.task_retention;
  to.metrics = metrics.get();
  // Programs: the apps directory's, and the program store's, fetched into
  // a cache in the data dir (docs/sdk.md).
  copse::worker::ProgramCache::Options po;
  po.dir = computer->data_dir / "programs";
  po.apps_dir = to.apps_dir;
  po.max_bytes = config.worker.program_cache_bytes;
  po.computer = computer->name;
  po.post = [&io](std::function<void()> fn) { asio::post(io, std::move(fn)); };
  copse::worker::ProgramCache programs(config, env->secret, po);
  copse::worker::TaskManager tasks(io, to, clock, task_service, programs);
  tasks.Sweep();
  task_service.set_manager(&tasks);
  agent.AddPart(copse::net::Protocol::kScheduling, &task_service);
  agent.set_busy_slots([&tasks] { return tasks.busy(); });
  spdlog::info("vertex programs from {}", to.apps_dir.string());

  copse::worker::WorkerService service(io, config, *computer, env->secret, agent, tasks, clock);
  s = service.Start();
  if (!s.ok()) {
    spdlog::critical("{}", s.ToString());
    return 1;
  }
  copse::worker::WorkerDfs dfs(io, config, *computer, env->secret, agent);
  dfs.set_metrics(metrics.get());
  s = dfs.Start();
  if (!s.ok()) {
    spdlog::critical("{}", s.ToString());
    return 1;
  }
  dfs_ptr = &dfs;
  std::unique_ptr<copse::http::HttpServer> metrics_server;
  if (metrics) {
    copse::http::HttpServer::Options ho;
    ho.host = computer->host;
    ho.port = computer->metrics_port;
    ho.threads = 2;
    ho.allowed_hosts = {computer->host_name};  // the name the config gives, besides its address
    ho.hosts_hint = "the worker's metrics answer to the computer's host only";
    ho.listen_hint = "set " + computer->name + ".metrics_port";
    metrics_server = std::make_unique<copse::http::HttpServer>(ho);
    metrics_server->Get("/metrics", [m = metrics.get()](const copse::http::HttpRequest& r) {
      if (!r.params.empty()) {
        return copse::http::JsonError(400, "/metrics takes no query parameters");
      }
      copse::http::HttpResponse res;
      res.body = m->Serialize();
      res.content_type = copse::worker::WorkerMetrics::kContentType;
      return res;
    });
    s = metrics_server->Start();
    if (!s.ok()) {
      spdlog::critical("metrics port of {}: {}", computer->name, s.ToString());
      return 1;
    }
    spdlog::info("metrics on http://{}:{}/metrics", computer->host, metrics_server->port());
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

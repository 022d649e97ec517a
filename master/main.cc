// copse-master: the cluster's master daemon (docs/design.md §1). main() builds
// each component, wires them, and runs the event loop:
//   membership (ClusterManager, ClusterService)
//   name service (DfsService over the namespace in the master's RocksDB)
//   programs (AppService: the program store, its records in the same RocksDB)
//   jobs (JobService, its table in the same RocksDB; JobProtocol for clients)
//   scheduling (SchedulingService: the Scheduler of the config through the
//     one SchedulingLoop; SchedulingProtocol for workers and roots)
//   server (MasterService) routing each protocol to its service
//
//   copse-master --config F [--log-level L] [--port P]
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>

#include "common/daemon.h"
#include "common/log.h"
#include "common/net/auth.h"
#include "common/process.h"
#include "dfs/meta_store.h"
#include "master/api.h"
#include "master/app_service.h"
#include "master/cluster_manager.h"
#include "master/cluster_service.h"
#include "master/dfs_service.h"
#include "master/job_files.h"
#include "master/job_protocol.h"
#include "master/job_service.h"
#include "master/master_service.h"
#include "master/metrics.h"
#include "master/scheduling_protocol.h"
#include "master/scheduling_service.h"
#include "proto/scheduling.capnp.h"
#include "scheduler/scheduler.h"

namespace {

int Fail(const copse::Status& s) {
  spdlog::critical("{}", s.ToString());
  return 1;
}

// Each running job's root takes a slot: K roots must leave slots for vertices.
copse::Status CheckAdmissionLimit(const copse::ClusterConfig& config) {
  int slots = config.TotalSlots();
  if (config.max_running_jobs < slots) return copse::Status::Ok();
  return copse::InvalidArgument(fmt::format(
      "{}: [cluster] max_running_jobs = {} would let the roots of admitted jobs take all {} slots "
      "of the cluster and leave none for their vertices; set it below {} (refused, not capped)",
      config.source.string(), config.max_running_jobs, slots, slots));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"copse-master: the Copse cluster master"};
  std::string config_path, level;
  uint16_t port = 0;
  app.add_option("--config", config_path, "cluster config (TOML)")->required();
  app.add_option("--log-level", level, "trace, debug, info, warn, error (default: the config's)");
  app.add_option("--port", port, "listen here instead of the config's master.port");
  bool quiet = false;
  app.add_flag("--quiet", quiet, "log only errors to stderr (the log file gets everything)");
  CLI11_PARSE(app, argc, argv);

  auto env = copse::LoadDaemonEnv(config_path);
  if (!env.ok()) {
    std::cerr << "copse-master: " << env.status().ToString() << "\n";
    return env.status().code() == copse::StatusCode::kInvalidArgument ? 2 : 1;
  }
  const copse::ClusterConfig& config = env->config;
  copse::Status s = copse::InitDaemonLogging("master", config.master.data_dir / "master.log", level,
                                             quiet, config);
  if (!s.ok()) {
    std::cerr << "copse-master: " << s.ToString() << "\n";
    return 2;
  }
  if (s = CheckAdmissionLimit(config); !s.ok()) {
    std::cerr << "copse-master: " << s.message() << "\n";
    spdlog::critical("{}", s.message());
    return 2;
  }
  asio::io_context io;
  copse::SteadyClock clock;
  copse::SystemClock wall;
  auto meta = copse::dfs::OpenRocksMetaStore(config.master.data_dir / "namespace");
  if (!meta.ok()) return Fail(meta.status());

  copse::master::ClusterManager cluster(config, config.worker_timeout,
                                        copse::proto::SCHEDULING_PROTOCOL_VERSION);
  if (s = cluster.LoadDrains(**meta); !s.ok()) return Fail(s);
  copse::master::ClusterService cluster_service(io, config, cluster, clock);
  copse::master::DfsService dfs(io, config, clock, **meta, cluster);
  if (s = dfs.Load(); !s.ok()) return Fail(s);
  cluster_service.set_dfs_status(
      [&dfs](const std::string& computer) { return dfs.names().Drain(computer); },
      [&dfs] { return dfs.names().UnderReplicatedBlocks(); });
  cluster.AddListener(&dfs);
  cluster_service.AddWorkerListener(&dfs);

  // The program store (copse app put), then jobs and their scheduling.
  const std::filesystem::path apps_dir =
      config.apps_dir.empty() ? copse::DefaultAppsDir() : config.apps_dir;
  copse::master::NameServiceAppFiles app_files(dfs.names());
  copse::master::AppService apps(**meta, app_files, wall,
                                 {apps_dir, config.apps.max_program_bytes});
  if (s = apps.Load(); !s.ok()) return Fail(s);
  copse::master::NameServiceJobFiles files(dfs.names());
  copse::master::JobService::Options jo;
  jo.apps_dir = apps_dir;
  jo.apps = &apps;
  jo.defer = [&io](std::function<void()> fn) { asio::post(io, std::move(fn)); };
  copse::master::JobService jobs(config, **meta, files, wall, jo);
  auto restarted = jobs.Load();
  if (!restarted.ok()) return Fail(restarted.status());
  // The steady clock times each Quincy round's phases for the HTTP API.
  auto scheduler = copse::scheduler::Scheduler::FromConfig(config, /*seed=*/1, &clock);
  if (!scheduler.ok()) return Fail(scheduler.status());
  copse::master::SchedulingService::Options so;
  so.recovery = copse::master::RecoveryWindow(config);
  so.restarted = *restarted;
  copse::master::SchedulingService scheduling(io, config, std::move(*scheduler), **meta, clock, so);
  // Prometheus metrics, served with the HTTP API at /metrics.
  copse::master::MasterMetrics metrics;
  scheduling.set_metrics(&metrics);
  copse::master::SchedulingProtocol scheduling_protocol(cluster, scheduling, jobs);
  copse::master::JobProtocol job_protocol(jobs, apps, scheduling);
  scheduling.set_messenger(&scheduling_protocol);
  scheduling.set_jobs(&jobs);
  scheduling.set_files(&files);
  scheduling.set_on_recovered([&] {
    jobs.AfterRecovery();
    scheduling_protocol.Recovered();
  });
  cluster.AddListener(&scheduling);
  cluster_service.AddWorkerListener(&scheduling_protocol);
  cluster_service.AddWorkerListener(&scheduling);
  if (s = scheduling.Start(); !s.ok()) return Fail(s);
  if (s = jobs.Resume(scheduling); !s.ok()) return Fail(s);
  asio::steady_timer sweep(io);
  std::function<void()> arm_sweep = [&] {
    sweep.expires_after(std::chrono::minutes(1));
    sweep.async_wait([&](const asio::error_code& ec) {
      if (ec) return;
      jobs.Sweep();
      arm_sweep();
    });
  };
  arm_sweep();

  copse::master::MasterService server(io, env->secret);
  server.Route(copse::net::Protocol::kCluster, &cluster_service);
  server.Route(copse::net::Protocol::kDfs, &dfs);
  server.Route(copse::net::Protocol::kScheduling, &scheduling_protocol);
  server.Route(copse::net::Protocol::kJob, &job_protocol);
  uint16_t listen_port = port != 0 ? port : config.master.port;
  if (s = server.Listen(config.master.host, listen_port); !s.ok()) return Fail(s);
  spdlog::info("master of cluster '{}' listening on {}:{} ({} computers in {} racks)", config.name,
               config.master.host, server.port(), config.computers.size(), config.racks.size());
  cluster_service.Start();
  dfs.Start();

  // The read-only HTTP API and dashboard (docs/design.md §13).
  std::unique_ptr<copse::master::Api> api;
  if (config.http.enabled) {
    copse::master::Api::Options ao;
    ao.dashboard_dir = copse::InstalledDir("dashboard", "share/copse/dashboard");
    ao.metrics = &metrics;
    if (!config.http.token_file.empty()) {
      auto token = copse::net::LoadSecret(config.http.token_file);
      if (!token.ok()) return Fail(token.status().WithContext("[http] token_file"));
      ao.token = *token;
    }
    api = std::make_unique<copse::master::Api>(io, config, clock, wall, cluster, dfs, jobs,
                                               scheduling, ao);
    if (s = api->Start(); !s.ok()) return Fail(s);
    spdlog::info("dashboard and API on http://{}:{}/", config.http.host, api->port());
  }
  copse::RunUntilSignalled(io, [&] {
    if (api) api->Stop();
    sweep.cancel();
    scheduling.Stop();
    cluster_service.Stop();
    dfs.Stop();
    server.Stop();
  });
  copse::ShutdownLogging();
  return 0;
}

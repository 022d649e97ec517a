// copse-master: the cluster's master daemon (DESIGN.md §1). main() builds
// each component, wires them, and runs the event loop:
//   membership (ClusterManager, ClusterService)
//   name service (DfsService over the namespace in the master's RocksDB)
//   server (MasterService) routing each protocol to its service
//
//   copse-master --config F [--log-level L] [--port P]
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "common/daemon.h"
#include "common/log.h"
#include "dfs/meta_store.h"
#include "master/cluster_manager.h"
#include "master/cluster_service.h"
#include "master/dfs_service.h"
#include "master/master_service.h"
#include "proto/scheduling.capnp.h"

namespace {

int Fail(const copse::Status& s) {
  spdlog::critical("{}", s.ToString());
  return 1;
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
  asio::io_context io;
  copse::SteadyClock clock;
  auto meta = copse::dfs::OpenRocksMetaStore(config.master.data_dir / "namespace");
  if (!meta.ok()) return Fail(meta.status());

  copse::master::ClusterManager cluster(config, config.worker_timeout,
                                        copse::proto::SCHEDULING_PROTOCOL_VERSION);
  copse::master::ClusterService cluster_service(io, config, cluster, clock);
  copse::master::DfsService dfs(io, config, clock, **meta, cluster);
  if (s = dfs.Load(); !s.ok()) return Fail(s);
  cluster.AddListener(&dfs);
  cluster_service.AddWorkerListener(&dfs);

  copse::master::MasterService server(io, env->secret);
  server.Route(copse::net::Protocol::kCluster, &cluster_service);
  server.Route(copse::net::Protocol::kDfs, &dfs);
  uint16_t listen_port = port != 0 ? port : config.master.port;
  if (s = server.Listen(config.master.host, listen_port); !s.ok()) return Fail(s);
  spdlog::info("master of cluster '{}' listening on {}:{} ({} computers in {} racks)", config.name,
               config.master.host, server.port(), config.computers.size(), config.racks.size());
  cluster_service.Start();
  dfs.Start();
  copse::RunUntilSignalled(io, [&] {
    cluster_service.Stop();
    dfs.Stop();
    server.Stop();
  });
  copse::ShutdownLogging();
  return 0;
}

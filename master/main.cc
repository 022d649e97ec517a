// copse-master: the cluster's master daemon (DESIGN.md §1).
//   copse-master --config F [--log-level L] [--port P]
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "common/daemon.h"
#include "common/log.h"
#include "master/master_service.h"

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
  copse::master::MasterService service(io, config, env->secret, clock);
  s = service.Start(port);
  if (!s.ok()) {
    spdlog::critical("{}", s.ToString());
    return 1;
  }
  copse::RunUntilSignalled(io, [&] { service.Stop(); });
  copse::ShutdownLogging();
  return 0;
}

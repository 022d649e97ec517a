// copse-master: the cluster's master daemon (docs/design.md §1). main() reads
// the flags and the cluster config, sets up logging, and runs the Master
// (master/master.h), which builds and wires every component, until a signal.
//
//   copse-master --config F [--log-level L] [--port P]
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <asio/io_context.hpp>
#include <iostream>

#include "common/clock.h"
#include "common/daemon.h"
#include "common/log.h"
#include "master/master.h"

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
  auto master = copse::master::Master::Open(io, config, env->secret, clock, wall, {port});
  if (!master.ok()) return Fail(master.status());
  if (s = (*master)->Start(); !s.ok()) return Fail(s);
  copse::RunUntilSignalled(io, [&] { (*master)->Stop(); });
  copse::ShutdownLogging();
  return 0;
}

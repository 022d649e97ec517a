// copse: the Copse command-line tool (DESIGN.md §12).
//   copse [--config F] cluster up|down|status [--json]
//   copse flow ...    runs copse-flow (min-cost-flow tools)
//   copse bench SUITE ...  runs copse-bench-SUITE (benchmark suites)
// Exit codes: 0 ok, 1 the operation failed, 2 bad usage or bad input, 3 an
// infeasible flow problem.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "client/cluster_commands.h"
#include "client/launcher.h"
#include "common/config.h"
#include "common/exec_argv.h"

namespace {

// Runs the sibling executable `copse-NAME` with `args`, as git runs its
// subcommands. Returns only when it could not be started.
int RunSibling(const std::string& name, const std::vector<std::string>& args,
               const std::optional<std::string>& config) {
  std::filesystem::path exe = copse::client::SelfDir() / ("copse-" + name);
  if (config) setenv("COPSE_CONFIG", config->c_str(), 1);
  std::vector<std::string> argv_s{exe.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = copse::ExecArgv(argv_s);
  ::execv(exe.c_str(), argv.data());
  std::cerr << "copse: cannot run " << exe.string() << ": " << std::strerror(errno)
            << " (is it built? it belongs beside copse)\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"copse: run and inspect a Copse rack cluster"};
  app.require_subcommand(1);
  std::optional<std::string> config_flag;
  app.add_option("--config", config_flag,
                 "cluster config (default: $COPSE_CONFIG, then cluster-configs/local.toml)");

  auto* cluster = app.add_subcommand("cluster", "start, stop and show a cluster");
  cluster->fallthrough();
  cluster->require_subcommand(1);
  copse::client::UpOptions up_options;
  int timeout_s = 30;
  auto* up = cluster->add_subcommand(
      "up", "start the master and every worker of the config on this machine");
  up->add_option("--timeout", timeout_s, "seconds to wait for every worker to register")
      ->check(CLI::Range(1, 3600));
  up->fallthrough();
  auto* down = cluster->add_subcommand("down", "stop the processes `cluster up` started");
  down->fallthrough();
  bool json = false;
  auto* status = cluster->add_subcommand("status", "each computer's rack, state, slots, heartbeat");
  status->add_flag("--json", json, "print one JSON document");
  status->fallthrough();

  auto* flow = app.add_subcommand("flow", "min-cost-flow tools (runs copse-flow)");
  flow->prefix_command();
  auto* bench = app.add_subcommand(
      "bench", "benchmark suites: `copse bench SUITE ...` runs copse-bench-SUITE (flow, dfs, sim)");
  bench->prefix_command();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    (void)app.exit(e);
    return 2;
  }

  if (flow->parsed()) return RunSibling("flow", flow->remaining(), config_flag);
  if (bench->parsed()) {
    std::vector<std::string> rest = bench->remaining();
    // The suite name becomes part of an executable's file name: accept only
    // lower-case letters so it can never name a path.
    if (rest.empty() || rest.front().empty() ||
        !std::all_of(rest.front().begin(), rest.front().end(),
                     [](char c) { return c >= 'a' && c <= 'z'; })) {
      std::cerr << "copse bench: name a suite (flow, dfs, sim): copse bench SUITE [ARGS...]\n";
      return 2;
    }
    std::string suite = "bench-" + rest.front();
    rest.erase(rest.begin());
    return RunSibling(suite, rest, config_flag);
  }

  std::filesystem::path path = copse::ResolveConfigPath(config_flag);
  auto config = copse::LoadClusterConfig(path);
  if (!config.ok()) {
    std::cerr << "copse: " << config.status().ToString() << "\n";
    return config.status().code() == copse::StatusCode::kNotFound ? 1 : 2;
  }
  if (up->parsed()) {
    up_options.timeout = std::chrono::seconds(timeout_s);
    return copse::client::ClusterUp(*config, up_options);
  }
  if (down->parsed()) return copse::client::ClusterDown(*config);
  if (status->parsed()) return copse::client::ClusterStatusCommand(*config, json);
  return 2;
}

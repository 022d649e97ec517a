#include "client/command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "client/netns.h"
#include "common/exec_argv.h"
#include "common/process.h"

namespace copse::client {

Result<ClusterConfig> GlobalOptions::LoadConfig(const std::string& computer,
                                                bool enter_netns) const {
  COPSE_ASSIGN_OR_RETURN(ClusterConfig c, LoadClusterConfig(ResolveConfigPath(config)));
  if (!enter_netns) return c;
  // A cluster started with --netns is reached inside its emulated network.
  auto derived = EnterClusterNetns(c, computer);
  if (!derived.ok()) return Status(StatusCode::kUnavailable, derived.status().message());
  if (*derived) return std::move(**derived);
  return c;
}

std::optional<int> Commands::RunParsed() const {
  for (const Command& c : commands_) {
    if (c.parsed->parsed()) return c.run();
  }
  return std::nullopt;
}

int WithConfig(const GlobalOptions& g, const std::string& computer, bool enter_netns,
               const std::function<int(const ClusterConfig&)>& run) {
  Result<ClusterConfig> config = g.LoadConfig(computer, enter_netns);
  if (!config.ok()) {
    std::cerr << "copse: " << config.status().ToString() << "\n";
    StatusCode c = config.status().code();
    return c == StatusCode::kNotFound || c == StatusCode::kUnavailable ? 1 : 2;
  }
  return run(*config);
}

namespace {

// Runs the sibling executable `copse-NAME` with `args`, as git runs its
// subcommands. Returns only when it could not be started.
int RunSibling(const std::string& name, const std::vector<std::string>& args,
               const std::optional<std::string>& config) {
  std::filesystem::path exe = ExecutableDir() / ("copse-" + name);
  if (config) setenv("COPSE_CONFIG", config->c_str(), 1);
  std::vector<std::string> argv_s{exe.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = ExecArgv(argv_s);
  ::execv(exe.c_str(), argv.data());
  std::cerr << "copse: cannot run " << exe.string() << ": " << std::strerror(errno)
            << " (is it built? it belongs beside copse)\n";
  return 1;
}

}  // namespace

void AddToolCommands(CLI::App& app, Commands& commands) {
  auto* flow = app.add_subcommand("flow", "min-cost-flow tools (runs copse-flow)");
  flow->prefix_command();
  commands.Add(flow, [flow, &commands] {
    return RunSibling("flow", flow->remaining(), commands.global().config);
  });
  auto* bench = app.add_subcommand(
      "bench",
      "benchmark suites: `copse bench SUITE ...` runs "
      "copse-bench-SUITE (flow, dfs, sim, engine, apps, cluster, api, sdk, idle)");
  bench->prefix_command();
  commands.Add(bench, [bench, &commands] {
    std::vector<std::string> rest = bench->remaining();
    // The suite name becomes part of an executable's file name: accept only
    // lower-case letters so it can never name a path.
    if (rest.empty() || rest.front().empty() ||
        !std::all_of(rest.front().begin(), rest.front().end(),
                     [](char c) { return c >= 'a' && c <= 'z'; })) {
      std::cerr
          << "copse bench: name a suite (flow, dfs, sim, engine, apps, cluster, api, sdk, idle): "
             "copse bench SUITE [ARGS...]\n";
      return 2;
    }
    std::string suite = "bench-" + rest.front();
    rest.erase(rest.begin());
    return RunSibling(suite, rest, commands.global().config);
  });
}

}  // namespace copse::client

// How the `copse` tool's commands are registered, as git's builtins are:
// each command group adds its subcommands and their options to the parser
// from its own file (AddClusterCommands, AddFsCommands, ...) and names the
// function that runs each; main() only parses and dispatches.
// Thread-safety: used by main() alone.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "copse/status.h"

namespace copse::client {

// The options every command takes (docs/design.md §12).
struct GlobalOptions {
  std::optional<std::string> config;  // --config
  int master_wait_s = 30;             // --master-wait
  bool master_wait_given = false;

  std::chrono::seconds master_wait() const { return std::chrono::seconds(master_wait_s); }
  // The config of --config, $COPSE_CONFIG or the default, entered into its
  // emulated network when the cluster runs in one (unless `enter_netns`
  // is false: `cluster up` and `down` set it up themselves). `computer`
  // names the computer the command runs as (empty: outside the cluster).
  Result<ClusterConfig> LoadConfig(const std::string& computer = "", bool enter_netns = true) const;
};

// A registered subcommand: when `parsed` was parsed, `run` gives the exit code.
struct Command {
  CLI::App* parsed = nullptr;
  std::function<int()> run;
};

class Commands {
 public:
  explicit Commands(const GlobalOptions& global) : global_(global) {}
  const GlobalOptions& global() const { return global_; }
  // Registers `run` for `sub`. Options the run reads must outlive parsing:
  // keep them in an Own()ed object.
  void Add(CLI::App* sub, std::function<int()> run) { commands_.push_back({sub, std::move(run)}); }
  template <typename T>
  T& Own() {
    auto p = std::make_shared<T>();
    T& ref = *p;
    owned_.push_back(std::move(p));
    return ref;
  }
  // The run of the subcommand that was parsed; nullopt when none was.
  std::optional<int> RunParsed() const;

 private:
  const GlobalOptions& global_;
  std::vector<Command> commands_;
  std::vector<std::shared_ptr<void>> owned_;
};

// Runs a config-loading command: prints the error and returns 1 or 2 when
// the config cannot be loaded, else `run(config)`.
int WithConfig(const GlobalOptions& g, const std::string& computer, bool enter_netns,
               const std::function<int(const ClusterConfig&)>& run);

// Each group's registration (in the group's own file).
void AddClusterCommands(CLI::App& app, Commands& commands);  // cluster_commands.cc
void AddFsCommands(CLI::App& app, Commands& commands);       // fs_commands.cc
void AddJobCommands(CLI::App& app, Commands& commands);      // job, run: job_commands.cc
void AddGenCommands(CLI::App& app, Commands& commands);      // gen: app_commands.cc
void AddAppCommands(CLI::App& app, Commands& commands);      // app: program_commands.cc
void AddToolCommands(CLI::App& app, Commands& commands);     // flow, bench: command.cc

}  // namespace copse::client

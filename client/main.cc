// copse: the Copse command-line tool (docs/design.md §12, docs/cli.md).
//   copse [--config F] [--master-wait S] cluster up|down|status [--json]
//   copse fs put|get|cat|ls|stat|rm ...   the DFS (docs/dfs.md)
//   copse job submit|status|list|wait|kill|logs|history ...   jobs (docs/jobs.md)
//   copse run APP --input PATH --output PATH [--partitions N] [--wait]
//   copse gen APP --output PATH [--partitions N] [--scale X] [--seed S]
//   copse app put|ls|show|rm ...   the program store (docs/sdk.md)
//   copse flow ...    runs copse-flow (min-cost-flow tools)
//   copse bench SUITE ...  runs copse-bench-SUITE (benchmark suites)
// Each command group registers its subcommands from its own file
// (client/command.h); main() parses and dispatches.
// Exit codes: 0 ok, 1 the operation failed, 2 bad usage or bad input, 3 an
// infeasible flow problem.
#include <CLI/CLI.hpp>
#include <iostream>

#include "client/command.h"
#include "client/terminal.h"

namespace {

int Main(int argc, char** argv) {
  CLI::App app{"copse: run and inspect a Copse rack cluster"};
  app.require_subcommand(1);
  copse::client::GlobalOptions global;
  app.add_option("--config", global.config,
                 "cluster config (default: $COPSE_CONFIG, then cluster-configs/local.toml)");
  app.add_option("--master-wait", global.master_wait_s,
                 "seconds to wait for a master that does not answer (restarting) before giving "
                 "up; 0: do not wait")
      ->check(CLI::Range(0, 86'400));

  copse::client::Commands commands(global);
  copse::client::AddClusterCommands(app, commands);
  copse::client::AddFsCommands(app, commands);
  copse::client::AddJobCommands(app, commands);
  copse::client::AddGenCommands(app, commands);
  copse::client::AddAppCommands(app, commands);
  copse::client::AddToolCommands(app, commands);

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
  global.master_wait_given = app.count("--master-wait") > 0;
  return commands.RunParsed().value_or(2);
}

}  // namespace

// A document the tool did not expect (a master of another version, a
// field missing) ends the command with a message, not a crash.
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "copse: unexpected error: " << copse::client::Shown(e.what()) << "\n";
    return 1;
  }
}

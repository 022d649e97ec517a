// copse: the Copse command-line tool (DESIGN.md §12).
//   copse [--config F] cluster up|down|status [--json]
//   copse fs put|get|cat|ls|stat|rm ...   the DFS (docs/dfs.md)
//   copse job submit|status|list|wait|kill|logs ...   jobs (docs/jobs.md)
//   copse run APP --input PATH --output PATH [--partitions N] [--wait]
//   copse gen APP --output PATH [--partitions N] [--scale X] [--seed S]
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

#include "client/app_commands.h"
#include "client/cluster_commands.h"
#include "client/fs_commands.h"
#include "client/job_commands.h"
#include "client/launcher.h"
#include "client/netns.h"
#include "client/terminal.h"
#include "common/config.h"
#include "common/exec_argv.h"
#include "common/process.h"

namespace {

// Runs the sibling executable `copse-NAME` with `args`, as git runs its
// subcommands. Returns only when it could not be started.
int RunSibling(const std::string& name, const std::vector<std::string>& args,
               const std::optional<std::string>& config) {
  std::filesystem::path exe = copse::ExecutableDir() / ("copse-" + name);
  if (config) setenv("COPSE_CONFIG", config->c_str(), 1);
  std::vector<std::string> argv_s{exe.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = copse::ExecArgv(argv_s);
  ::execv(exe.c_str(), argv.data());
  std::cerr << "copse: cannot run " << exe.string() << ": " << std::strerror(errno)
            << " (is it built? it belongs beside copse)\n";
  return 1;
}

int Main(int argc, char** argv) {
  CLI::App app{"copse: run and inspect a Copse rack cluster"};
  app.require_subcommand(1);
  std::optional<std::string> config_flag;
  app.add_option("--config", config_flag,
                 "cluster config (default: $COPSE_CONFIG, then cluster-configs/local.toml)");
  int master_wait_s = 30;
  app.add_option("--master-wait", master_wait_s,
                 "seconds to wait for a master that does not answer (restarting) before giving "
                 "up; 0: do not wait")
      ->check(CLI::Range(0, 86'400));

  auto* cluster = app.add_subcommand("cluster", "start, stop and show a cluster");
  cluster->fallthrough();
  cluster->require_subcommand(1);
  copse::client::UpOptions up_options;
  int timeout_s = 30;
  auto* up = cluster->add_subcommand(
      "up", "start the master and every worker of the config on this machine");
  up->add_option("--timeout", timeout_s, "seconds to wait for every worker to register")
      ->check(CLI::Range(1, 3600));
  up->add_flag("--netns", up_options.netns,
               "each computer in its own network namespace, racks joined by tc-shaped links "
               "(root; docs/netns.md)");
  up->fallthrough();
  auto* down = cluster->add_subcommand("down", "stop the processes `cluster up` started");
  down->fallthrough();
  bool json = false;
  auto* status = cluster->add_subcommand("status", "each computer's rack, state, slots, heartbeat");
  status->add_flag("--json", json, "print one JSON document");
  status->fallthrough();

  // copse fs ...
  copse::client::FsOptions fs_options;
  auto* fs = app.add_subcommand("fs", "the distributed file system");
  fs->require_subcommand(1);
  fs->fallthrough();
  auto add_computer = [&](CLI::App* c) {
    c->add_option("--computer", fs_options.computer,
                  "the computer this runs on (default: outside the cluster)");
    c->fallthrough();
  };
  auto* fs_put = fs->add_subcommand("put", "write a local file into the DFS");
  fs_put->add_option("LOCAL", fs_options.local, "local file")->required();
  fs_put->add_option("PATH", fs_options.path, "DFS path")->required();
  fs_put->add_option("--partitions", fs_options.partitions, "partitions (split at line ends)")
      ->check(CLI::Range(1, 1 << 20));
  fs_put->add_option("--replication", fs_options.replication, "replicas (default: the config's)")
      ->check(CLI::Range(1, 64));
  fs_put->add_option("--placement", fs_options.placement,
                     "writer | random | 'colocate PATH' | 'confine N RACK'");
  fs_put
      ->add_option("--record-size", fs_options.record_size,
                   "split fixed-size binary records of B bytes instead of lines")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  add_computer(fs_put);
  auto* fs_get = fs->add_subcommand("get", "copy a DFS file to a local file");
  fs_get->add_option("PATH", fs_options.path, "DFS path")->required();
  fs_get->add_option("LOCAL", fs_options.local, "local file")->required();
  fs_get->add_flag("--stats", fs_options.stats, "print bytes read per locality level to stderr");
  add_computer(fs_get);
  auto* fs_cat = fs->add_subcommand("cat", "write a DFS file to stdout");
  fs_cat->add_option("PATH", fs_options.path, "DFS path")->required();
  fs_cat->add_option("--partition", fs_options.partition, "only this partition")
      ->check(CLI::Range(0, 1 << 20));
  fs_cat->add_flag("--stats", fs_options.stats, "print bytes read per locality level to stderr");
  add_computer(fs_cat);
  auto* fs_ls = fs->add_subcommand("ls", "list files");
  fs_ls->add_option("PATH", fs_options.path, "DFS directory or file (default /)");
  fs_ls->add_flag("--json", fs_options.json, "print one JSON document");
  fs_ls->fallthrough();
  auto* fs_stat = fs->add_subcommand("stat", "partitions, blocks and replicas of a file");
  fs_stat->add_option("PATH", fs_options.path, "DFS path")->required();
  fs_stat->add_flag("--json", fs_options.json, "print one JSON document");
  fs_stat->fallthrough();
  auto* fs_rm = fs->add_subcommand("rm", "delete a file");
  fs_rm->add_option("PATH", fs_options.path, "DFS path")->required();
  fs_rm->fallthrough();

  // copse job ...
  copse::client::JobOptions job_options;
  auto* job = app.add_subcommand("job", "submit, inspect and manage jobs");
  job->require_subcommand(1);
  job->fallthrough();
  auto* job_submit = job->add_subcommand("submit", "submit a job spec (JSON); prints its id");
  job_submit->add_option("SPEC", job_options.spec_file, "the job spec file ('-': stdin)")
      ->required();
  job_submit->add_flag("--wait", job_options.wait, "wait for the job to end (exit 1 if it fails)");
  job_submit->fallthrough();
  auto add_id = [&](CLI::App* c) {
    c->add_option("ID", job_options.job, "the job id")->required();
    c->fallthrough();
  };
  auto* job_status = job->add_subcommand("status", "a job's state, stages, runs and bytes");
  add_id(job_status);
  job_status->add_flag("--json", job_options.json, "print one JSON document");
  auto* job_list = job->add_subcommand("list", "every job the master keeps");
  job_list->add_flag("--json", job_options.json, "print one JSON document");
  job_list->fallthrough();
  auto* job_wait = job->add_subcommand("wait", "wait for a job to end (exit 1 if it fails)");
  add_id(job_wait);
  auto* job_kill = job->add_subcommand("kill", "kill a job and every process of it");
  add_id(job_kill);
  auto* job_history = job->add_subcommand(
      "history", "every run of a job: vertex and version, attempt, computer, how it ended");
  add_id(job_history);
  job_history->add_flag("--json", job_options.json, "print one JSON document");
  auto* job_logs = job->add_subcommand("logs", "the logs of a job's runs");
  add_id(job_logs);
  job_logs->add_option("--vertex", job_options.vertex,
                       "only STAGE, STAGE[INDEX] or root (default: every run)");

  // copse run APP ...
  auto* run = app.add_subcommand("run", "run a sample app on DFS files (prints the job id)");
  run->add_option("APP", job_options.app, "databasejoin, pagerank, prime, sort or wordcount")
      ->required();
  run->add_option("--input", job_options.inputs, "input DFS file(s), comma-separated")
      ->required()
      ->delimiter(',');
  run->add_option("--output", job_options.output, "the DFS file to write")->required();
  run->add_option("--partitions", job_options.partitions, "the output's partitions")
      ->check(CLI::Range(1, 100000));
  run->add_option("--name", job_options.name, "the job's name (default: the app's)");
  run->add_flag("--wait", job_options.wait, "wait for the job to end (exit 1 if it fails)");
  run->fallthrough();

  // copse gen APP ...
  copse::client::GenOptions gen_options;
  auto* gen = app.add_subcommand("gen", "write a sample app's generated input into the DFS");
  gen->add_option("APP", gen_options.app,
                  "sort, databasejoin, pagerank, wordcount, prime_small (or prime), prime_large")
      ->required();
  gen->add_option("--output", gen_options.output,
                  "the DFS file to write (databasejoin: OUTPUT/small and OUTPUT/big)")
      ->required();
  gen->add_option("--partitions", gen_options.partitions, "partitions (default 4)");
  gen->add_option("--scale", gen_options.scale,
                  "partition size as a share of the paper's (default 0.001: Sort 4 MB, "
                  "PageRank 1 MB, WordCount 50 kB)");
  gen->add_option("--seed", gen_options.seed, "the generator's seed (default 1)");
  gen->add_option("--placement", gen_options.placement,
                  "random (default) | writer | 'confine N RACK' (databasejoin: of the small table; "
                  "the big one is co-located with it)");
  gen->add_option("--replication", gen_options.replication, "replicas (default: the config's)")
      ->check(CLI::Range(1, 64));
  gen->add_option("--computer", gen_options.computer,
                  "the computer this runs on (default: outside the cluster)");
  gen->fallthrough();

  auto* flow = app.add_subcommand("flow", "min-cost-flow tools (runs copse-flow)");
  flow->prefix_command();
  auto* bench =
      app.add_subcommand("bench",
                         "benchmark suites: `copse bench SUITE ...` runs "
                         "copse-bench-SUITE (flow, dfs, sim, engine, apps, cluster, api)");
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
      std::cerr
          << "copse bench: name a suite (flow, dfs, sim, engine, apps, cluster): copse bench SUITE "
             "[ARGS...]\n";
      return 2;
    }
    std::string suite = "bench-" + rest.front();
    rest.erase(rest.begin());
    return RunSibling(suite, rest, config_flag);
  }

  const std::chrono::seconds master_wait(master_wait_s);
  fs_options.master_wait = job_options.master_wait = gen_options.master_wait = master_wait;
  std::filesystem::path path = copse::ResolveConfigPath(config_flag);
  auto config = copse::LoadClusterConfig(path);
  if (!config.ok()) {
    std::cerr << "copse: " << config.status().ToString() << "\n";
    return config.status().code() == copse::StatusCode::kNotFound ? 1 : 2;
  }
  if (!up->parsed() && !down->parsed()) {
    // A cluster started with --netns is reached inside its emulated network.
    auto derived = copse::client::EnterClusterNetns(*config, fs_options.computer);
    if (!derived.ok()) {
      std::cerr << "copse: " << derived.status().ToString() << "\n";
      return 1;
    }
    if (*derived) *config = std::move(**derived);
  }
  if (up->parsed()) {
    up_options.timeout = std::chrono::seconds(timeout_s);
    return copse::client::ClusterUp(*config, up_options);
  }
  if (down->parsed()) return copse::client::ClusterDown(*config);
  if (status->parsed()) {
    // Whether the cluster is up is answered at once, unless asked to wait.
    return copse::client::ClusterStatusCommand(
        *config, json, app.count("--master-wait") > 0 ? master_wait : std::chrono::seconds(0));
  }
  if (fs_put->parsed()) return copse::client::FsPut(*config, fs_options);
  if (fs_get->parsed()) return copse::client::FsGet(*config, fs_options);
  if (fs_cat->parsed()) return copse::client::FsCat(*config, fs_options);
  if (fs_ls->parsed()) return copse::client::FsList(*config, fs_options);
  if (fs_stat->parsed()) return copse::client::FsStat(*config, fs_options);
  if (fs_rm->parsed()) return copse::client::FsRemove(*config, fs_options);
  if (job_submit->parsed()) return copse::client::JobSubmit(*config, job_options);
  if (job_status->parsed()) return copse::client::JobStatus(*config, job_options);
  if (job_list->parsed()) return copse::client::JobList(*config, job_options);
  if (job_wait->parsed()) return copse::client::JobWait(*config, job_options);
  if (job_kill->parsed()) return copse::client::JobKill(*config, job_options);
  if (job_logs->parsed()) return copse::client::JobLogs(*config, job_options);
  if (job_history->parsed()) return copse::client::JobHistory(*config, job_options);
  if (run->parsed()) return copse::client::Run(*config, job_options);
  if (gen->parsed()) return copse::client::Gen(*config, gen_options);
  return 2;
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

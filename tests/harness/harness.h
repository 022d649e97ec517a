// Helpers for integration tests that start real Copse processes on loopback:
// temporary directories, free ports, temporary cluster configs, running the
// copse binaries with a deadline, and waiting for a condition with a bound.
// The test process makes itself a child subreaper, so daemons that outlive
// the `copse` command that started them are reaped here; and a watchdog
// process kills every process started under a test's temporary directories
// once the test process is gone, even when it crashed.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace copse::testing {

// A fresh directory under /tmp, removed with everything in it at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// `n` distinct TCP ports on 127.0.0.1 that were free a moment ago.
std::vector<uint16_t> FreePorts(int n);

struct LocalClusterSpec {
  int racks = 2;
  int computers_per_rack = 3;
  int slots = 1;
  int heartbeat_interval_ms = 100;
  int worker_timeout_ms = 1000;
  int max_running_jobs = 2;        // K; below the slots, as the master requires
  std::string extra_cluster_keys;  // appended to [cluster]
  std::string extra_tables;        // appended after [master] ([scheduler], [worker], ...)
  bool worker_metrics = false;     // every computer serves metrics on a port of its own
};

// Writes `dir`/cluster.toml: computers c<rack><index> in racks r<rack>, on
// free loopback ports, data under `dir`/data. Returns the config's path.
std::filesystem::path WriteClusterConfig(const std::filesystem::path& dir,
                                         const LocalClusterSpec& spec);

// Where the built executables are ($COPSE_BIN_DIR, else this build tree's bin/).
std::filesystem::path BinDir();

struct CommandResult {
  int exit_code = -1;  // -1: killed at the deadline
  std::string out;
  std::string err;
};

// Runs BinDir()/`program` with `args`, capturing stdout and stderr; kills it
// at the deadline.
CommandResult RunCopse(const std::string& program, const std::vector<std::string>& args,
                       std::chrono::seconds deadline = std::chrono::seconds(60));

// Runs `program` with `args` in `cwd` (empty: this process's), capturing
// stdout and stderr; kills it at the deadline.
CommandResult Exec(const std::filesystem::path& program, const std::vector<std::string>& args,
                   std::chrono::seconds deadline = std::chrono::seconds(300),
                   const std::filesystem::path& cwd = {});

// Runs a shell command; returns its exit code and combined output.
std::pair<int, std::string> Shell(const std::string& command);
// Whether an executable of this name is in /usr/sbin, /sbin, /usr/bin or /bin.
bool ToolExists(const std::string& name);
// Why this machine cannot make network namespaces joined by bridges and
// tc-shaped links (root, iproute2, kernel support), or "" when it can.
std::string MissingNetnsCapability();
// The named network namespaces (/run/netns) whose names start with `prefix`.
std::vector<std::string> NamespacesWithPrefix(const std::string& prefix);

// Writes the config (WriteClusterConfig) and runs `copse cluster up` on it,
// the config's path in *config_path. A port found free can be taken by
// another test before a daemon binds it: then the cluster is brought down
// and up again on fresh ports (client::kClusterUpTries attempts in all,
// when client::PortWasTaken says so).
CommandResult UpLocalCluster(const std::filesystem::path& dir, const LocalClusterSpec& spec,
                             std::filesystem::path* config_path);

// Polls `condition` every 50 ms until it holds or `bound` passes.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds bound);

// Reaps exited children (daemons re-parented to this process).
void ReapChildren();

// True while a process with this pid exists and is not a zombie.
bool ProcessAlive(int pid);

}  // namespace copse::testing

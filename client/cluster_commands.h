// `copse cluster up|down|status|logs|drain|undrain`: run a whole cluster from
// its config (on this machine, or on its hosts over ssh:
// client/remote_cluster.h), stop it, show it, show a daemon's log, and take
// a computer out of service and back. Each returns the process exit code
// (docs/design.md §12: 0 ok, 1 failed, 2 bad usage or input) after printing what happened.
#pragma once

#include <chrono>
#include <string>

#include "common/config.h"

namespace copse::client {

struct UpOptions {
  std::chrono::seconds timeout{30};  // for the master to listen and all workers to register
  bool netns = false;                // each computer in its own network namespace (client/netns.h)
};

struct RestartOptions {
  bool install = false;               // ship this copse's install first
  std::chrono::seconds timeout{120};  // for each daemon to come back, and the DFS to heal
};

int ClusterUp(const ClusterConfig& config, const UpOptions& options);
int ClusterDown(const ClusterConfig& config);
// Waits up to `master_wait` for a master that does not answer.
int ClusterStatusCommand(const ClusterConfig& config, bool json, std::chrono::seconds master_wait);
// The last `lines` lines of the log of `who` (a computer, or "master"),
// escaped as docs/cli.md says for a terminal.
// `restart --rolling` (client/remote_cluster.h) for a config on several hosts.
int ClusterRollingRestart(const ClusterConfig& config, const RestartOptions& options);
// What runs on each host (over ssh when the config has other hosts).
int ClusterHostsStatus(const ClusterConfig& config, bool json);
int ClusterLogs(const ClusterConfig& config, const std::string& who, int lines);

struct DrainOptions {
  bool now = false;                 // move its running tasks instead of letting them finish
  bool wait = true;                 // until it holds no block that exists nowhere else
  std::chrono::seconds timeout{0};  // for that wait; 0: no limit
  std::chrono::milliseconds poll{500};
};
// Drains `computer` (the scheduler places nothing new there, the DFS copies
// its blocks elsewhere) and, unless told not to wait, returns 0 once it
// holds no block that exists on no other computer that stays; 1 when the
// timeout runs out first (saying what is left), 2 for a computer the config
// does not name.
int ClusterDrain(const ClusterConfig& config, const std::string& computer,
                 const DrainOptions& options, std::chrono::seconds master_wait);
// Ends the drain of `computer`: it takes new tasks and replicas again.
int ClusterUndrain(const ClusterConfig& config, const std::string& computer,
                   std::chrono::seconds master_wait);

}  // namespace copse::client

// `copse cluster up|down|status|logs`: run a whole cluster from its config
// (on this machine, or on its hosts over ssh: client/remote_cluster.h), stop
// it, show it, and show a daemon's log. Each returns the process exit code
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

int ClusterUp(const ClusterConfig& config, const UpOptions& options);
int ClusterDown(const ClusterConfig& config);
// Waits up to `master_wait` for a master that does not answer.
int ClusterStatusCommand(const ClusterConfig& config, bool json, std::chrono::seconds master_wait);
// The last `lines` lines of the log of `who` (a computer, or "master"),
// escaped as docs/cli.md says for a terminal.
// What runs on each host (over ssh when the config has other hosts).
int ClusterHostsStatus(const ClusterConfig& config, bool json);
int ClusterLogs(const ClusterConfig& config, const std::string& who, int lines);

}  // namespace copse::client

// `copse cluster up|down|status`: run a whole cluster on this machine from its
// config, stop it, and show it. Each returns the process exit code (docs/design.md
// §12: 0 ok, 1 failed, 2 bad usage or input) after printing what happened.
#pragma once

#include <chrono>

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

}  // namespace copse::client

// `copse app put|ls|show|rm`: the cluster's program store (docs/sdk.md
// "Programs shipped through the DFS"). `put` checks the file first (a .tar
// must unpack as a worker will unpack it and hold its entry point), has
// the master check the name and version, uploads the file to the DFS while
// hashing it, and has the master record it with its SHA-256. Putting a
// program is an operator action: it needs the cluster's credential. Each
// returns the process exit code (0 ok, 1 the operation failed, 2 bad usage
// or input).
#pragma once

#include <chrono>
#include <string>

#include "common/config.h"

namespace copse::client {

struct AppPutOptions {
  std::string name;
  std::string file;
  std::string version;  // empty: the next whole number
  std::string entry;    // a .tar's entry point; default: a file named like the program
  bool shadow = false;  // take the place of the apps directory's program of this name
  bool json = false;
  std::string computer;
  std::chrono::seconds master_wait{30};
};

struct AppListOptions {
  std::string name;  // empty: every program (ls); else its versions (show)
  bool json = false;
  std::chrono::seconds master_wait{30};
};

struct AppRemoveOptions {
  std::string program;  // NAME (every version) or NAME@VERSION
  std::chrono::seconds master_wait{30};
};

int AppPut(const ClusterConfig& config, const AppPutOptions& o);
int AppList(const ClusterConfig& config, const AppListOptions& o);
int AppRemove(const ClusterConfig& config, const AppRemoveOptions& o);

}  // namespace copse::client

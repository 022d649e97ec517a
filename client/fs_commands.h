// `copse fs put|get|cat|ls|stat|rm`: the DFS from the command line (docs/design.md
// §12, docs/dfs.md). Each returns the process exit code (0 ok, 1 the
// operation failed, 2 bad usage or input) after printing what happened; data
// and --json documents go to stdout, errors to stderr.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/config.h"
#include "copse/status.h"

namespace copse::dfs {
class DfsClient;
}

namespace copse::client {

struct FsOptions {
  std::string local;  // put: source file; get: destination file
  std::string path;   // the DFS path
  int partitions = 1;
  int replication = 0;  // 0: the config's
  std::string placement = "writer";
  uint64_t record_size = 0;  // put: split fixed-size records instead of lines
  std::string computer;      // the computer this client runs on; empty: outside
  int partition = -1;        // cat: one partition only
  bool json = false;
  bool stats = false;                    // get/cat: print bytes read per locality level to stderr
  std::chrono::seconds master_wait{30};  // --master-wait
};

// A DFS client for this cluster, as the computer `computer` (empty: outside).
Result<std::unique_ptr<dfs::DfsClient>> ConnectDfs(const ClusterConfig& config,
                                                   const std::string& computer,
                                                   std::chrono::seconds master_wait);

int FsPut(const ClusterConfig& config, const FsOptions& o);
int FsGet(const ClusterConfig& config, const FsOptions& o);
int FsCat(const ClusterConfig& config, const FsOptions& o);
int FsList(const ClusterConfig& config, const FsOptions& o);
int FsStat(const ClusterConfig& config, const FsOptions& o);
int FsRemove(const ClusterConfig& config, const FsOptions& o);

}  // namespace copse::client

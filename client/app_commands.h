// `copse gen APP`: writes a sample app's generated input into the DFS
// (docs/design.md §12, docs/apps.md) — the paper's kind of data, partition sizes
// the paper's times --scale, placed as the paper placed it (spread at
// random; DatabaseJoin's big table co-located with its small one,
// partition by partition). Returns the process exit code (0 ok, 1 the
// operation failed, 2 bad usage or input).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/config.h"

namespace copse::client {

struct GenOptions {
  std::string app;  // an instance kind (apps/instances.h), or "prime" for prime_small
  std::string output;
  int partitions = 4;
  double scale = 0.001;
  uint64_t seed = 1;
  std::string placement = "random";      // of the (first) file
  int replication = 0;                   // 0: the config's
  std::string computer;                  // the computer this runs on; empty: outside
  std::chrono::seconds master_wait{30};  // --master-wait
};

int Gen(const ClusterConfig& config, const GenOptions& o);

}  // namespace copse::client

// Test helpers shared by the Namespace's unit tests: six live computers in
// two racks, and options with small blocks and a one-minute grace period.
// Header-only.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "dfs/namespace.h"
#include "dfs/placement.h"

namespace copse::dfs::testing {

// c00 c01 c02 in rack r0, c10 c11 c12 in rack r1, without `except`.
inline std::vector<PlacementComputer> Live(const std::vector<std::string>& except = {}) {
  std::vector<PlacementComputer> out;
  for (const char* c : {"c00", "c01", "c02", "c10", "c11", "c12"}) {
    if (std::find(except.begin(), except.end(), c) != except.end()) continue;
    out.push_back({c, std::string("r") + c[1]});
  }
  return out;
}

// 1000-byte blocks, replication 3, 60 s of grace.
inline NamespaceOptions SmallNamespace() {
  NamespaceOptions o;
  o.block_size = 1000;
  o.default_replication = 3;
  o.uncommitted_grace = std::chrono::seconds(60);
  return o;
}

}  // namespace copse::dfs::testing

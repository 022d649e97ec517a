// Topology: the racks and computers the scheduler places tasks on, each
// computer with a number of task slots (Quincy §8 allows more than one).
// Built from a cluster config, or by hand in tests and benchmarks.
// Thread-safety: plain data.
#pragma once

#include <string>
#include <vector>

#include "common/config.h"
#include "copse/status.h"
#include "scheduler/events.h"

namespace copse::scheduler {

struct ComputerSpec {
  std::string name;
  RackId rack = 0;
  int slots = 1;
};

struct Topology {
  std::vector<std::string> racks;
  std::vector<ComputerSpec> computers;  // ComputerId = index

  int num_racks() const { return static_cast<int>(racks.size()); }
  int num_computers() const { return static_cast<int>(computers.size()); }

  // `racks` racks of `per_rack` computers with `slots` slots each, named
  // r<i> and c<i>. For tests and benchmarks.
  static Topology Uniform(int racks, int per_rack, int slots = 1);
};

// Ok if every computer names a valid rack and has at least one slot, and
// there is at least one rack and one computer.
Status ValidateTopology(const Topology& t);

// The topology of a cluster config (ComputerId = index in config.computers).
Result<Topology> TopologyFromConfig(const ClusterConfig& config);

}  // namespace copse::scheduler

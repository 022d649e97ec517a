#include "scheduler/topology.h"

namespace copse::scheduler {

namespace {

// "r7", "c12": built by appending, which keeps GCC 12's -Wrestrict quiet.
std::string Name(char prefix, size_t i) {
  std::string s(1, prefix);
  s += std::to_string(i);
  return s;
}

}  // namespace

Topology Topology::Uniform(int racks, int per_rack, int slots) {
  Topology t;
  for (int r = 0; r < racks; ++r) {
    t.racks.push_back(Name('r', r));
    for (int i = 0; i < per_rack; ++i) {
      t.computers.push_back({Name('c', t.computers.size()), r, slots});
    }
  }
  return t;
}

Status ValidateTopology(const Topology& t) {
  if (t.racks.empty()) return InvalidArgument("topology has no racks");
  if (t.computers.empty()) return InvalidArgument("topology has no computers");
  for (size_t i = 0; i < t.computers.size(); ++i) {
    const ComputerSpec& c = t.computers[i];
    if (c.rack < 0 || c.rack >= t.num_racks()) {
      return InvalidArgument("computer " + c.name + " names rack " + std::to_string(c.rack) +
                             " but there are " + std::to_string(t.num_racks()) + " racks");
    }
    if (c.slots < 1) {
      return InvalidArgument("computer " + c.name + " has " + std::to_string(c.slots) +
                             " slots; expected at least 1");
    }
  }
  return Status::Ok();
}

Result<Topology> TopologyFromConfig(const ClusterConfig& config) {
  Topology t;
  for (const RackConfig& r : config.racks) t.racks.push_back(r.name);
  for (const ComputerConfig& c : config.computers) {
    t.computers.push_back({c.name, c.rack_index, c.slots});
  }
  COPSE_RETURN_IF_ERROR(ValidateTopology(t).WithContext(config.source.string()));
  return t;
}

}  // namespace copse::scheduler

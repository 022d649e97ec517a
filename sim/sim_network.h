// SimNetwork: a cluster's network (docs/design.md §10) on SimGrid's S4U API:
// one host per computer with a full-duplex link to its rack switch, one
// full-duplex uplink per rack to the core switch (the core switch itself is
// not a bottleneck, as in the Quincy paper's cluster). SimGrid's flow-level
// model (CM02, max-min fair sharing, no cross-traffic) shares every link
// among the transfers crossing it, so 1 GB over a lone 1 Gbit/s path takes
// exactly 8 s.
//
// Each rack also gets a "pool" host whose link carries the rack's aggregate
// computer bandwidth: a transfer gathering small pieces from many computers
// of a rack (an all-to-all shuffle) is sent as one flow from the rack's pool,
// which keeps the uplink and destination-link contention while sparing
// SimGrid one flow per piece.
//
// SimGrid allows one engine per process: CreateEngine() once, then Build().
// Thread-safety: SimGrid's; use from the simulation's actors only.
#pragma once

#include <memory>
#include <vector>

#include "common/config.h"
#include "copse/status.h"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace copse::sim {

struct NetworkSpec {
  std::vector<int> rack_of;  // computer -> rack
  int num_racks = 0;
  double computer_link_bps = 1e9;  // bits per second
  double rack_uplink_bps = 6e9;
};

NetworkSpec NetworkSpecFromConfig(const ClusterConfig& config);

// The process's SimGrid engine with Copse's model settings (CM02, no
// cross-traffic, thread contexts — needed under AddressSanitizer — and
// SimGrid's own logging silenced below warnings). REQUIRES: called once.
simgrid::s4u::Engine& CreateEngine();

class SimNetwork {
 public:
  // Creates the hosts, links and routes. REQUIRES: CreateEngine() was called
  // and no platform was loaded. kInvalidArgument for bad bandwidths or racks.
  static Result<std::unique_ptr<SimNetwork>> Build(const NetworkSpec& spec);

  simgrid::s4u::Host* computer(int c) const { return computers_[c]; }
  simgrid::s4u::Host* rack_pool(int rack) const { return pools_[rack]; }
  // A host with no links, for actors that only coordinate.
  simgrid::s4u::Host* controller() const { return controller_; }
  const NetworkSpec& spec() const { return spec_; }

 private:
  explicit SimNetwork(NetworkSpec spec) : spec_(std::move(spec)) {}

  NetworkSpec spec_;
  std::vector<simgrid::s4u::Host*> computers_;
  std::vector<simgrid::s4u::Host*> pools_;
  simgrid::s4u::Host* controller_ = nullptr;
};

}  // namespace copse::sim

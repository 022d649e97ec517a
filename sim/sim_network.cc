#include "sim/sim_network.h"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>
#include <utility>

namespace copse::sim {

namespace sg4 = simgrid::s4u;
using Dir = sg4::LinkInRoute::Direction;

NetworkSpec NetworkSpecFromConfig(const ClusterConfig& config) {
  NetworkSpec s;
  for (const ComputerConfig& c : config.computers) s.rack_of.push_back(c.rack_index);
  s.num_racks = static_cast<int>(config.racks.size());
  s.computer_link_bps = config.network.computer_link_bps;
  s.rack_uplink_bps = config.network.rack_uplink_bps;
  return s;
}

namespace {

// prefix + index (appending sidesteps a GCC 12 -Wrestrict false positive).
std::string Named(const char* prefix, int index) {
  std::string s(prefix);
  s += std::to_string(index);
  return s;
}

}  // namespace

sg4::Engine& CreateEngine() {
  // Settings go in through argv so that they hold before the engine starts
  // its context factory.
  static char name[] = "copse-sim";
  static char model[] = "--cfg=network/model:CM02";
  static char cross[] = "--cfg=network/crosstraffic:0";
  static char contexts[] = "--cfg=contexts/factory:thread";
  static char log[] = "--log=root.thresh:warning";
  static char* argv[] = {name, model, cross, contexts, log, nullptr};
  static int argc = 5;
  static sg4::Engine engine(&argc, argv);
  return engine;
}

Result<std::unique_ptr<SimNetwork>> SimNetwork::Build(const NetworkSpec& spec) {
  if (!(spec.computer_link_bps > 0) || !(spec.rack_uplink_bps > 0)) {
    return InvalidArgument("network: bandwidths must be positive");
  }
  if (spec.num_racks < 1 || spec.rack_of.empty()) {
    return InvalidArgument("network: needs at least one rack and one computer");
  }
  std::vector<int> per_rack(spec.num_racks, 0);
  for (int r : spec.rack_of) {
    if (r < 0 || r >= spec.num_racks) return InvalidArgument("network: computer in a bad rack");
    ++per_rack[r];
  }
  std::unique_ptr<SimNetwork> net(new SimNetwork(spec));
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  const double kFlops = 1e9;  // hosts never compute in the simulation
  const int n = static_cast<int>(spec.rack_of.size());
  // Link bandwidths are in bytes per second.
  std::vector<sg4::Link*> links;
  for (int c = 0; c < n; ++c) {
    net->computers_.push_back(zone->create_host(Named("c", c), kFlops));
    links.push_back(zone->create_split_duplex_link(Named("l", c), spec.computer_link_bps / 8)
                        ->set_latency(0)
                        ->seal());
  }
  std::vector<sg4::Link*> uplinks;
  std::vector<sg4::Link*> pool_links;
  for (int r = 0; r < spec.num_racks; ++r) {
    net->pools_.push_back(zone->create_host(Named("pool", r), kFlops));
    uplinks.push_back(zone->create_split_duplex_link(Named("up", r), spec.rack_uplink_bps / 8)
                          ->set_latency(0)
                          ->seal());
    double pool_bps = spec.computer_link_bps * std::max(1, per_rack[r]);
    pool_links.push_back(
        zone->create_split_duplex_link(Named("pl", r), pool_bps / 8)->set_latency(0)->seal());
  }
  net->controller_ = zone->create_host("controller", kFlops);
  auto route = [&](sg4::Host* a, sg4::Link* la, int ra, sg4::Host* b, sg4::Link* lb, int rb) {
    std::vector<sg4::LinkInRoute> path{{la, Dir::UP}};
    if (ra != rb) {
      path.emplace_back(uplinks[ra], Dir::UP);
      path.emplace_back(uplinks[rb], Dir::DOWN);
    }
    path.emplace_back(lb, Dir::DOWN);
    zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, path, true);
  };
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      route(net->computers_[a], links[a], spec.rack_of[a], net->computers_[b], links[b],
            spec.rack_of[b]);
    }
  }
  for (int r = 0; r < spec.num_racks; ++r) {
    for (int b = 0; b < n; ++b) {
      route(net->pools_[r], pool_links[r], r, net->computers_[b], links[b], spec.rack_of[b]);
    }
  }
  zone->seal();
  return net;
}

}  // namespace copse::sim

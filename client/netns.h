// Network emulation for `copse cluster up --netns` (docs/netns.md): every
// computer runs in its own Linux network namespace, the computers of a rack
// hang off a rack bridge, the rack bridges hang off a core bridge, and each
// computer link and rack uplink is shaped with `tc` (tbf, both directions) to
// the config's bandwidths. Bridges, uplinks and the master live in one "core"
// namespace of the cluster, so nothing is added to the root namespace except
// the namespaces' names under /run/netns.
//
// Every name carries a per-cluster prefix ("cp" + 6 hex digits of a hash of
// the data root) and is recorded in <data_root>/cluster.netns.json before it
// is created, so `cluster down` removes exactly what `up` made, also after a
// crash. The daemons read a derived config, <data_root>/netns/cluster.toml,
// whose hosts are the emulated addresses (master 10.77.0.1, computer C of
// rack R 10.77.R+1.C+1, one /16); the user's config is never modified.
//
// Client commands (`cluster status`, `fs ...`) enter the cluster's network by
// themselves (EnterClusterNetns), so they work unchanged. Needs CAP_NET_ADMIN
// and CAP_SYS_ADMIN (root) and the iproute2 tools `ip` and `tc`.
// Thread-safety: free functions and a value type; EnterClusterNetns switches
// the calling thread's namespace (call it before starting threads).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "copse/status.h"

namespace copse::client {

// What `up --netns` made, as recorded in <data_root>/cluster.netns.json.
struct NetnsState {
  std::string prefix;                   // every created name starts with it
  bool complete = false;                // false while `up` is (or was, before a crash) building
  std::string core;                     // the core namespace (bridges, uplinks, the master)
  std::vector<std::string> namespaces;  // every namespace, the core included
  std::map<std::string, std::string> computer_netns;  // computer name -> its namespace
  std::filesystem::path derived_config;
  std::filesystem::path user_config;
};

// Where `cluster up --netns` records the emulated network (inline: the
// master client, which links no network code, asks whether it exists).
inline std::filesystem::path NetnsStatePath(const ClusterConfig& config) {
  return config.data_root / "cluster.netns.json";
}

// The recorded state, or nullopt when the cluster was not started with --netns.
Result<std::optional<NetnsState>> ReadNetnsState(const ClusterConfig& config);

// The prefix of every name this cluster's emulated network uses.
std::string NetnsPrefix(const ClusterConfig& config);

// Checks the requirements of --netns without changing anything: root
// capabilities (CAP_NET_ADMIN, CAP_SYS_ADMIN), `ip` and `tc`, and that the
// config fits the address scheme (<= 254 racks, <= 254 computers per rack).
// FailedPrecondition for a missing capability or tool, InvalidArgument for the
// config.
Status CheckNetnsRequirements(const ClusterConfig& config);

// The emulated network of one cluster, built (or found complete) by Setup.
class NetnsCluster {
 public:
  // Builds the network for `user` unless a complete one is recorded and
  // `processes_running` (then it is reused as is). A half-built one left by a
  // crashed `up` is removed first when no process of the cluster runs, and is
  // an error otherwise. On failure everything created is removed again.
  // Writes the derived config and moves the calling thread into the core
  // namespace, so the caller reaches the master at its emulated address.
  static Result<NetnsCluster> Setup(const ClusterConfig& user, bool processes_running);

  const ClusterConfig& config() const { return config_; }  // the derived config
  const NetnsState& state() const { return state_; }
  bool created() const { return created_; }

  // Starts `exe args...` like launcher.h's Spawn, inside the namespace of
  // `computer` (the core namespace for an empty name).
  Result<int> Spawn(const std::string& computer, const std::filesystem::path& exe,
                    const std::vector<std::string>& args,
                    const std::filesystem::path& output) const;

 private:
  ClusterConfig config_;
  NetnsState state_;
  bool created_ = false;
};

// Deletes every recorded namespace that still exists (and with the core one
// every bridge and link) and then the state file and the derived config.
// Processes must be stopped first. Appends one line per warning to `notes`.
// Returns how many namespaces were deleted.
Result<int> TeardownNetns(const ClusterConfig& config, std::vector<std::string>* notes);

// For client commands: when the cluster runs in network namespaces, moves the
// calling thread into the namespace of `computer` (or the core namespace when
// it is empty or unknown) and returns the derived config; nullopt when the
// cluster does not use namespaces.
Result<std::optional<ClusterConfig>> EnterClusterNetns(const ClusterConfig& config,
                                                       const std::string& computer);

}  // namespace copse::client

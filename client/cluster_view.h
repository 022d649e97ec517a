// What the `cluster` commands share about a running cluster: its status
// from the master (as a table or a JSON document), the ends of daemons'
// logs, and whether an address is this machine's (which decides whether
// `cluster up` starts daemons here or over ssh; docs/deploy.md).
// Thread-safety: free functions.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "client/master_client.h"
#include "common/config.h"
#include "copse/status.h"

namespace copse::client {

// The last `lines` lines of the file at `path` (all of it when it has
// fewer), read backwards from its end so that a long log costs only its tail.
Result<std::string> LastLines(const std::filesystem::path& path, int lines);
// The last `lines` lines of a file, indented, for error reports; "" when
// it cannot be read.
std::string Tail(const std::filesystem::path& path, int lines);

Result<ClusterStatus> FetchStatus(const ClusterConfig& config, net::ConnectRetry retry = {});
// Asks the master for its status every `poll` until `stop` says so for an
// answer (or for why there was none) or `deadline` passes; the last answer.
// The commands that wait for a cluster to reach a state (`up`, `restart`)
// wait through this.
Result<ClusterStatus> PollStatus(const ClusterConfig& config,
                                 std::chrono::steady_clock::time_point deadline,
                                 std::chrono::milliseconds poll,
                                 const std::function<bool(const Result<ClusterStatus>&)>& stop);
// A line about the cluster, then a row per computer.
void PrintStatusTable(const ClusterConfig& config, const ClusterStatus& st);
nlohmann::json StatusJson(const ClusterConfig& config, const ClusterStatus& st);

// Creates the cluster secret (and the HTTP API token, when the config
// names one) if missing, saying so on stdout.
Status EnsureSecrets(const ClusterConfig& config);

// Whether `address` is one of this machine's: a loopback address or one an
// interface here has.
bool OnThisMachine(const std::string& address);
// Whether the master and every computer of `config` are on this machine:
// then `cluster up` starts them here, else on their hosts over ssh.
bool AllDaemonsHere(const ClusterConfig& config);

}  // namespace copse::client

// HostProbe: what `copse cluster` learns about a host in one ssh round trip
// (docs/deploy.md, "Preflight"): its OS and architecture, its clock, the
// Copse build installed in install_dir, whether rsync is there, whether the
// directories the cluster needs are writable and how much space they have,
// the TCP ports something listens on, and the Copse daemons running in its
// network namespace. The script is fixed text run by `sh -c` with the
// install directory and the directories to check as its arguments; its
// output comes from another machine and is parsed as untrusted input.
//
// From probes, `up` decides what to do: EvaluatePreflight lists every
// failure of every host with its fix, and OurDaemons says which of the
// config's daemons already run where (started from this install with this
// config).
// Thread-safety: pure functions and values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "copse/status.h"

namespace copse::client {

struct ProbedDir {
  std::filesystem::path path;
  // It, or the nearest ancestor that exists, is a directory a file can be
  // created in (tried: a temporary file is made and removed).
  bool writable = false;
  uint64_t free_bytes = 0;
};

struct ProbedProcess {
  int pid = 0;
  std::string exe;            // " (deleted)" removed
  bool exe_replaced = false;  // the executable it runs was replaced or deleted since it started
  std::vector<std::string> args;
};

struct HostProbe {
  std::string os;    // "debian 12"
  std::string arch;  // "x86_64"
  int64_t clock_ns = 0;
  std::string installed_build;  // the build id in install_dir; empty when none
  std::string secret_digest;    // SHA-256 of the secret file there; empty when none
  bool has_rsync = false;
  std::vector<ProbedDir> dirs;
  std::set<uint16_t> listening;          // TCP ports in LISTEN state
  std::vector<ProbedProcess> processes;  // copse-master and copse-worker processes
};

// The script, run as `sh -c SCRIPT copse-probe INSTALL_DIR SECRET_FILE DIR...`.
const std::string& ProbeScript();

// Parses the script's output. Lines it does not know are ignored (a newer
// script may say more); a known line that is malformed is an error naming
// it.
Result<HostProbe> ParseProbe(std::string_view out);

// What runs and what should: the daemons of `config` placed on one host.
struct HostPlan {
  std::string address;  // resolved: how the config's daemons find each other
  std::string name;     // as the config writes it: what ssh is given
  bool master = false;
  std::vector<std::string> computers;  // config order
  // The directories this host needs: the install, the data directories.
  std::vector<std::filesystem::path> dirs;
  // Each port the config gives a daemon here, with what it is for.
  std::map<uint16_t, std::string> ports;
};

// "node1 (10.0.0.1)", or the address alone when the config gave it.
std::string HostLabel(const HostPlan& h);

// The hosts of `remote` (the config as it is read on the hosts: paths under
// install_dir), the master's first, then in the order computers appear.
std::vector<HostPlan> PlanHosts(const ClusterConfig& remote);

// A daemon of this cluster found running: role "master" or "worker".
struct RunningDaemon {
  std::string role;
  std::string computer;  // workers
  int pid = 0;
  bool replaced = false;  // its executable was replaced since it started
};

// The processes of `probe` that run this cluster's daemons: an executable of
// install_dir with `--config INSTALL_DIR/etc/cluster.toml`.
std::vector<RunningDaemon> OurDaemons(const HostProbe& probe,
                                      const std::filesystem::path& install_dir);

// Whether `daemons` holds this one ("master" with an empty computer).
bool Runs(const std::vector<RunningDaemon>& daemons, const std::string& role,
          const std::string& computer);

// What this machine and its install are, for comparing hosts with.
struct LocalFacts {
  std::string os, arch;
  std::string build;          // the install's build id
  std::string secret_digest;  // SHA-256 of the cluster secret here
  // This machine's clock when the probe was sent and when its answer came:
  // the host's clock, read in between, is compared with the interval.
  int64_t sent_ns = 0, answered_ns = 0;
};

// One host's preflight: a cell per check for the table, and every failure
// with its fix.
struct PreflightRow {
  std::string host;
  bool reachable = false;
  std::string system;  // "debian 12 x86_64"
  std::string clock;   // "+0.00s": the least offset the host's clock can have from this machine's
  std::string space;   // the least free space among its directories
  std::string copse;   // "none", "this build" or "build ID", then ", N running"
  std::vector<std::string> failures;  // each "what: fix"
  std::vector<std::string> notes;     // not failures, worth saying
};

// `probe` null when ssh failed with `ssh_error`. With `upgrade` (a rolling
// restart onto a new install), daemons of another build running are what is
// expected, not a failure.
PreflightRow EvaluatePreflight(const ClusterConfig& remote, const HostPlan& plan,
                               const HostProbe* probe, const std::string& ssh_error,
                               const LocalFacts& local, bool upgrade = false);

// The OS of this machine as the script reports a host's ("debian 12"), and its architecture.
std::string LocalOs();
std::string LocalArch();

}  // namespace copse::client

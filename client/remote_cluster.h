// `copse cluster up|down|status --hosts|logs` for a config whose daemons are
// not all on this machine (docs/deploy.md): every host is reached with ssh
// ([deploy] in the config), probed at once (client/host_probe.h), given the
// install this `copse` runs from with rsync, and its daemons are started from
// that install in the background (setsid, output appended to a file in the
// daemon's data directory) or stopped by pid, found by their executable
// under install_dir and their `--config INSTALL_DIR/etc/cluster.toml`.
// On the hosts the config is read from INSTALL_DIR/etc/cluster.toml, so its
// relative paths are relative to INSTALL_DIR/etc there.
// Thread-safety: each function runs alone, with a thread per host.
#pragma once

#include <chrono>
#include <string>

#include "client/cluster_commands.h"
#include "client/host_probe.h"
#include "common/config.h"

namespace copse::client {

// Each returns the process exit code (0 ok, 1 failed, 2 bad usage or input).
int RemoteUp(const ClusterConfig& config, const UpOptions& options);
int RemoteDown(const ClusterConfig& config);
// Restarts the master, then one worker at a time, each only once the one
// before has registered again and no DFS block is under-replicated; with
// `install`, ships this copse's install first. Running jobs keep running
// (their vertices on a restarted worker run again elsewhere).
int RemoteRollingRestart(const ClusterConfig& config, const RestartOptions& options);
// A row per host: reachable, what should run there, what does, which build.
int RemoteHostsStatus(const ClusterConfig& config, bool json);
// The last `lines` of the log of `who` ("master" or a computer), fetched
// from its host.
int RemoteLogs(const ClusterConfig& config, const std::string& who, int lines);

// The command that starts a daemon ("master", or "worker" and its computer)
// on its host and prints its pid: in the background from the install, or,
// with [deploy] systemd, as the install's systemd unit (linked into
// systemd's search path, then started).
std::vector<std::string> DaemonStartArgv(const ClusterConfig& remote, const std::string& role,
                                         const std::string& computer);
// The command that stops `daemons` on their host: SIGTERM, then SIGKILL
// for those left after `grace` (it prints "killed PID..."); with systemd,
// `systemctl stop` of their units.
std::vector<std::string> DaemonStopArgv(const ClusterConfig& remote,
                                        const std::vector<RunningDaemon>& daemons,
                                        std::chrono::seconds grace);

}  // namespace copse::client

// Ssh: how `copse cluster` reaches the hosts of a config that are not this
// machine (docs/deploy.md). A remote command is an argv of our own making,
// each word quoted for the remote shell, so that nothing from a config or a
// host reaches that shell as syntax; ssh runs in BatchMode (a host that
// would ask for a password fails at once instead of hanging) with a connect
// timeout, as [deploy] ssh_user, ssh_port and ssh_options say. Files go with
// rsync over the same ssh, compared by checksum, so only what changed moves.
// Thread-safety: free functions; each call runs its own process.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/subprocess.h"
#include "copse/status.h"

namespace copse::client {

// `s` as one word for a POSIX shell: in single quotes, each ' written '\''.
std::string ShellQuote(const std::string& s);
// The words of `argv`, each quoted, joined by spaces.
std::string ShellCommand(const std::vector<std::string>& argv);

// `s` as one word of rsync's -e command, which rsync splits itself: in
// single quotes, each ' doubled (rsync's man page, --rsh).
std::string RsyncQuote(const std::string& s);

// The destination ssh and rsync name: "user@host" or "host".
std::string SshDestination(const DeployConfig& deploy, const std::string& host);

// ssh's own arguments (no program name, no destination, no command):
// BatchMode, the connect timeout, the port and [deploy] ssh_options.
std::vector<std::string> SshOptions(const DeployConfig& deploy,
                                    std::chrono::seconds connect_timeout);

struct RemoteResult {
  int exit_code = -1;  // the remote command's; 255 when ssh itself failed
  std::string out;
  std::string err;
  bool timed_out = false;
};

// Runs `argv` on `host` with ssh; `deadline` bounds the whole call. An error
// only when ssh could not be run here; what the host said (and ssh's own
// failure, exit code 255) is in the result.
Result<RemoteResult> RunRemote(const DeployConfig& deploy, const std::string& host,
                               const std::vector<std::string>& argv,
                               std::chrono::milliseconds deadline);

// Runs `commands` one after the other in one ssh call (each whether or not
// the one before succeeded); the exit code is the last one's.
Result<RemoteResult> RunRemoteCommands(const DeployConfig& deploy, const std::string& host,
                                       const std::vector<std::vector<std::string>>& commands,
                                       std::chrono::milliseconds deadline);

// Copies `sources` (paths here; a trailing '/' copies a directory's
// contents) into `target_dir` on `host` with rsync over ssh: links, modes
// and times kept, owned by the ssh user there, files compared by checksum
// and sent only when their content differs. `extra` are more rsync options (--chmod=...,
// --exclude=...).
Result<RemoteResult> RsyncTo(const DeployConfig& deploy, const std::string& host,
                             const std::vector<std::string>& sources,
                             const std::filesystem::path& target_dir,
                             const std::vector<std::string>& extra,
                             std::chrono::milliseconds deadline);

// Connection sharing: while an SshConnections lives, the ssh and rsync calls
// made with the DeployConfig it was given share one connection per host
// (ssh's ControlMaster, sockets in a private directory), so that the many
// short commands of `cluster up` pay for one handshake per host. Options
// the user gives in ssh_options come first and win. The destructor closes
// the connections and removes the directory.
class SshConnections {
 public:
  // Adds the sharing options to `deploy` (unless no private directory can
  // be made: then every call connects anew).
  SshConnections(DeployConfig& deploy, std::vector<std::string> hosts);
  ~SshConnections();
  SshConnections(const SshConnections&) = delete;
  SshConnections& operator=(const SshConnections&) = delete;

 private:
  DeployConfig& deploy_;
  std::vector<std::string> hosts_;
  std::filesystem::path dir_;
};

// "ssh: connect to host 10.0.0.7 port 22: Connection refused" and the like:
// the last non-empty line ssh wrote, for a table cell.
std::string SshError(const RemoteResult& r);

}  // namespace copse::client

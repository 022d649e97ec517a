// Start-up and shutdown shared by the daemons (copse-master, copse-worker):
// load and validate the cluster config, load the shared secret, log to a file
// under the process's data dir and to stderr, and run an event loop until
// SIGTERM or SIGINT asks for a clean stop.
#pragma once

#include <asio/io_context.hpp>
#include <filesystem>
#include <functional>
#include <string>

#include "common/config.h"
#include "copse/status.h"

namespace copse {

struct DaemonEnv {
  ClusterConfig config;
  std::string secret;
};

// Loads `config_path` and the secret it names. Errors are reported by the caller.
Result<DaemonEnv> LoadDaemonEnv(const std::string& config_path);

// Logs to `log_file` and stderr at `level_flag` if set, else the config's
// level. With `quiet`, only errors go to stderr (daemons started by
// `copse cluster up` have their stderr in a file beside the log).
Status InitDaemonLogging(const std::string& process, const std::filesystem::path& log_file,
                         const std::string& level_flag, bool quiet, const ClusterConfig& config);

// Runs `io` until SIGTERM/SIGINT; then calls `on_stop` (which should close
// servers and clients) and lets the loop finish what is pending.
void RunUntilSignalled(asio::io_context& io, const std::function<void()>& on_stop);

}  // namespace copse

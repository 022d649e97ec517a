#include "common/daemon.h"

#include <spdlog/spdlog.h>

#include <asio/signal_set.hpp>
#include <csignal>

#include "common/log.h"
#include "common/net/auth.h"
#include "common/net/guard.h"

namespace copse {

Result<DaemonEnv> LoadDaemonEnv(const std::string& config_path) {
  DaemonEnv env;
  COPSE_ASSIGN_OR_RETURN(env.config, LoadClusterConfig(config_path));
  COPSE_ASSIGN_OR_RETURN(env.secret, net::LoadSecret(env.config.secret_file));
  return env;
}

Status InitDaemonLogging(const std::string& process, const std::filesystem::path& log_file,
                         const std::string& level_flag, bool quiet, const ClusterConfig& config) {
  LogOptions log;
  if (quiet) log.stderr_level = "error";
  log.process = process;
  log.file = log_file;
  log.level = level_flag.empty() ? config.log_level : level_flag;
  log.max_file_bytes = config.log_max_bytes;
  log.max_files = config.log_files;
  return InitLogging(log);
}

void RunUntilSignalled(asio::io_context& io, const std::function<void()>& on_stop) {
  asio::signal_set signals(io, SIGTERM, SIGINT);
  bool stopping = false;
  signals.async_wait([&](const asio::error_code& ec, int signo) {
    if (ec) return;
    spdlog::info("received signal {}; shutting down", signo);
    stopping = true;
    io.stop();
  });
  std::signal(SIGPIPE, SIG_IGN);
  // Request handlers turn their own faults into failed requests
  // (common/net/guard.h); anything that reaches here is a fault in the
  // daemon's own state (a timer's work), which stops the process loudly.
  net::GuardState("running the event loop", [&] { io.run(); });
  if (stopping) {
    // Close servers and clients, then let pending handlers (connections being
    // closed) finish; whatever is still pending after 5 s is abandoned.
    on_stop();
    io.restart();
    io.run_for(std::chrono::seconds(5));
  }
  spdlog::info("stopped");
}
}  // namespace copse

#include "client/terminal.h"

#include <unistd.h>

#include <iostream>

#include "client/master_client.h"
#include "common/text.h"

namespace copse::client {

std::string Shown(std::string_view s) { return EscapeForTerminal(s); }

int ReportFailure(std::string_view command, const Status& s) {
  std::cerr << "copse " << command << ": " << Shown(s.message()) << "\n";
  return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

Result<std::unique_ptr<MasterClient>> ConnectMaster(const ClusterConfig& config,
                                                    std::chrono::seconds wait) {
  return MasterClient::Connect(config, std::chrono::seconds(30), MasterWait(config, wait));
}

net::ConnectRetry MasterWait(const ClusterConfig& config, std::chrono::seconds wait) {
  net::ConnectRetry r;
  r.wait = wait;
  std::string where = config.master.host + ":" + std::to_string(config.master.port);
  r.on_wait = [where](const Status& why, std::chrono::milliseconds w) {
    std::cerr << "copse: the master at " << where << " does not answer (" << Shown(why.message())
              << "); waiting up to " << std::chrono::duration_cast<std::chrono::seconds>(w).count()
              << " s for it (--master-wait)\n";
  };
  return r;
}

std::string ForStdout(std::string_view s) {
  static const bool tty = ::isatty(STDOUT_FILENO) == 1;
  return tty ? EscapeForTerminal(s, /*keep_lines=*/true) : std::string(s);
}

}  // namespace copse::client

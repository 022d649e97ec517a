// What the `copse` tool writes to a terminal. Text that comes from the
// cluster (job and file names, failure reasons, logs) is not trusted: shown
// with its control characters and escape sequences made visible
// (common/text.h EscapeForTerminal), so a job name cannot clear the screen
// or forge a line of a table. Errors are one line, "copse COMMAND: why", and
// their exit code follows docs/design.md §12 (2 for bad input, 1 otherwise).
// Thread-safety: pure functions, and writes to std::cerr.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "common/config.h"
#include "common/net/blocking_client.h"
#include "copse/status.h"

namespace copse::client {

class MasterClient;

// `s` made safe to print in a line of its own or a table cell.
std::string Shown(std::string_view s);

// Prints "copse COMMAND: MESSAGE" on stderr; returns the exit code for `s`.
int ReportFailure(std::string_view command, const Status& s);

// The text of a log or a file for stdout: as it is when stdout is not a
// terminal (a pipe gets the bytes), else with control characters other than
// newline and tab made visible.
std::string ForStdout(std::string_view s);

// How `copse` waits for the master of `config` when it does not answer (it
// is restarting): for `wait` (--master-wait), saying so once on stderr.
net::ConnectRetry MasterWait(const ClusterConfig& config, std::chrono::seconds wait);

// A client of the master of `config`, waited for as MasterWait says; each
// call times out after 30 s.
Result<std::unique_ptr<MasterClient>> ConnectMaster(const ClusterConfig& config,
                                                    std::chrono::seconds wait);

}  // namespace copse::client

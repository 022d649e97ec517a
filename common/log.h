// Logging setup. Each process logs to a file under its data dir and to stderr
// through spdlog's default logger; code logs with spdlog::info(...) etc. from
// .cc files (spdlog stays out of headers). Call InitLogging once in main().
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace copse {

struct LogOptions {
  std::string process;         // logger name, e.g. "master" or "worker c01"
  std::filesystem::path file;  // empty: stderr only
  std::string level = "info";  // trace, debug, info, warn, error, critical, off
  bool to_stderr = true;
  // Only messages at this level or above go to stderr (the file gets `level`).
  std::string stderr_level = "trace";
};

// Replaces the default logger. Fails if the level is unknown or the file
// cannot be opened (its directory is created when missing).
Status InitLogging(const LogOptions& options);

// Flushes and drops all loggers; call before exit.
void ShutdownLogging();

}  // namespace copse

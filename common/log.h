// Logging setup. Each process logs to a file under its data dir and to stderr
// through spdlog's default logger; code logs with spdlog::info(...) etc. from
// .cc files (spdlog stays out of headers). Call InitLogging once in main().
//
// Every message is written as one line: text in it from outside (a peer's
// name, a vertex's reason, a path) has its newlines and control characters
// escaped (common/text.h EscapeForLog), so nobody can forge a log line. The
// file rotates by size: at `max_file_bytes` it becomes FILE.1 (FILE.1 becomes
// FILE.2, ...) and the oldest beyond `max_files` is removed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "copse/status.h"

namespace copse {

struct LogOptions {
  std::string process;         // logger name, e.g. "master" or "worker c01"
  std::filesystem::path file;  // empty: stderr only
  std::string level = "info";  // trace, debug, info, warn, error, critical, off
  bool to_stderr = true;
  // Only messages at this level or above go to stderr (the file gets `level`).
  std::string stderr_level = "trace";
  uint64_t max_file_bytes = 64u << 20;  // the file rotates at this size
  int max_files = 5;                    // rotated files kept besides the current one
};

// Replaces the default logger. Fails if the level is unknown or the file
// cannot be opened (its directory is created when missing).
Status InitLogging(const LogOptions& options);

// Flushes and drops all loggers; call before exit.
void ShutdownLogging();

}  // namespace copse

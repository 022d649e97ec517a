// Launcher: starts daemons as background processes on this machine and keeps
// a record of them (a pid file under the cluster's data root), so that
// `copse cluster down` stops exactly what `cluster up` started. A recorded
// process counts as running only while its pid is alive, not a zombie, and
// still runs the recorded executable (a reused pid is never signalled).
// Thread-safety: free functions; the pid file is not locked.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "copse/status.h"

namespace copse::client {

struct ProcessRecord {
  std::string role;      // "master" or "worker"
  std::string computer;  // workers only
  int pid = 0;
  std::string exe;  // absolute path of the executable
  std::string log;  // where it logs
};

// Missing file: an empty list. A damaged file is an error naming it.
Result<std::vector<ProcessRecord>> ReadPidFile(const std::filesystem::path& path);
// Written atomically (temp file + rename).
Status WritePidFile(const std::filesystem::path& path, const std::vector<ProcessRecord>& procs);

// True when `rec.pid` is alive (not a zombie) and runs `rec.exe`.
bool IsRunning(const ProcessRecord& rec);

// Starts `exe args...` (common/subprocess.h) in a new session with stdin from
// /dev/null and stdout and stderr appended to `output`, and leaves it running
// when this command exits. Returns the pid.
Result<int> Spawn(const std::filesystem::path& exe, const std::vector<std::string>& args,
                  const std::filesystem::path& output);

// Sends SIGTERM to each running process, waits up to `grace` for all to exit,
// then SIGKILLs what is left. Returns how many had to be killed.
int StopProcesses(const std::vector<ProcessRecord>& procs, std::chrono::milliseconds grace);

}  // namespace copse::client

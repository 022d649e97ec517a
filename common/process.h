// Processes seen through /proc: whether one (by pid) still exists in any
// form that can hold resources, and where this one's executable is. No state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace copse {

// The contents of a small file such as one under /proc/PID, or "" when it
// cannot be opened or read. Reading a /proc file of a process that exits
// meanwhile fails with ESRCH; std::ifstream turns that read error into an
// exception (libstdc++'s filebuf), so /proc is read with plain read(2).
std::string ReadProcFile(const std::filesystem::path& path);

// True while any thread of `pid` has not finished exiting. A killed
// multi-threaded process shows its leader as a zombie ('Z' in /proc/PID/stat)
// before its other threads are done tearing down, and until the last one is,
// its files (and so its RocksDB LOCK) are still open. A pid that is gone, or
// whose threads are all zombies, is not alive.
bool ProcessAlive(int pid);

// True when process `pid` holds a TCP socket listening on `port` (IPv4 or
// IPv6, any address), as its own network namespace sees it: the socket's
// inode in /proc/PID/net/tcp{,6} is one of its open files. False when that
// cannot be read (a process of another user, or one that is gone).
bool ListensOn(int pid, uint16_t port);

// Of this process's environment, what a program Copse runs for a user
// keeps: PATH, HOME, USER, LOGNAME, LANG, LANGUAGE, LC_*, TZ, TMPDIR and
// LD_LIBRARY_PATH, as "NAME=value" (not whatever else the shell that
// started a daemon held).
std::vector<std::string> ProgramEnvironment();

// The directory holding the running executable (/proc/self/exe): where a
// daemon or tool finds the executables built beside it.
std::filesystem::path ExecutableDir();

// A directory that lies beside the executables: in a build tree at
// <dir>/../`build_tree`, in an install at <prefix>/`installed` (docs/sdk.md
// "Install"); the build tree's when neither exists.
std::filesystem::path InstalledDir(const std::string& build_tree, const std::string& installed);
// Where vertex programs are by default: the build tree's apps/, an
// install's lib/copse/apps/.
std::filesystem::path DefaultAppsDir();

}  // namespace copse

// Processes seen through /proc: whether one (by pid) still exists in any
// form that can hold resources, and where this one's executable is. No state.
#pragma once

#include <filesystem>
#include <string>

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

// The directory holding the running executable (/proc/self/exe): where a
// daemon or tool finds the executables built beside it.
std::filesystem::path ExecutableDir();

}  // namespace copse

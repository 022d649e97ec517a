// Whether a process (by pid) still exists in any form that can hold
// resources. Reads /proc; no state.
#pragma once

namespace copse {

// True while any thread of `pid` has not finished exiting. A killed
// multi-threaded process shows its leader as a zombie ('Z' in /proc/PID/stat)
// before its other threads are done tearing down, and until the last one is,
// its files (and so its RocksDB LOCK) are still open. A pid that is gone, or
// whose threads are all zombies, is not alive.
bool ProcessAlive(int pid);

}  // namespace copse

// Heap settings for processes that move DFS chunks (workers, clients). A
// chunk buffer is 1 MiB; glibc serves such sizes with mmap by default and
// hands them back on free, so every chunk would pay a page fault per 4 KiB
// page (expensive on virtual machines). Keeping them in the heap lets freed
// chunk buffers be reused. Call once at the start of main().
#pragma once

#include <malloc.h>

namespace copse::dfs {

inline void TuneHeapForChunks() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
}

}  // namespace copse::dfs

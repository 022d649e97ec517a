// Test helper shared by the block store's and the local read path's unit
// tests: writes a block chunk by chunk, as the data port does. Header-only.
#pragma once

#include <algorithm>
#include <vector>

#include "copse/status.h"
#include "dfs/block_store.h"

namespace copse::dfs::testing {

// Writes `data` as block `id` in framed 1 MiB chunks and, when `commit`,
// commits it.
inline Status WriteBlock(BlockStore& store, BlockId id, const std::vector<uint8_t>& data,
                         bool commit = true, BlockSync sync = BlockSync::kStore) {
  COPSE_RETURN_IF_ERROR(store.BeginBlock(id, sync));
  uint32_t index = 0;
  for (size_t off = 0; off < data.size(); off += kChunkSize, ++index) {
    size_t n = std::min(kChunkSize, data.size() - off);
    std::vector<uint8_t> chunk(data.begin() + static_cast<long>(off),
                               data.begin() + static_cast<long>(off + n));
    FrameChunk(&chunk);
    COPSE_RETURN_IF_ERROR(store.PutChunk(id, index, chunk));
  }
  return commit ? store.CommitBlock(id, data.size(), index) : Status::Ok();
}

}  // namespace copse::dfs::testing

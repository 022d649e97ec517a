// Chunks: the unit in which a block is stored, sent and checked (docs/design.md
// §4). A block is a sequence of 1 MiB chunks (the last one may be shorter);
// "a framed chunk" is a chunk's bytes followed by their CRC32C, the form in
// which the block store keeps a chunk and the data port and the local read
// path carry it. The block store keys a chunk by (block id, chunk index).
// Thread-safety: pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "copse/status.h"
#include "dfs/dfs_types.h"

namespace copse::dfs {

inline constexpr size_t kChunkSize = 1u << 20;
inline constexpr size_t kChunkTrailer = 4;   // the CRC32C after a chunk's bytes
inline constexpr size_t kChunkKeySize = 12;  // see ChunkKey

// Chunks in a block of `size` bytes.
uint32_t ChunkCount(uint64_t size);

// Appends the CRC32C of `*chunk` to it, making a framed chunk.
void FrameChunk(std::vector<uint8_t>* chunk);

// Checks a framed chunk's trailer. kCorruption names `what` on a mismatch.
Status VerifyFramedChunk(std::span<const uint8_t> framed, const std::string& what);

// The kChunkKeySize-byte key of chunk `index` of block `id` (big-endian id,
// index), which the block store writes before the chunk's framed value in the
// block's file.
std::string ChunkKey(BlockId id, uint32_t index);

}  // namespace copse::dfs

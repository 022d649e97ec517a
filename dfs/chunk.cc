#include "dfs/chunk.h"

#include <fmt/format.h>

#include "dfs/crc32c.h"

namespace copse::dfs {

uint32_t ChunkCount(uint64_t size) {
  return static_cast<uint32_t>((size + kChunkSize - 1) / kChunkSize);
}

void FrameChunk(std::vector<uint8_t>* chunk) {
  uint32_t crc = Crc32c(*chunk);
  size_t n = chunk->size();
  chunk->resize(n + kChunkTrailer);
  for (size_t i = 0; i < kChunkTrailer; ++i) (*chunk)[n + i] = static_cast<uint8_t>(crc >> (8 * i));
}

Status VerifyFramedChunk(std::span<const uint8_t> framed, const std::string& what) {
  if (framed.size() < kChunkTrailer)
    return Corruption(fmt::format("{}: {} bytes is too short for a chunk", what, framed.size()));
  size_t n = framed.size() - kChunkTrailer;
  uint32_t stored = 0;
  for (size_t i = 0; i < kChunkTrailer; ++i)
    stored |= static_cast<uint32_t>(framed[n + i]) << (8 * i);
  uint32_t actual = Crc32c(framed.first(n));
  if (stored != actual) {
    return Corruption(fmt::format("{}: checksum mismatch (stored CRC32C {:08x}, data has {:08x})",
                                  what, stored, actual));
  }
  return Status::Ok();
}

std::string ChunkKey(BlockId id, uint32_t index) {
  std::string k(kChunkKeySize, '\0');
  for (int i = 0; i < 8; ++i) k[7 - i] = static_cast<char>((id >> (8 * i)) & 0xff);
  for (int i = 0; i < 4; ++i) k[11 - i] = static_cast<char>((index >> (8 * i)) & 0xff);
  return k;
}

}  // namespace copse::dfs

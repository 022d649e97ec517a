// The local read path ("short-circuit read"): a client on the same computer
// as a replica reads the block's chunks straight from the worker's block files
// (dfs/block_store.h) instead of through its data port. This is the client's side
// (LocalReadChannel); the worker's is LocalReadServer
// (dfs/local_read_server.h), and the wire format is in dfs/local_read_wire.h.
//
// The worker listens on a Unix-domain socket in its data dir
// (LocalReadSocketPath). A peer must run as the worker's user (SO_PEERCRED)
// and prove it holds the cluster secret with the same HMAC-SHA256
// challenge-response as every TCP port (common/net/auth.h); the worker proves
// it too. Then, for each block the client asks for, the worker answers with
// the committed block's size and, for each chunk, the block's file (an open
// file descriptor passed with SCM_RIGHTS: the client needs no access to the
// data dir) and the offset and length of the chunk's framed value.
//
// The client reads each chunk together with the key stored before it
// (ChunkKey; one pread into one reused buffer: bounded memory), checks the
// key and the chunk's CRC32C, and only then hands the bytes on. Anything
// doubtful - no socket, a refused handshake, an unknown location, a short
// read, a wrong key or checksum - ends the local path for that block;
// DfsClient then reads the rest through the data port, where the worker
// checks the stored chunk itself (and deletes and reports a bad copy).
//
// Thread-safety: LocalReadChannel is not thread-safe; UniqueFd and
// LocalBlock are plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "copse/status.h"
#include "dfs/dfs_types.h"

namespace copse::dfs {

// Where the worker whose data dir is `data_dir` listens for local reads.
std::filesystem::path LocalReadSocketPath(const std::filesystem::path& data_dir);

// An owned file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  void Reset();

 private:
  int fd_ = -1;
};

// A block opened for a local read: its chunks' files and places.
struct LocalBlock {
  struct Chunk {
    uint32_t file = 0;  // index into files
    uint32_t length = 0;
    uint64_t offset = 0;
  };
  uint64_t size = 0;
  uint32_t chunks = 0;  // in the whole block
  uint32_t first = 0;   // chunk_at[0] is chunk `first`
  std::vector<UniqueFd> files;
  std::vector<Chunk> chunk_at;
};

class LocalReadChannel {
 public:
  // Connects to the worker's socket and authenticates within `timeout`.
  // kUnavailable when nothing listens there, kPermissionDenied when the
  // worker refuses the proof or fails its own.
  static Result<std::unique_ptr<LocalReadChannel>> Connect(const std::filesystem::path& path,
                                                           const std::string& secret,
                                                           std::chrono::milliseconds timeout);

  // Opens chunks [first, ...) of `block`. Errors carry the worker's code
  // (kNotFound: not here; kUnavailable: locations unknown).
  Result<LocalBlock> Open(BlockId block, uint32_t first);

  // Reads chunk `index` of `block` (the i-th entry of `b.chunk_at`) into
  // *buffer and returns its verified bytes (without key and CRC).
  // kCorruption when the key or CRC32C does not match, kIoError on a failed
  // or short read.
  static Result<std::span<const uint8_t>> ReadChunk(const LocalBlock& b, size_t i, BlockId block,
                                                    std::vector<uint8_t>* buffer);

 private:
  explicit LocalReadChannel(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace copse::dfs

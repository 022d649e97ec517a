// The local read path ("short-circuit read"): a client on the same computer
// as a replica reads the block's chunks straight from the worker's blob files
// instead of through its data port.
//
// The worker listens on a Unix-domain socket in its data dir
// (LocalReadSocketPath). A peer must run as the worker's user (SO_PEERCRED)
// and prove it holds the cluster secret with the same HMAC-SHA256
// challenge-response as every TCP port (common/net/auth.h); the worker proves
// it too. Then, for each block the client asks for, the worker answers with
// the committed block's size and, for each chunk, the blob file (an open file
// descriptor passed with SCM_RIGHTS: the client needs no access to the data
// dir) and the offset and length of the chunk's framed value.
//
// The client reads each chunk together with the 12-byte key stored before it
// (one pread into one reused buffer: bounded memory), checks the key and the
// chunk's CRC32C, and only then hands the bytes on. Anything doubtful - no
// socket, a refused handshake, an unknown location, a short read, a wrong key
// or checksum - ends the local path for that block; DfsClient then reads the
// rest through the data port, where the worker checks the stored chunk itself
// (and deletes and reports a bad copy).
//
// Wire format (little-endian):
//   worker: "CPSL" u32 version nonce[32]        client: nonce[32] proof[32]
//   worker: proof[32]
//   client: "RDBK" u32 first_chunk u64 block    (repeated)
//   worker: "RPLY" u32 code u64 size u32 chunks u32 first u32 files u32 n
//           + n x (u32 file u32 length u64 offset) when code is 0 (ok), with
//             `files` descriptors attached; else n bytes of error text.
//
// Thread-safety: LocalReadServer is thread-safe (one thread per connection,
// at most kMaxConnections); LocalReadChannel is not.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "dfs/block_store.h"

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

class LocalReadServer {
 public:
  static constexpr size_t kMaxConnections = 64;

  // REQUIRES: store outlives the server.
  LocalReadServer(BlockStore& store, std::string secret, std::string computer);
  ~LocalReadServer();
  LocalReadServer(const LocalReadServer&) = delete;
  LocalReadServer& operator=(const LocalReadServer&) = delete;

  // Binds `path` (replacing a stale socket file) with mode 0600 and starts
  // accepting. Errors name the path.
  Status Listen(const std::filesystem::path& path);
  // Closes the socket and every connection, and waits for their threads.
  void Stop();

 private:
  struct Conn {
    UniqueFd fd;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void AcceptLoop();
  void Serve(Conn* conn);
  Status Handshake(int fd);
  Status Answer(int fd, BlockId block, uint32_t first);

  BlockStore& store_;
  std::string secret_;
  std::string computer_;
  std::filesystem::path path_;
  UniqueFd listen_fd_;
  std::thread acceptor_;
  std::mutex mu_;
  std::list<std::unique_ptr<Conn>> conns_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                   // GUARDED_BY(mu_)
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

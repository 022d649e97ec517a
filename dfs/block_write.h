// BlockWrite: one block written through its pipeline of replicas on a data
// connection of its own (proto/dfs.capnp, "Data port, write"): WriteBlock,
// the chunks as raw frames (each followed by its CRC32C) with at most a
// window of them unacknowledged, WriteEnd, then the WriteAck naming the
// computers that hold the committed block. DfsClient writes whole buffered
// blocks through it (and writes a block again through another pipeline when
// one fails); BucketWriter streams blocks a chunk at a time. The write keeps
// no bytes: a caller that wants to retry keeps them itself.
//
// After an error the write is over: the connection is closed (the worker
// drops what it had) and every later call fails. Errors name the pipeline's
// first computer.
// Thread-safety: not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/net/blocking_client.h"
#include "copse/status.h"
#include "dfs/dfs_types.h"

namespace copse::dfs {

struct BlockWriteOptions {
  std::string secret;     // the cluster's
  std::string peer_name;  // how this client introduces itself ("dfs client on c00")
  std::chrono::milliseconds timeout{30'000};
  uint32_t window_chunks = 16;  // unacknowledged chunks at most
  bool no_sync = false;         // the workers commit without a sync (scratch data)
};

class BlockWrite {
 public:
  // Connects to the first computer of `block.targets` and starts the write.
  // REQUIRES: block.targets is not empty.
  static Result<std::unique_ptr<BlockWrite>> Start(const BlockWriteOptions& options,
                                                   const BlockAllocation& block);
  BlockWrite(const BlockWrite&) = delete;
  BlockWrite& operator=(const BlockWrite&) = delete;

  // Sends one chunk's bytes (1 to kChunkSize; only a block's last chunk may
  // be shorter), framed with its CRC32C in place, after waiting for
  // acknowledgements while a window of chunks is unacknowledged.
  Status SendChunk(std::vector<uint8_t> chunk);
  // Ends the block: no chunk follows. Its replicas commit it.
  Status End();
  // Waits for the replicas' acknowledgement; the block as a commit names it.
  // REQUIRES: End succeeded.
  Result<CommitBlock> Finish();

  BlockId id() const { return id_; }
  const std::string& first_computer() const { return first_; }
  uint64_t bytes() const { return bytes_; }
  uint32_t chunks() const { return chunks_; }

 private:
  BlockWrite(const BlockWriteOptions& options, BlockId id, std::string first,
             std::unique_ptr<net::BlockingChannel> ch);
  // Reads one reply (a chunk acknowledgement or the final one).
  Status ReceiveReply();
  // Ends the write with `s`, naming the first computer.
  Status Fail(const Status& s);

  BlockWriteOptions options_;
  BlockId id_;
  std::string first_;
  std::unique_ptr<net::BlockingChannel> ch_;  // null once failed
  uint64_t bytes_ = 0;
  uint32_t chunks_ = 0;
  uint32_t acked_ = 0;
  bool short_chunk_ = false;
  std::optional<CommitBlock> done_;
  Status failed_;
};

}  // namespace copse::dfs

// BlockStore: the blocks a worker holds, in a RocksDB instance under its data
// dir (DESIGN.md §4). A block is a sequence of 1 MiB chunks (the last one may
// be shorter; dfs/chunk.h) stored under the key (block id, chunk index) in a
// column family whose values live in blob files, with blob garbage
// collection. Each stored value is the chunk's bytes followed by their CRC32C
// ("a framed chunk", the same bytes the data port carries), checked on every
// read before the bytes go anywhere.
//
// Writing is Begin, PutChunk for chunks 0, 1, ... in order, then Commit.
// Two durability modes (BlockStoreOptions::sync_on_close, [dfs] sync_on_close):
//  - false (like HDFS's default, dfs.datanode.synconclose off): chunks and the
//    commit record go through RocksDB's write-ahead log without a sync, and
//    Commit neither flushes nor syncs. A killed worker process loses nothing
//    (the log is in the OS's page cache and RocksDB replays it on Open); a
//    power failure can lose blocks committed in the last seconds, which
//    replication covers.
//  - true (the default: measured faster on one disk, docs/dfs.md): chunks skip the log; Commit
//  flushes them to their blob files and
//    records the block as committed with a synced write, so a committed block
//    is on disk as a whole before Commit returns.
// In both modes a crash mid-write leaves nothing visible (Open drops blocks
// that were being written). Only committed blocks can be read, listed or
// reported.
//
// A block begun with BlockSync::kNoSync (scratch data, which the engine
// regenerates when it is lost) is never flushed or synced by its commit, in
// either mode: its chunks skip the log, and its commit writes a marker after
// them in the chunk column family and the committed state unsynced. A crash
// loses it unless a flush had written its chunks with the marker; Open keeps
// a no-sync block only when it finds the marker (a column family's flushed
// state is a prefix of its writes, so the marker vouches for the chunks before
// it), and drops it otherwise.
//
// Chunk locations: every committed chunk's value sits at a fixed offset of an
// immutable blob file. A table-properties collector on the chunk column family
// sees each blob reference RocksDB writes into a table (flush, compaction, blob
// GC relocation), publishes it in an in-memory index, and stores it in the
// table's properties so that a reopened store rebuilds the index. LocateChunks
// answers from that index (a committed block still in a memtable, only with
// sync_on_close false, is flushed first); the local read path's server
// (dfs/local_read_server.h) hands the files to a client on the same computer,
// which checks the chunk's key and CRC32C itself and falls back to the data
// port on any doubt.
//
// Thread-safety: thread-safe; chunk writes of one block must come from one
// thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "dfs/chunk.h"
#include "dfs/dfs_types.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace copse::dfs {

struct BlockStoreOptions {
  std::filesystem::path dir;
  std::string computer;             // for messages ("disk full on computer c01 ...")
  uint64_t block_size = 64u << 20;  // the largest block accepted
  uint64_t reserve_bytes = 0;       // disk space to keep free
  // Flush and sync a block when it is committed (see the class comment).
  bool sync_on_close = true;
  // Free bytes on the file system holding `dir`; statvfs when empty (tests
  // inject a fake).
  std::function<Result<uint64_t>(const std::filesystem::path&)> free_space;
};

// Where a chunk's framed value (bytes + CRC32C) is stored: `size` bytes at
// `offset` of blob file `blob_file`, preceded by the chunk's key (ChunkKey).
struct ChunkLocation {
  uint64_t blob_file = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct StoredBlockInfo {
  BlockId id = 0;
  uint64_t size = 0;
  uint32_t chunks = 0;
  bool no_sync = false;  // written with BlockSync::kNoSync
};

// How a block's commit makes it durable.
enum class BlockSync {
  kStore,   // as BlockStoreOptions::sync_on_close says
  kNoSync,  // neither flushed nor synced (scratch data); see the class comment
};

class BlockStore {
 public:
  // Opens (creating when missing) the store, dropping blocks a crash left
  // half-written. Errors name the directory.
  static Result<std::unique_ptr<BlockStore>> Open(const BlockStoreOptions& options);
  ~BlockStore();
  BlockStore(const BlockStore&) = delete;
  BlockStore& operator=(const BlockStore&) = delete;

  // Starts writing block `id`. Fails with kAlreadyExists when the block is
  // here or being written, kResourceExhausted ("disk full ...") when the disk
  // has less than a block's size above the reserve.
  Status BeginBlock(BlockId id, BlockSync sync = BlockSync::kStore);
  // Stores chunk `index` (a framed chunk), after checking its CRC.
  // REQUIRES: BeginBlock(id) succeeded; index is the next chunk; every chunk
  // but the block's last holds kChunkSize bytes.
  Status PutChunk(BlockId id, uint32_t index, std::span<const uint8_t> framed);
  // Makes the block readable, and durable as BeginBlock's `sync` asked.
  // `size` and `chunks` must match what was written.
  Status CommitBlock(BlockId id, uint64_t size, uint32_t chunks);
  // Drops a block being written (no-op for others).
  void AbortBlock(BlockId id);

  // A committed block's size; kNotFound otherwise.
  Result<StoredBlockInfo> Stat(BlockId id) const;
  // Reads chunk `index` of a committed block into *framed (bytes + CRC),
  // verified: kCorruption names the block and chunk on a mismatch. Reads
  // the blob file directly when the chunk's place is known, through RocksDB
  // otherwise or when that read does not check out.
  Status ReadChunk(BlockId id, uint32_t index, std::vector<uint8_t>* framed) const;
  // Where chunks [first, info.chunks) of a committed block are, in order.
  // kNotFound when the block is not committed here, kUnavailable when some
  // chunk's location is not known (the caller reads through ReadChunk). A
  // block whose chunks are still in a memtable is flushed to its blob files
  // first.
  Result<std::vector<ChunkLocation>> LocateChunks(BlockId id, uint32_t first) const;
  // The path of blob file `number`.
  std::filesystem::path BlobFilePath(uint64_t number) const;

  // Removes a committed block (no-op when absent). Its space comes back with
  // CollectGarbage.
  Status DeleteBlock(BlockId id);
  // Every committed block, by id.
  Result<std::vector<StoredBlockInfo>> List() const;
  // Compacts the key ranges of blocks deleted since the last call, so that
  // blob files nobody references are removed and blob GC relocates the rest.
  Status CollectGarbage();

  // Bytes in blob files on disk now.
  uint64_t BlobBytesOnDisk() const;
  const std::filesystem::path& dir() const { return dir_; }

  // Testing: overwrites a stored chunk's value as is (no CRC), to simulate
  // corruption on disk.
  Status CorruptChunkForTesting(BlockId id, uint32_t index, std::span<const uint8_t> value);

 private:
  struct Writing {
    uint32_t next_index = 0;
    uint64_t bytes = 0;
    bool short_chunk_seen = false;
    bool no_sync = false;
  };

  struct LocationIndex;
  class LocationCollectorFactory;

  explicit BlockStore(const BlockStoreOptions& options);
  Status LoadLocations();
  void ForgetLocations(BlockId id);
  // Chunks [first, chunks) of block `id` from the index; false when one is
  // missing.
  bool FindLocations(BlockId id, uint32_t first, uint32_t chunks,
                     std::vector<ChunkLocation>* out) const;
  // Reads a chunk's framed value from its blob file at its known place, after
  // checking the key stored before it; false when that is not possible.
  bool ReadChunkFromBlobFile(BlockId id, uint32_t index, std::vector<uint8_t>* framed) const;
  Status OpenDb();
  Status DropHalfWritten();
  Status CheckSpace() const;
  Status Convert(const std::string& op, const void* rocks_status) const;

  BlockStoreOptions options_;
  std::filesystem::path dir_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // [meta, chunks]
  std::shared_ptr<LocationIndex> locations_;           // shared with the collector factory
  mutable std::mutex mu_;
  std::map<BlockId, Writing> writing_;  // GUARDED_BY(mu_)
  std::vector<BlockId> deleted_;        // GUARDED_BY(mu_)
};

}  // namespace copse::dfs

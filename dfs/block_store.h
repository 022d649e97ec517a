// BlockStore: the blocks a worker holds, under its data dir (docs/design.md §4).
// Block data and metadata are kept apart, as HDFS's datanodes and Ceph's
// BlueStore keep them:
//  - Each block is a plain file, `dir/blocks/<16 hex digits of the id>`. A
//    block is a sequence of 1 MiB chunks (the last one may be shorter;
//    dfs/chunk.h), and the file holds, for each chunk in order, a record of
//    the chunk's 12-byte key (ChunkKey) followed by the framed chunk (its
//    bytes and their CRC32C, the bytes the data port carries). Chunk i's
//    record starts at i * (kChunkKeySize + kChunkSize + kChunkTrailer), so a
//    chunk's place is arithmetic. PutChunk writes each record into the file
//    as it arrives (one pwritev from the caller's buffer: no other copy). The
//    file is allocated 8 records at a time ahead of the writes (fallocate;
//    the commit frees what the block did not use) and, for a block its
//    commit will sync, each 8 records are handed to the disk once written
//    (sync_file_range, not waiting), so that the commit's fdatasync finds
//    little left to do.
//  - A RocksDB instance in `dir` holds only the index: one record per
//    committed block (its size, chunk count and whether it was written
//    with BlockSync::kNoSync).
// Every read checks the chunk's key and CRC32C before the bytes go anywhere.
//
// Writing is Begin (creates the file), PutChunk for chunks 0, 1, ... in
// order, then Commit (writes the block's record). Two durability modes
// (BlockStoreOptions::sync_on_close, [dfs] sync_on_close):
//  - true (the default): Commit fdatasyncs the block's file and fsyncs the
//    blocks directory (the file is new), then writes the record with a synced
//    write, so a committed block is on disk as a whole before Commit returns.
//  - false (like HDFS's default, dfs.datanode.synconclose off): Commit syncs
//    nothing and writes the record through RocksDB's write-ahead log
//    unsynced. A killed worker process loses nothing (the file and the log
//    are in the OS's page cache); a power failure can lose blocks committed
//    in the last seconds, which replication covers.
// A block begun with BlockSync::kNoSync (scratch data, which the engine
// regenerates when it is lost) is committed as with sync_on_close false, in
// either mode: it survives a killed process, not a power failure.
//
// Open recovers: it deletes every file without a committed record (a block a
// crash left half-written, or one whose deletion was cut short) and drops
// every committed block whose file is missing or shorter than its record says
// (its data did not reach the disk before a power failure: possible with
// sync_on_close false or kNoSync); the master then copies it again from
// another replica. A file of the right length whose bytes did not survive is
// caught by the CRC32C check when it is read. Only committed blocks can be
// read, listed or reported.
//
// A directory written by an earlier version, which kept chunks in RocksDB
// blob files (a "chunks" column family), is not migrated: Open refuses it
// with kFailedPrecondition naming the directory (remove it; the master
// re-replicates its blocks from other workers).
//
// Chunk locations: LocateChunks gives (file, offset, size) for the local
// read path's server (dfs/local_read_server.h), which hands the block's file
// to a client on the same computer; the client checks each chunk's key and
// CRC32C itself and falls back to the data port on any doubt. A block's file
// is never rewritten in place: DeleteBlock unlinks it, and a later block with
// the same id gets a new file, so an open descriptor keeps reading what it
// was handed.
//
// Thread-safety: thread-safe; chunk writes of one block must come from one
// thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "copse/status.h"
#include "dfs/chunk.h"
#include "dfs/dfs_types.h"

namespace rocksdb {
class DB;
}  // namespace rocksdb

namespace copse::dfs {

struct BlockStoreOptions {
  std::filesystem::path dir;
  std::string computer;             // for messages ("disk full on computer c01 ...")
  uint64_t block_size = 64u << 20;  // the largest block accepted
  uint64_t reserve_bytes = 0;       // disk space to keep free
  // Sync a block when it is committed (see the class comment).
  bool sync_on_close = true;
  // Free bytes on the file system holding `dir`; statvfs when empty (tests
  // inject a fake).
  std::function<Result<uint64_t>(const std::filesystem::path&)> free_space;
};

// Where a chunk's framed value (bytes + CRC32C) is stored: `size` bytes at
// `offset` of the file BlockFilePath(file), preceded by the chunk's key
// (ChunkKey).
struct ChunkLocation {
  uint64_t file = 0;  // the block's id
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
  kNoSync,  // never synced (scratch data); see the class comment
};

class BlockStore {
 public:
  // The size of chunk i's record in a block file: key, bytes, CRC32C.
  static constexpr uint64_t kChunkRecordSize = kChunkKeySize + kChunkSize + kChunkTrailer;

  // Opens (creating when missing) the store and recovers it (see the class
  // comment). Errors name the directory; kUnavailable when another process
  // has it open, kFailedPrecondition for an old layout.
  static Result<std::unique_ptr<BlockStore>> Open(const BlockStoreOptions& options);
  ~BlockStore();
  BlockStore(const BlockStore&) = delete;
  BlockStore& operator=(const BlockStore&) = delete;

  // Starts writing block `id`: creates its file. Fails with kAlreadyExists
  // when the block is here or being written, kResourceExhausted ("disk full
  // ...") when the disk has less than a block's size above the reserve.
  Status BeginBlock(BlockId id, BlockSync sync = BlockSync::kStore);
  // Stores chunk `index` (a framed chunk), after checking its CRC.
  // REQUIRES: BeginBlock(id) succeeded; index is the next chunk; every chunk
  // but the block's last holds kChunkSize bytes.
  Status PutChunk(BlockId id, uint32_t index, std::span<const uint8_t> framed);
  // Makes the block readable, and durable as BeginBlock's `sync` asked.
  // `size` and `chunks` must match what was written. On failure the block
  // is dropped.
  Status CommitBlock(BlockId id, uint64_t size, uint32_t chunks);
  // Drops a block being written, with its file (no-op for others).
  void AbortBlock(BlockId id);

  // A committed block's size; kNotFound otherwise.
  Result<StoredBlockInfo> Stat(BlockId id) const;
  // Reads chunk `index` of a committed block into *framed (bytes + CRC),
  // verified: kCorruption names the block and chunk when the CRC or the key
  // stored before it does not match, or the file is missing or short.
  Status ReadChunk(BlockId id, uint32_t index, std::vector<uint8_t>* framed) const;
  // Where chunks [first, info.chunks) of a committed block are, in order.
  // kNotFound when the block is not committed here.
  Result<std::vector<ChunkLocation>> LocateChunks(BlockId id, uint32_t first) const;
  // The path of block file `file` (a ChunkLocation's; the block's id).
  std::filesystem::path BlockFilePath(uint64_t file) const;

  // Removes a committed block and its file (no-op when absent or still being
  // written). Its space comes back at once unless a local reader still has
  // the file open.
  Status DeleteBlock(BlockId id);
  // Every committed block, by id.
  Result<std::vector<StoredBlockInfo>> List() const;
  // Retries removing the files that a deletion or an abort could not unlink
  // (Open removes any file no committed block owns). kIoError names those
  // that still cannot be removed.
  Status CollectGarbage();

  // Bytes in block files (their lengths) now.
  uint64_t BlockBytesOnDisk() const;
  const std::filesystem::path& dir() const { return dir_; }

  // Testing: overwrites a stored chunk's framed value in its file as is (no
  // CRC), to simulate corruption on disk. `value` must be as long as the
  // stored value.
  Status CorruptChunkForTesting(BlockId id, uint32_t index, std::span<const uint8_t> value);

 private:
  struct File;
  struct Writing {
    std::shared_ptr<File> file;
    uint32_t next_index = 0;
    uint64_t bytes = 0;
    bool short_chunk_seen = false;
    bool no_sync = false;
    uint64_t allocated = 0;  // the file's space is allocated up to here
  };

  explicit BlockStore(const BlockStoreOptions& options);
  Status CheckLayout();
  Status OpenDb();
  Status Recover();
  // Unlinks block `id`'s file; remembers it in orphans_ when that failed.
  // REQUIRES: mu_ held.
  void RemoveFile(BlockId id);
  Status CheckSpace() const;
  std::string Where() const;  // "computer c01 (DIR)" or "DIR", for messages
  // kResourceExhausted ("disk full ...") for ENOSPC, else kIoError naming the
  // block's file; `what` names the operation and the block.
  Status FileError(const std::string& what, BlockId id, int err) const;
  Status Convert(const std::string& op, const void* rocks_status) const;
  // A failed write (a full disk) stops RocksDB writing until it is told to
  // resume: every write is preceded by this, so the store works again once
  // space is freed.
  void ResumeAfterFailure() const;

  BlockStoreOptions options_;
  std::filesystem::path dir_;
  std::filesystem::path blocks_dir_;
  int blocks_dir_fd_ = -1;
  std::unique_ptr<rocksdb::DB> db_;
  mutable std::mutex mu_;               // also orders a block's file creation and removal
  std::map<BlockId, Writing> writing_;  // GUARDED_BY(mu_)
  std::vector<BlockId> orphans_;        // GUARDED_BY(mu_): files left to remove
  mutable std::atomic<bool> write_failed_{false};
};

}  // namespace copse::dfs

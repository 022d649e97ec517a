// Namespace: the DFS name service's state and rules, kept by the master
// (DESIGN.md §4). Files have partitions, partitions have blocks, blocks have
// replicas (the computers holding a copy) and sizes. Every change is written
// to a MetaStore before it takes effect, so a restarted master that Loads the
// store finds the namespace as it was.
//
// Writing a file: Create (placement chooses each partition's replica set),
// then per block AllocateBlock (a new block id and the pipeline of computers
// to write it to), then CommitPartition with the blocks and the computers that
// acknowledged them. A regular file becomes visible (listable, readable) only
// when every partition is committed; Abandon or the grace period drops a file
// that never gets there, so a failed write leaves nothing behind.
//
// Scratch files (a job's intermediate data, DESIGN.md §6) live under
// /.scratch/JOB/ (dfs/paths.h), have one replica on the writer's computer,
// and each partition becomes readable on its own commit. DeleteJob removes a
// job's scratch files; blocks of uncommitted partitions are dropped after the
// grace period.
//
// Operations that remove blocks add, per computer, the block ids it should
// delete to a Deletions map; the caller sends them. Pure logic: time is passed
// in, liveness and placement inputs are arguments.
// Thread-safety: not thread-safe; the master owns it on its event loop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "dfs/dfs_types.h"
#include "dfs/meta_store.h"
#include "dfs/placement.h"

namespace copse::dfs {

// Computer name -> blocks it should delete.
using Deletions = std::map<std::string, std::set<BlockId>>;

struct NamespaceOptions {
  uint64_t block_size = 64u << 20;
  int default_replication = 3;
  Duration uncommitted_grace{600'000'000};
};

struct BlockView {
  BlockId id = 0;
  uint64_t size = 0;
  std::vector<std::string> replicas;
};

struct PartitionView {
  bool committed = false;
  uint64_t size = 0;
  std::vector<BlockView> blocks;
};

struct FileView {
  FileId id = 0;
  std::string path;
  bool visible = false;
  int replication = 0;
  std::string placement;
  std::string writer;
  std::string scratch_job;
  uint64_t size = 0;  // committed bytes
  std::vector<PartitionView> partitions;
};

struct CreateRequest {
  std::string path;
  int partitions = 1;
  int replication = 0;  // 0: the default
  PlacementMode placement;
  std::string writer;       // empty: outside the cluster
  std::string scratch_job;  // non-empty: a scratch file of this job
};

struct CreateResult {
  FileId id = 0;
  int replication = 0;
};

struct Allocation {
  BlockId id = 0;
  std::vector<std::string> targets;  // the write pipeline, first replica first
};

// A committed block as the re-replication planner sees it.
struct ReplicatedBlock {
  BlockId id = 0;
  uint64_t size = 0;
  int replication = 0;
  std::vector<std::string> replicas;
  std::string confine_rack;  // non-empty for files placed with 'confine N RACK'
  bool scratch = false;      // scratch blocks are never re-replicated
};

class Namespace {
 public:
  // REQUIRES: `store` outlives the namespace.
  Namespace(const NamespaceOptions& options, MetaStore& store);

  // Reads the namespace from the store; `now` starts the grace period of
  // files still being written.
  Status Load(Timestamp now);

  Result<CreateResult> Create(const CreateRequest& request,
                              const std::vector<PlacementComputer>& live, std::mt19937_64& rng,
                              Timestamp now);
  // A new block for `partition` and the computers to write it to: the
  // partition's replica set without dead or `exclude`d computers, completed
  // by placement.
  Result<Allocation> AllocateBlock(FileId file, int partition, const std::set<std::string>& exclude,
                                   const std::vector<PlacementComputer>& live, std::mt19937_64& rng,
                                   Timestamp now);
  // Commits a partition's blocks (in order). Blocks allocated for it but not
  // named are dropped. Returns true when the file is visible now.
  Result<bool> CommitPartition(FileId file, int partition, const std::vector<CommitBlock>& blocks,
                               Timestamp now, Deletions* deletions);
  // Drops a file that is still being written, with its blocks.
  Status Abandon(FileId file, Deletions* deletions);

  // A visible file or a scratch file.
  Result<FileView> Stat(const std::string& path) const;
  // The file at `path`, or the files and directories directly under it.
  Result<std::vector<ListEntry>> List(const std::string& path) const;
  // Deletes a visible or scratch file; its blocks go to `deletions`.
  Status Delete(const std::string& path, Deletions* deletions);
  // Deletes every scratch file of `job`; returns how many.
  Result<int> DeleteJob(const std::string& job, Deletions* deletions);

  // A worker's full report of its committed blocks: records the replicas,
  // forgets the ones it no longer holds, and asks it to delete blocks nobody
  // references (or whose size disagrees).
  Status ReportBlocks(const std::string& computer,
                      const std::vector<std::pair<BlockId, uint64_t>>& blocks,
                      Deletions* deletions);
  // One block committed on `computer`.
  Status BlockStored(const std::string& computer, BlockId id, uint64_t size, Deletions* deletions);
  // `computer` no longer counts as holding `id` (a bad or surplus copy).
  Status DropReplica(BlockId id, const std::string& computer);

  // Drops files and blocks whose writers went quiet for the grace period.
  Status CollectExpired(Timestamp now, Deletions* deletions);

  // Every committed block with its replicas, for re-replication.
  std::vector<ReplicatedBlock> CommittedBlocks() const;
  // The computers recorded as holding `id` (empty when unknown).
  std::vector<std::string> ReplicasOf(BlockId id) const;
  size_t file_count() const { return files_.size(); }
  size_t block_count() const { return blocks_.size(); }

 private:
  struct Block {
    BlockId id = 0;
    FileId file = 0;
    int partition = 0;
    uint64_t size = 0;
    bool committed = false;
    std::vector<std::string> replicas;
  };
  struct Partition {
    bool committed = false;
    std::vector<BlockId> blocks;
    std::vector<std::string> targets;
  };
  struct File {
    FileId id = 0;
    std::string path;
    bool visible = false;
    int replication = 0;
    std::string placement;
    std::string writer;
    std::string scratch_job;
    std::vector<Partition> partitions;
    Timestamp last_activity{0};
  };
  // Pending writes, applied to memory only once the store has them.
  struct Change {
    std::vector<MetaStore::Write> writes;
    std::map<FileId, File> files;  // files to install
    std::set<FileId> removed_files;
    std::map<BlockId, Block> blocks;  // blocks to install
    std::set<BlockId> removed_blocks;
    std::optional<uint64_t> next_file, next_block;
  };

  Status Commit(Change change);
  void PutFile(Change* c, const File& f) const;
  void PutBlock(Change* c, const Block& b) const;
  void RemoveBlock(Change* c, const Block& b, Deletions* deletions) const;
  void RemoveFile(Change* c, const File& f, Deletions* deletions) const;
  Result<const File*> PendingFile(FileId id, int partition) const;
  Status CheckNewPath(const CreateRequest& request) const;
  FileView View(const File& f) const;
  std::vector<std::vector<std::string>> ReplicaSets(const File& f) const;

  NamespaceOptions options_;
  MetaStore& store_;
  std::map<FileId, File> files_;
  std::map<std::string, FileId> by_path_;
  std::map<BlockId, Block> blocks_;
  uint64_t next_file_ = 1;
  uint64_t next_block_ = 1;
};

}  // namespace copse::dfs

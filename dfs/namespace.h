// Namespace: the DFS name service's state and rules, kept by the master
// (docs/design.md §4). Files have partitions, partitions have blocks, blocks have
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
// Scratch files (a job's intermediate data, docs/design.md §6) live under
// /.scratch/JOB/ (dfs/paths.h), have one replica on the writer's computer,
// and each partition becomes readable on its own commit. DeleteJob removes a
// job's scratch files; blocks of uncommitted partitions are dropped after the
// grace period.
//
// Job outputs: a job's root creates each output file with the job's id
// (CreateRequest::output_job); vertex runs find it (OpenOutput) and commit
// its partitions, the first commit of a partition winning (a later one fails
// with kAlreadyExists and the losers' blocks are dropped). Such a file stays
// invisible when its last partition commits and is never collected by the
// grace period; PublishJobOutputs makes all of a job's output files visible
// at once, DropJobOutputs deletes them.
//
// Writer identity: files and blocks record the task run that created them
// (RunId). AbandonRun drops what a run that ended without completing left:
// its unfinished files, and its uncommitted blocks in others' files (a job's
// outputs).
//
// Operations that remove blocks add, per computer, the block ids it should
// delete to a Deletions map; the caller sends them. Pure logic: time is passed
// in, liveness and placement inputs are arguments.
// Thread-safety: not thread-safe; the master owns it on its event loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "copse/status.h"
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
  std::string output_job;  // non-empty: a pending output file of this job
  RunId run;               // the run that created it
  uint64_t size = 0;       // committed bytes
  std::vector<PartitionView> partitions;
};

struct CreateRequest {
  std::string path;
  int partitions = 1;
  int replication = 0;  // 0: the default
  PlacementMode placement;
  std::string writer;       // empty: outside the cluster
  std::string scratch_job;  // non-empty: a scratch file of this job
  std::string output_job;   // non-empty: an output file of this job (see above)
  RunId run;                // the task run creating it (empty: none)
};

struct BlockRequest {
  FileId file = 0;
  int partition = 0;
  std::set<std::string> exclude;  // computers that failed this writer
  // The writer's computer: an output file's block is placed by the HDFS rule
  // from the run writing it, not from the root that created the file.
  std::string writer;
  RunId run;  // the task run writing the block
};

// What AbandonRun dropped.
struct DroppedWrites {
  int files = 0;   // unfinished files the run created
  int blocks = 0;  // the run's uncommitted blocks in other files
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
  // A new block for a partition and the computers to write it to: the
  // partition's replica set without dead or `exclude`d computers, completed
  // by placement (for an output file, from the request's writer). Fails with
  // kAlreadyExists when the partition is committed.
  Result<Allocation> AllocateBlock(const BlockRequest& request,
                                   const std::vector<PlacementComputer>& live, std::mt19937_64& rng,
                                   Timestamp now);
  // Commits a partition's blocks (in order). Blocks allocated for it but not
  // named (another run's, say) are dropped. Returns true when the file is
  // visible now. A committed partition fails with kAlreadyExists.
  Result<bool> CommitPartition(FileId file, int partition, const std::vector<CommitBlock>& blocks,
                               Timestamp now, Deletions* deletions);
  // Commits several partitions of `file` in one store write: all or none.
  Result<bool> CommitPartitions(FileId file, const std::vector<PartitionCommit>& partitions,
                                Timestamp now, Deletions* deletions);
  // Drops a file that is still being written (a scratch file with a
  // partition not committed, too), with its blocks. A job's output file is
  // refused (DropJobOutputs drops those).
  Status Abandon(FileId file, Deletions* deletions);

  // ---- jobs (namespace_jobs.cc)
  // The pending output file at `path`: kNotFound when there is none.
  Result<FileView> OpenOutput(const std::string& path) const;
  // Makes every pending output file of `job` visible in one store write.
  // Fails with kFailedPrecondition naming the first partition not committed;
  // nothing is published then. Returns how many files were published (0 when
  // the job has none pending).
  Result<int> PublishJobOutputs(const std::string& job);
  // Deletes every scratch file of `job`; returns how many.
  Result<int> DeleteJob(const std::string& job, Deletions* deletions);
  // Deletes every pending output file of `job` with its blocks; returns how many.
  Result<int> DropJobOutputs(const std::string& job, Deletions* deletions);
  // Drops what run `run` left unfinished: every file it created that is not
  // complete (a scratch file with a partition not committed, a regular file
  // not visible) with its blocks, and its uncommitted blocks in other files.
  // Committed partitions of a job's output files stay.
  Result<DroppedWrites> AbandonRun(const RunId& run, Deletions* deletions);
  // The jobs with pending output files, and the jobs with scratch files, in
  // order (a master starting up drops those of jobs that are gone).
  std::vector<std::string> PendingOutputJobs() const;
  std::vector<std::string> ScratchJobs() const;

  // A visible file or a scratch file. With `only_partition` >= 0 only that
  // partition lists its blocks (every partition still has its state and
  // size): what a reader of one partition needs, without the rest's replicas.
  Result<FileView> Stat(const std::string& path, int only_partition = -1) const;
  // The file at `path`, or the files and directories directly under it.
  Result<std::vector<ListEntry>> List(const std::string& path) const;
  // Deletes a visible or scratch file; its blocks go to `deletions`.
  Status Delete(const std::string& path, Deletions* deletions);

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
  // A job's pending output files are left to the job.
  Status CollectExpired(Timestamp now, Deletions* deletions);

  // Every committed block of a file that is not scratch (re-replication and
  // trimming leave scratch blocks alone), with its replicas, by block id.
  std::vector<ReplicatedBlock> CommittedBlocks() const;
  // The computers recorded as holding `id` (empty when unknown).
  std::vector<std::string> ReplicasOf(BlockId id) const;

  // ---- status (the HTTP API)
  // Files whose path starts with `prefix`, in path order after `after`
  // (exclusive; "" from the first), at most `limit`: visible files, and
  // scratch files too when `scratch`. Files still being written are left out.
  // `*more` says whether any matching file follows the page.
  std::vector<FileView> Page(const std::string& prefix, const std::string& after, size_t limit,
                             bool scratch, bool* more) const;
  // Committed replicas per computer: blocks held and bytes stored.
  struct Holding {
    int64_t blocks = 0;
    int64_t bytes = 0;
  };
  std::map<std::string, Holding> Holdings() const;
  // Committed blocks of files that are not scratch with fewer replicas that
  // `live` accepts than their file's replication, in file path order: the
  // first `limit`, and how many there are in all.
  struct UnderReplicatedBlock {
    BlockId block = 0;
    std::string path;
    int partition = 0;
    int replication = 0;
    std::vector<std::string> live;  // the replicas `live` accepted
  };
  std::vector<UnderReplicatedBlock> UnderReplicated(
      const std::function<bool(const std::string&)>& live, size_t limit, size_t* total) const;
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
    RunId run;
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
    std::string output_job;  // pending output of this job
    RunId run;
    std::vector<Partition> partitions;
    Timestamp last_activity{0};
    bool complete() const;  // every partition committed
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
  // True when `change` touches scratch files only.
  bool OnlyScratch(const Change& change) const;
  static constexpr uint64_t kIdReserve = 4096;
  void PutFile(Change* c, const File& f) const;
  void PutBlock(Change* c, const Block& b) const;
  void RemoveBlock(Change* c, const Block& b, Deletions* deletions) const;
  void RemoveFile(Change* c, const File& f, Deletions* deletions) const;
  Result<const File*> PendingFile(FileId id, int partition) const;
  Status CommitBlocks(const File& f, const PartitionCommit& commit, Change* c) const;
  // Removes every file whose `role` (scratch_job or output_job) is `job`.
  Result<int> RemoveFilesOf(const std::string& job, std::string File::*role, Deletions* deletions);
  Status CheckNewPath(const CreateRequest& request) const;
  FileView View(const File& f, int only_partition = -1) const;
  std::vector<std::vector<std::string>> ReplicaSets(const File& f) const;

  NamespaceOptions options_;
  MetaStore& store_;
  std::map<FileId, File> files_;
  std::map<std::string, FileId> by_path_;
  std::map<BlockId, Block> blocks_;
  uint64_t next_file_ = 1;
  uint64_t next_block_ = 1;
  // The id counters as stored: kIdReserve ids ahead of next_file_ and
  // next_block_ when last written, so that most changes need not rewrite
  // them; a restart continues from them (ids are never reused).
  uint64_t stored_file_ = 1;
  uint64_t stored_block_ = 1;
};

}  // namespace copse::dfs

// Plain values the DFS's parts exchange: the block and file ids (declared
// here only), the task run that writes, where a replica lives, a file's
// layout as the name service reports it, a block allocation, a committed
// block and partition, a job's pending output file, a listing's entries, and
// the client's locality counters.
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace copse::dfs {

using BlockId = uint64_t;
using FileId = uint64_t;

// A run of an engine task: the task id and the attempt the master gave it. A
// file or block written by a run names it, so that what a run left
// unfinished can be dropped when it ends (NameService::AbandonRun). Task 0:
// not written by a task.
struct RunId {
  uint64_t task = 0;
  uint32_t attempt = 0;
  bool empty() const { return task == 0; }
  friend bool operator==(const RunId&, const RunId&) = default;
};

// A computer's data port.
struct Endpoint {
  std::string computer;
  std::string rack;
  std::string host;
  uint16_t data_port = 0;
};

struct ReplicaLocation {
  Endpoint where;
  bool live = false;
};

struct BlockLocation {
  BlockId id = 0;
  uint64_t size = 0;
  std::vector<ReplicaLocation> replicas;
};

struct PartitionLocation {
  bool committed = false;
  uint64_t size = 0;
  std::vector<BlockLocation> blocks;
};

// A file as `fs stat` shows it: partitions -> blocks -> replicas.
struct FileStatus {
  FileId id = 0;
  std::string path;
  uint64_t size = 0;
  int replication = 0;
  std::string placement;
  std::string scratch_job;
  uint64_t block_size = 0;
  std::vector<PartitionLocation> partitions;
};

// A new block and the write pipeline for it, first replica first.
struct BlockAllocation {
  BlockId id = 0;
  std::vector<Endpoint> targets;
};

// A written block as a partition's commit names it: its size and the
// computers that acknowledged it (the client sends these, the name service
// records them).
struct CommitBlock {
  BlockId id = 0;
  uint64_t size = 0;
  std::vector<std::string> replicas;
};

// A partition's blocks, in order, as a commit names them (none: an empty
// partition).
struct PartitionCommit {
  int partition = 0;
  std::vector<CommitBlock> blocks;
};

// A job's pending output file, as a vertex run writing one of its partitions
// finds it (DfsClient::OpenOutputPartition).
struct OutputFileInfo {
  FileId id = 0;
  std::string job;
  int partitions = 0;
  int replication = 0;
  uint64_t block_size = 0;
};

// One entry of a listing (`fs ls`): a file, or a directory (`is_dir`; `size`
// totals the files under it).
struct ListEntry {
  std::string path;
  bool is_dir = false;
  uint64_t size = 0;
  int partitions = 0;
  int replication = 0;
  std::string scratch_job;
};

// Bytes a client read, by where they came from relative to its computer.
struct LocalityCounters {
  uint64_t local = 0;  // from this computer
  uint64_t rack = 0;   // from another computer of this rack
  uint64_t core = 0;   // across the core switch (or from outside the cluster)
  uint64_t total() const { return local + rack + core; }
};

}  // namespace copse::dfs

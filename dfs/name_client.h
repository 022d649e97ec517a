// NameClient: the client side of the master's name service (proto/dfs.capnp,
// client -> master) over one authenticated blocking connection. Each call
// sends one request and waits for its reply; an Error reply becomes its
// Status, with the code the master chose (kAlreadyExists for a partition
// another run committed first, say). Every create and block allocation
// carries the client's computer and task run (writer identity). DfsClient and
// BucketWriter talk to the master through it.
// Thread-safety: not thread-safe; one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/net/blocking_client.h"
#include "copse/status.h"
#include "dfs/dfs_types.h"
#include "dfs/placement.h"

namespace copse::dfs {

struct CreateOptions {
  int partitions = 1;
  int replication = 0;  // 0: the cluster's
  PlacementMode placement;
  std::string scratch_job;  // non-empty: a scratch file of this job
  // Non-empty: an output file of this job, written partition by partition by
  // the job's vertex runs (DfsClient::OpenOutputPartition) and visible once
  // the master publishes the job's outputs.
  std::string output_job;
  // A program's upload to the program store (/.apps/..., `copse app put`).
  bool program_store = false;
};

// A file just created, as the master describes it.
struct CreatedFile {
  FileId id = 0;
  uint64_t block_size = 0;
  int replication = 0;
  bool scratch = false;  // its blocks are written with noSync
};

class NameClient {
 public:
  // `computer`: where the client runs (empty: outside the cluster); `run`:
  // the task run it writes for (empty: none).
  NameClient(std::unique_ptr<net::RedialingChannel> master, std::string computer, RunId run);

  Result<CreatedFile> Create(const std::string& path, const CreateOptions& options);
  // The pending output file at `path`; kNotFound when there is none.
  Result<OutputFileInfo> OpenOutput(const std::string& path);
  // A new block of `partition` and its pipeline, avoiding `exclude`.
  // kAlreadyExists when the partition is committed (by another run).
  Result<BlockAllocation> AllocateBlock(FileId file, int partition,
                                        const std::vector<std::string>& exclude);
  // Commits the partitions in one request, all or none. Returns true when
  // the file became visible.
  Result<bool> CommitPartitions(FileId file, const std::vector<PartitionCommit>& partitions);
  Status Abandon(FileId file);

  // With `partition` >= 0 only that partition lists its blocks.
  Result<FileStatus> Stat(const std::string& path, int partition = -1);
  Result<std::vector<ListEntry>> List(const std::string& path);
  Status Delete(const std::string& path);
  Result<int> DeleteJobScratch(const std::string& job);
  Status ReportBadReplica(BlockId block, const std::string& computer, const std::string& reason);

 private:
  // Sends an encoded request; the reply's payload. Reads (`resend`) are
  // sent again when the master goes away midway and comes back within the
  // client's wait (net::RedialingChannel); a write's lost answer is an
  // error (sending it twice could apply it twice).
  Result<std::vector<uint8_t>> Call(std::vector<uint8_t> request, bool resend = false);

  std::unique_ptr<net::RedialingChannel> master_;
  std::string computer_;
  RunId run_;
};

}  // namespace copse::dfs

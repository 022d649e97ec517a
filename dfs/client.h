// DfsClient: the DFS client library (docs/design.md §4) used by `copse fs`, the
// benchmarks and vertex programs. It talks to the master's name service and
// to the workers' data ports over authenticated blocking connections.
//
// Writing: Create a file with P partitions, then for each partition
// BeginPartition / Append... / EndPartition. A partition's bytes are cut into
// blocks of the cluster's block size; each block is buffered and sent through
// the replicas' write pipeline chunk by chunk with at most a window of
// unacknowledged chunks. Up to blocks_in_flight blocks are on their way at
// once (the next block streams while the previous one commits on its
// replicas); each is kept until its replicas acknowledge it, so the client
// holds at most blocks_in_flight + 1 block buffers. When the first replica of a
// pipeline fails, the block is written again to a new pipeline that avoids
// it; when a later one fails, the block commits on the replicas that hold it
// and the master re-replicates it. The file becomes visible when its last
// partition commits; Abandon (or the destructor, for an unfinished file)
// drops it. A scratch file's blocks are written with noSync (the workers
// commit them without a sync).
//
// Engine tasks: a client with DfsClientOptions::task_id names its task run
// with every file and block it creates, so that the master can drop what the
// run leaves unfinished. A vertex run writes its partition of a job's output
// file with OpenOutputPartition, Append..., EndPartition; when another run
// committed that partition first, Append or EndPartition fails with
// kAlreadyExists, and the caller treats the partition as written.
//
// Reading: a block is read from its replica on this computer, else one in
// this rack, else any; a replica that fails (unreachable, checksum mismatch)
// is left for the next, from the chunk where it stopped. Every chunk's CRC32C
// is checked on arrival. Bytes read are counted by locality. A replica on this
// computer is read through the local read path (dfs/local_read.h) when its
// worker offers it; whatever that path cannot serve or verify is read from the
// same replica through its data port, which has the worker check the stored
// chunk itself.
//
// Thread-safety: not thread-safe; one client per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/net/blocking_client.h"
#include "copse/status.h"
#include "dfs/block_write.h"
#include "dfs/dfs_types.h"
#include "dfs/local_read.h"
#include "dfs/name_client.h"
#include "dfs/placement.h"

namespace copse::dfs {

struct DfsClientOptions {
  std::string computer;  // the computer this client runs on; empty: outside the cluster
  std::chrono::milliseconds timeout{30'000};
  uint32_t write_window_chunks = 16;  // unacknowledged chunks per block write
  // Blocks on their way at once; each is buffered until acknowledged. Two:
  // the next block streams while the previous one syncs on its replicas
  // (docs/dfs.md "Measurements").
  int blocks_in_flight = 2;
  int write_attempts = 3;  // pipelines tried per block
  // Read replicas on this computer straight from the worker's block files
  // (dfs/local_read.h); false: always through the data port.
  bool local_reads = true;
  // The engine task run this client writes for (0: none), sent with every
  // create and block allocation (writer identity).
  uint64_t task_id = 0;
  uint32_t attempt = 0;
  // How long Connect waits for a master that does not answer (the `copse`
  // tool's --master-wait); by default it tries once.
  net::ConnectRetry connect_retry;
};

class DfsClient {
 public:
  // Connects to the master named in `config`. REQUIRES: config outlives the client.
  static Result<std::unique_ptr<DfsClient>> Connect(const ClusterConfig& config,
                                                    const std::string& secret,
                                                    DfsClientOptions options);
  ~DfsClient();
  DfsClient(const DfsClient&) = delete;
  DfsClient& operator=(const DfsClient&) = delete;

  // ---- writing (one file at a time)
  // Creates a file to write. With CreateOptions::output_job it only creates
  // the job's pending output file (a job's root does), leaving nothing open:
  // vertex runs write its partitions with OpenOutputPartition.
  Status Create(const std::string& path, const CreateOptions& options);
  // Opens partition `partition` of the job output file at `path` (pending:
  // created by the job's root with CreateOptions::output_job) for writing:
  // Append, then EndPartition commits it. kNotFound when no such output is
  // pending.
  Status OpenOutputPartition(const std::string& path, int partition);
  // REQUIRES: Create succeeded; partitions are written one at a time.
  Status BeginPartition(int partition);
  Status Append(std::span<const uint8_t> bytes);
  // Commits the partition. Returns true when the file became visible (never
  // for a job's output: the master publishes those). kAlreadyExists: another
  // run committed this partition of a job's output first.
  Result<bool> EndPartition();
  // Drops the file being written. For a job output's partition, only this
  // client's writes stop: the master drops the run's uncommitted blocks
  // (AbandonRun) or the job's outputs.
  Status Abandon();

  // ---- reading
  // With `partition` >= 0 only that partition lists its blocks: enough to
  // read it, and cheap for the master on files of many partitions.
  Result<FileStatus> Stat(const std::string& path, int partition = -1);
  // Streams partition `partition` of `file` into `sink`, in order. A scratch
  // partition whose replicas are all gone fails with kDataLoss ("replica
  // lost ... on computer X"); other unreadable blocks with kUnavailable.
  Status ReadPartition(const FileStatus& file, int partition,
                       const std::function<Status(std::span<const uint8_t>)>& sink);

  // ---- names
  Result<std::vector<ListEntry>> List(const std::string& path);
  Status Delete(const std::string& path);
  Result<int> DeleteJobScratch(const std::string& job);

  // ---- the layers below, for writers of their own (BucketWriter)
  NameClient& names() { return *names_; }
  // How this client writes blocks: its secret, name, timeout and window.
  BlockWriteOptions block_write_options() const;
  const DfsClientOptions& options() const { return options_; }

  const LocalityCounters& counters() const { return counters_; }
  // Bytes of `counters().local` that came through the local read path.
  uint64_t local_path_bytes() const { return local_path_bytes_; }
  void reset_counters() { counters_ = {}; }

 private:
  struct Writing;
  DfsClient(const ClusterConfig& config, std::string secret, DfsClientOptions options,
            std::unique_ptr<net::RedialingChannel> master);
  struct PendingBlock;
  // Sends the buffered block; it is then pending until its replicas answer.
  Status FlushBlock();
  // Waits for the oldest pending block, writing it again elsewhere when its
  // pipeline failed, and records it in the partition.
  Status FinishOldestBlock();
  Status FinishAllBlocks();
  Status SendBlock(PendingBlock& p);
  Status AwaitBlock(PendingBlock& p);
  Result<net::BlockingChannel*> DataChannel(const Endpoint& e);
  void DropDataChannel(const std::string& computer);
  // Reads block `b` from the worker at `e` from chunk *next_chunk on. Sets
  // *sink_failed when the error is the sink's (the reader stopped).
  Status ReadBlockFrom(const Endpoint& e, const BlockLocation& b, uint32_t* next_chunk,
                       const std::function<Status(std::span<const uint8_t>)>& sink,
                       bool* sink_failed);
  // Reads what it can of block `b` through the local read path. Sets
  // *sink_failed when `sink` returned the error.
  Status ReadBlockLocally(const BlockLocation& b, uint32_t* next_chunk,
                          const std::function<Status(std::span<const uint8_t>)>& sink,
                          bool* sink_failed);
  uint64_t* CounterFor(const Endpoint& e);

  const ClusterConfig& config_;
  std::string secret_;
  DfsClientOptions options_;
  std::unique_ptr<NameClient> names_;
  std::map<std::string, std::unique_ptr<net::BlockingChannel>> data_;  // by computer
  std::unique_ptr<Writing> writing_;
  std::deque<std::unique_ptr<PendingBlock>> pending_;  // oldest first
  std::vector<std::vector<uint8_t>> spare_;            // block buffers to reuse
  LocalityCounters counters_;
  uint64_t local_path_bytes_ = 0;
  std::unique_ptr<LocalReadChannel> local_;
  bool local_refused_ = false;      // the local worker offers no local path
  std::vector<uint8_t> local_buf_;  // one chunk with its key
};

}  // namespace copse::dfs

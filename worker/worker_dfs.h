// WorkerDfs: a worker's part of the DFS. It owns the computer's block store
// (RocksDB under the data dir), the block server on its data port and the
// local read socket for clients on the same computer
// (dfs/local_read_server.h), reports the blocks it holds to the master after
// every registration, tells the master about blocks it stores and bad copies
// it finds, and carries out the master's commands (delete blocks, copy a
// block from a peer).
// Thread-safety: everything runs on the worker's io_context thread, except
// the master's block deletions, which run on a thread of their own.
#pragma once

#include <asio/io_context.hpp>
#include <memory>
#include <string>

#include "common/config.h"
#include "common/net/frame.h"
#include "common/work_thread.h"
#include "dfs/block_server.h"
#include "dfs/block_store.h"
#include "dfs/local_read_server.h"
#include "worker/worker_agent.h"

namespace copse::worker {

class WorkerMetrics;

class WorkerDfs final : public WorkerAgent::Part {
 public:
  // REQUIRES: io, config, computer and agent outlive this.
  WorkerDfs(asio::io_context& io, const ClusterConfig& config, const ComputerConfig& computer,
            std::string secret, WorkerAgent& agent);
  ~WorkerDfs();
  WorkerDfs(const WorkerDfs&) = delete;
  WorkerDfs& operator=(const WorkerDfs&) = delete;

  // Counts the bytes the data port and the local read socket serve
  // (optional). REQUIRES: before Start.
  void set_metrics(WorkerMetrics* m) { metrics_ = m; }
  // Opens the block store and listens on the data port; hooks into the agent.
  Status Start();
  // Bytes in the block store's files now (0 before Start). Thread-safe: it
  // reads the file system only.
  uint64_t BlockBytes() const;
  void Stop();

  // WorkerAgent::Part: after each registration it reports its blocks; it
  // carries out the master's deletions and copies.
  void OnRegistered() override { ReportBlocks(); }
  Status OnMasterFrame(const net::Frame& frame) override;

 private:
  void ReportBlocks();

  asio::io_context& io_;
  const ClusterConfig& config_;
  const ComputerConfig& computer_;
  std::string secret_;
  WorkerAgent& agent_;
  WorkerMetrics* metrics_ = nullptr;
  std::unique_ptr<dfs::BlockStore> store_;
  std::unique_ptr<dfs::BlockServer> server_;
  std::unique_ptr<dfs::LocalReadServer> local_;  // clients on this computer
  WorkThread deleter_;  // the master's block deletions; stopped before store_ goes
};

}  // namespace copse::worker

// DfsService: the DFS protocol (proto/dfs.capnp) on the master, adapted onto
// the name service. While the master is starting (NameService::Starting),
// requests that place replicas (create a file, allocate a block) are held
// and answered once every computer has registered or [dfs] safe_mode has
// passed, so that a client that came back with a restarted master is not
// told there are not enough computers. It answers clients' name-service requests, takes
// workers' block reports and notices on their registration connections,
// sends workers their deletions and copy commands, follows computers going
// up and down, and drives the name service's periodic work on a timer. One
// handler per message.
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "common/disk.h"
#include "common/net/connection.h"
#include "dfs/meta_store.h"
#include "dfs/name_service.h"
#include "master/cluster_manager.h"
#include "master/cluster_service.h"
#include "master/protocol_service.h"
#include "proto/dfs.capnp.h"

namespace copse::master {

class DfsService final : public ProtocolService,
                         public dfs::WorkerSender,
                         public MembershipListener,
                         public WorkerListener {
 public:
  // REQUIRES: every argument outlives the service.
  DfsService(asio::io_context& io, const ClusterConfig& config, const Clock& clock,
             dfs::MetaStore& store, const ClusterManager& cluster);

  // How free space under the master's data dir is read (tests fake it).
  void set_free_space(FreeSpaceFn f) { free_space_ = std::move(f); }

  Status Load();
  // Starts the name service's periodic work.
  void Start();
  void Stop();
  void Tick();

  dfs::NameService& names() { return names_; }

  // ProtocolService: a DFS frame from a client, or a notice from a worker on
  // its registration connection.
  Status OnFrame(net::Connection& conn, const net::Frame& frame) override;
  void OnClose(net::Connection& conn) override;
  // WorkerSender
  bool DeleteBlocks(const std::string& computer, const std::vector<dfs::BlockId>& blocks) override;
  bool Replicate(const std::string& computer, dfs::BlockId block, uint64_t size,
                 const std::vector<dfs::Endpoint>& sources) override;
  // MembershipListener
  void OnComputerUp(const std::string& computer) override;
  void OnComputerDown(const std::string& computer) override;
  void OnComputerDraining(const std::string& computer, bool draining, bool move_tasks) override;
  // WorkerListener: the worker's connection carries its notices and our commands.
  void OnWorkerRegistered(const std::string& computer, net::Connection& conn,
                          const WorkerTasks& tasks) override;

 private:
  using Reader = proto::DfsMessage::Reader;
  using Builder = proto::DfsMessage::Builder;
  net::Connection* WorkerConn(const std::string& computer) const;
  void ArmTimer();
  // Client requests: each fills the reply or returns the error to send.
  Status OnCreateFile(proto::CreateFile::Reader r, Builder out, Timestamp now);
  Status OnAllocateBlock(proto::AllocateBlock::Reader r, Builder out, Timestamp now);
  Status OnCommitPartition(proto::CommitPartition::Reader r, Builder out, Timestamp now);
  Status OnCommitPartitions(proto::CommitPartitions::Reader r, Builder out, Timestamp now);
  Status OnOpenOutput(proto::OpenOutput::Reader r, Builder out);
  Status OnAbandonFile(proto::AbandonFile::Reader r, Builder out);
  Status OnListFiles(proto::ListFiles::Reader r, Builder out);
  Status OnStatFile(proto::StatFile::Reader r, Builder out);
  Status OnDeleteFile(proto::DeleteFile::Reader r, Builder out);
  Status OnDeleteJobScratch(proto::DeleteJobScratch::Reader r, Builder out);
  Status OnReportBadReplica(proto::ReportBadReplica::Reader r, Builder out);
  // Worker notices (no reply).
  Status OnBlockReport(const std::string& computer, proto::BlockReport::Reader r);
  Status OnBlockReceived(const std::string& computer, proto::BlockReceived::Reader r);
  Status OnBadReplica(const std::string& computer, proto::BadReplica::Reader r);
  Status OnReplicationDone(const std::string& computer, proto::ReplicationDone::Reader r);
  Status Request(net::Connection& conn, Reader root);
  // Answers the requests held while the master was starting, once it is not.
  void ReleaseHeld();
  Status Notice(net::Connection& conn, Reader root);

  const ClusterConfig& config_;
  const Clock& clock_;
  const ClusterManager& cluster_;
  dfs::NameService names_;
  std::map<std::string, net::Connection*> workers_;  // computer -> open registration connection
  // Requests that place replicas, held while the name service is Starting,
  // in arrival order (a client sends one request at a time).
  struct Held {
    net::Connection* conn;
    net::Frame frame;
  };
  std::vector<Held> held_;
  asio::steady_timer timer_;
  FreeSpaceFn free_space_;
  bool stopped_ = false;
};

}  // namespace copse::master

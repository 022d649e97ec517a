// DfsService: the master's adapter between the wire (proto/dfs.capnp) and the
// DFS name service. It answers clients' name-service requests, takes workers'
// block reports and notices on their registration connections, sends workers
// their deletions and copy commands, follows computers going up and down, and
// drives the name service's periodic work.
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "common/net/connection.h"
#include "dfs/meta_store.h"
#include "dfs/name_service.h"
#include "master/cluster_manager.h"

namespace copse::master {

class DfsService final : public dfs::WorkerSender, public MembershipListener {
 public:
  // REQUIRES: config, clock and store outlive the service.
  DfsService(const ClusterConfig& config, const Clock& clock, dfs::MetaStore& store);

  Status Load();
  // A worker registered `computer` on `conn` / a connection closed.
  void AttachWorker(const std::string& computer, net::Connection& conn);
  void ConnectionClosed(uint64_t conn_id);
  // A DFS frame on `conn`; `computer` is the worker registered on it, or ""
  // for clients. Replies go back on `conn`. An error closes the connection.
  Status Handle(net::Connection& conn, const net::Frame& frame, const std::string& computer);
  void Tick();

  dfs::NameService& names() { return names_; }

  // WorkerSender
  bool DeleteBlocks(const std::string& computer, const std::vector<dfs::BlockId>& blocks) override;
  bool Replicate(const std::string& computer, dfs::BlockId block, uint64_t size,
                 const std::vector<dfs::Endpoint>& sources) override;
  // MembershipListener
  void OnComputerUp(const std::string& computer) override;
  void OnComputerDown(const std::string& computer) override;

 private:
  net::Connection* WorkerConn(const std::string& computer) const;

  const ClusterConfig& config_;
  const Clock& clock_;
  dfs::NameService names_;
  std::map<std::string, net::Connection*> workers_;  // computer -> open registration connection
};

}  // namespace copse::master

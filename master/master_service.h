// MasterService: the copse-master daemon's network face. It listens on the
// master port, decodes each authenticated connection's messages into calls on
// the ClusterManager (and, in later parts, the name service and job queue),
// and sends the replies. It also runs the timer that declares silent workers
// dead. Daemon logic stays in the components; this class only adapts.
// Thread-safety: everything runs on the io_context's thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "common/net/server.h"
#include "dfs/meta_store.h"
#include "master/cluster_manager.h"
#include "master/dfs_service.h"

namespace copse::master {

class MasterService final : public net::ConnectionHandler {
 public:
  // REQUIRES: config, clock and io outlive the service.
  MasterService(asio::io_context& io, const ClusterConfig& config, std::string secret,
                const Clock& clock);
  ~MasterService() override;

  // Opens the DFS namespace (in the master's data dir) and listens on the
  // configured port (or on `port_override` when non-zero).
  Status Start(uint16_t port_override = 0);
  void Stop();
  uint16_t port() const { return server_.port(); }
  ClusterManager& cluster() { return cluster_; }

  // Declares silent workers dead now (also runs on a timer).
  void CheckTimeouts();

  void OnFrame(net::Connection& conn, net::Frame frame) override;
  void OnClose(net::Connection& conn, const Status& why) override;

 private:
  Status HandleCluster(net::Connection& conn, const net::Frame& frame);
  void ArmTimer();
  void ArmDfsTimer();

  asio::io_context& io_;
  const ClusterConfig& config_;
  const Clock& clock_;
  Timestamp started_;
  ClusterManager cluster_;
  std::unique_ptr<dfs::MetaStore> meta_;
  std::unique_ptr<DfsService> dfs_;
  net::Server server_;
  asio::steady_timer timer_;
  asio::steady_timer dfs_timer_;
  bool stopped_ = false;
};

}  // namespace copse::master

// WorkerService: the worker's control port. Authenticated peers (the master,
// tools, later the root tasks and vertices on this computer) ask it for the
// worker's state; later parts add task launch and kill here.
// Thread-safety: everything runs on the io_context's thread.
#pragma once

#include <asio/io_context.hpp>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "common/net/server.h"
#include "worker/worker_agent.h"

namespace copse::worker {

class WorkerService final : public net::ConnectionHandler {
 public:
  // REQUIRES: every argument outlives the service.
  WorkerService(asio::io_context& io, const ClusterConfig& config, const ComputerConfig& computer,
                std::string secret, const WorkerAgent& agent, const Clock& clock);

  Status Start();
  void Stop() { server_.Stop(); }

  void OnFrame(net::Connection& conn, net::Frame frame) override;
  void OnClose(net::Connection& conn, const Status& why) override;

 private:
  Status HandleCluster(net::Connection& conn, const net::Frame& frame);

  const ClusterConfig& config_;
  const ComputerConfig& computer_;
  const WorkerAgent& agent_;
  const Clock& clock_;
  Timestamp started_;
  net::Server server_;
};

}  // namespace copse::worker

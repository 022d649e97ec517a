// WorkerService: the worker's control port. Authenticated peers (tools) ask
// it for the worker's state (cluster protocol) and for the logs of the runs
// it keeps (job protocol: `copse job logs`).
// Thread-safety: everything runs on the io_context's thread.
#pragma once

#include <asio/io_context.hpp>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "common/net/server.h"
#include "worker/task_manager.h"
#include "worker/worker_agent.h"

namespace copse::worker {

class WorkerService final : public net::ConnectionHandler {
 public:
  // REQUIRES: every argument outlives the service.
  WorkerService(asio::io_context& io, const ClusterConfig& config, const ComputerConfig& computer,
                std::string secret, const WorkerAgent& agent, const TaskManager& tasks,
                const Clock& clock);

  Status Start();
  void Stop() { server_.Stop(); }

  void OnFrame(net::Connection& conn, net::Frame frame) override;
  void OnClose(net::Connection& conn, const Status& why) override;

 private:
  Status HandleCluster(net::Connection& conn, const net::Frame& frame);
  Status HandleJob(net::Connection& conn, const net::Frame& frame);

  const ClusterConfig& config_;
  const ComputerConfig& computer_;
  const WorkerAgent& agent_;
  const TaskManager& tasks_;
  const Clock& clock_;
  Timestamp started_;
  net::Server server_;
};

}  // namespace copse::worker

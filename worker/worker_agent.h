// WorkerAgent: the copse-worker's link to the master. It keeps a connection
// open (reconnecting with capped exponential backoff, so a restarted master
// gets its workers back by itself), registers this computer, sends heartbeats
// at the interval the master asks for, and registers again when the master
// says it no longer counts this worker as live. A refusal (unknown computer,
// another live worker on it) is fatal: the agent reports it and stops.
// Thread-safety: everything runs on the io_context's thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/net/client.h"

namespace copse::worker {

class WorkerAgent final : public net::ConnectionHandler {
 public:
  using FatalCallback = std::function<void(const Status&)>;

  // REQUIRES: io, config and computer outlive the agent.
  WorkerAgent(asio::io_context& io, const ClusterConfig& config, const ComputerConfig& computer,
              std::string secret, uint64_t incarnation, FatalCallback on_fatal);
  ~WorkerAgent() override;

  void Start();
  void Stop();
  bool registered() const { return registered_; }
  // Slots in use, reported in heartbeats.
  void set_busy_slots(int n) { busy_slots_ = n; }

  // The DFS's use of the master connection: `on_registered` runs after every
  // accepted registration (the worker then reports its blocks), `on_dfs` gets
  // each DFS frame from the master (an error closes the connection).
  struct DfsHooks {
    std::function<void()> on_registered;
    std::function<Status(const net::Frame&)> on_dfs;
  };
  void set_dfs_hooks(DfsHooks hooks) { dfs_hooks_ = std::move(hooks); }
  // Sends a DFS frame to the master; false when not registered right now.
  bool SendDfs(std::vector<uint8_t> payload);

  void OnOpen(net::Connection& conn) override;
  void OnFrame(net::Connection& conn, net::Frame frame) override;
  void OnClose(net::Connection& conn, const Status& why) override;

 private:
  void SendRegister(net::Connection& conn);
  void SendHeartbeat();
  void ArmHeartbeat();
  Status Handle(net::Connection& conn, const net::Frame& frame);

  asio::io_context& io_;
  const ClusterConfig& config_;
  const ComputerConfig& computer_;
  uint64_t incarnation_;
  FatalCallback on_fatal_;
  net::ReconnectingClient client_;
  asio::steady_timer heartbeat_timer_;
  std::chrono::milliseconds heartbeat_interval_;
  bool registered_ = false;
  int busy_slots_ = 0;
  DfsHooks dfs_hooks_;
};

}  // namespace copse::worker

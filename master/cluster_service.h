// ClusterService: the cluster protocol (proto/cluster.capnp) on the master —
// worker registration and heartbeats, status for clients — adapted onto the
// ClusterManager, and the timer that declares silent workers dead. Clients
// also drain and undrain computers here (ClusterManager::SetDraining); the
// status says how far each draining computer's blocks are. A worker
// that registers is announced to the WorkerListeners (the DFS service attaches
// its connection, the scheduling service adopts the tasks it lists).
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/tasks.h"
#include "dfs/name_service.h"
#include "master/cluster_manager.h"
#include "master/protocol_service.h"
#include "proto/cluster.capnp.h"

namespace copse::master {

// What a registering worker says it runs and which of its exits the master
// has not acknowledged.
struct WorkerTasks {
  std::vector<RunningTaskReport> running;
  std::vector<TaskExitReport> ended;
};

class WorkerListener {
 public:
  virtual ~WorkerListener() = default;
  // `computer`'s worker registered on `conn` (again).
  virtual void OnWorkerRegistered(const std::string& computer, net::Connection& conn,
                                  const WorkerTasks& tasks) = 0;
};

// What the status says of the DFS: how far a draining computer is
// (NameService::Drain) and how many blocks have fewer replicas than their
// factor (NameService::UnderReplicatedBlocks); without them the status
// reports no block counts.
struct DfsStatus {
  std::function<dfs::DrainProgress(const std::string&)> drain_progress;
  std::function<int()> under_replicated;
};

class ClusterService final : public ProtocolService {
 public:
  // REQUIRES: every argument outlives the service.
  ClusterService(asio::io_context& io, const ClusterConfig& config, ClusterManager& cluster,
                 const Clock& clock, DfsStatus dfs = {});

  // REQUIRES: the listener outlives the service.
  void AddWorkerListener(WorkerListener* l) { listeners_.push_back(l); }
  // Starts the timer that declares silent workers dead.
  void Start();
  void Stop();
  // Declares silent workers dead now.
  void CheckTimeouts();

  Status OnFrame(net::Connection& conn, const net::Frame& frame) override;
  void OnClose(net::Connection& conn) override;

 private:
  void ArmTimer();
  // One handler per message.
  Status OnRegister(net::Connection& conn, proto::RegisterRequest::Reader r);
  Status OnHeartbeat(net::Connection& conn, proto::Heartbeat::Reader hb);
  Status OnStatusRequest(net::Connection& conn);
  Status OnDrainRequest(net::Connection& conn, proto::DrainRequest::Reader r);

  const ClusterConfig& config_;
  ClusterManager& cluster_;
  const Clock& clock_;
  Timestamp started_;
  std::vector<WorkerListener*> listeners_;
  DfsStatus dfs_;
  asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace copse::master

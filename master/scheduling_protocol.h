// SchedulingProtocol: the scheduling protocol (proto/scheduling.capnp) on the
// master. Workers send task starts and exits on their registration
// connections; roots say hello on a connection of their own, then submit and
// withdraw tasks, report progress and say when the job is over. It adapts
// them onto the SchedulingService and the JobService, one handler per
// message. SchedulingConnections holds the workers' and the welcomed roots'
// connections and is the scheduling service's TaskMessenger: launches, kills
// and acknowledgements to workers, news to roots. It is apart from the
// protocol so that the scheduling service, which the protocol calls, can be
// given it when it is built.
//
// A root's hello is checked (the job runs as that incarnation with that root
// task); a restarted master answers hellos only once its recovery is over.
// Messages from a connection that is neither a registered worker nor an
// accepted root close it.
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "master/cluster_manager.h"
#include "master/cluster_service.h"
#include "master/job_service.h"
#include "master/protocol_service.h"
#include "master/scheduling_service.h"
#include "proto/scheduling.capnp.h"

namespace copse::master {

class SchedulingConnections final : public TaskMessenger, public WorkerListener {
 public:
  void OnWorkerRegistered(const std::string& computer, net::Connection& conn,
                          const WorkerTasks& tasks) override;
  // The job's root speaks on `conn` from now on.
  void AddRoot(uint64_t job, net::Connection& conn);
  // The job whose root speaks on the connection with this id, if any.
  std::optional<uint64_t> RootJob(uint64_t conn) const;
  // `conn` closed: it reaches no worker and no root any more.
  void Closed(net::Connection& conn);

  // TaskMessenger
  bool Launch(const std::string& computer, const LaunchRequest& r) override;
  bool Kill(const std::string& computer, uint64_t task, uint32_t attempt,
            const std::string& reason) override;
  void AckExit(const std::string& computer, uint64_t task, uint32_t attempt) override;
  void JobEnded(uint64_t job) override;
  bool ToRoot(uint64_t job, const TaskEvent& e) override;

 private:
  net::Connection* Worker(const std::string& computer) const;

  std::map<std::string, net::Connection*> workers_;  // computer -> registration connection
  std::map<uint64_t, net::Connection*> roots_;       // job -> its root's connection
  std::map<uint64_t, uint64_t> root_of_conn_;        // connection id -> job
};

class SchedulingProtocol final : public ProtocolService {
 public:
  // REQUIRES: every argument outlives this.
  SchedulingProtocol(const ClusterManager& cluster, SchedulingService& scheduling, JobService& jobs,
                     SchedulingConnections& connections);

  Status OnFrame(net::Connection& conn, const net::Frame& frame) override;
  void OnClose(net::Connection& conn) override;
  // Answers the hellos that waited for the end of recovery.
  void Recovered();

 private:
  struct Hello {
    uint64_t conn = 0;
    uint64_t job = 0;
    uint32_t incarnation = 0;
    uint64_t root_task = 0;
    std::vector<uint64_t> live;
  };
  // Worker messages.
  Status OnTaskStarted(const std::string& computer, proto::TaskStarted::Reader r);
  Status OnTaskExit(const std::string& computer, proto::TaskExit::Reader r);
  // Root messages.
  Status OnRootHello(net::Connection& conn, proto::RootHello::Reader r);
  Status OnSubmitTasks(net::Connection& conn, uint64_t job, proto::SubmitTasks::Reader r);
  Status OnWithdrawTask(uint64_t job, proto::WithdrawTask::Reader r);
  Status OnJobProgress(uint64_t job, proto::JobProgress::Reader r);
  Status OnJobOver(net::Connection& conn, uint64_t job, proto::JobOver::Reader r);
  void Welcome(net::Connection& conn, const Hello& h);

  const ClusterManager& cluster_;
  SchedulingService& scheduling_;
  JobService& jobs_;
  SchedulingConnections& connections_;
  std::vector<Hello> waiting_;  // hellos held during recovery
  std::map<uint64_t, net::Connection*> waiting_conns_;
};

}  // namespace copse::master

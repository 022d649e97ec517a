// Master: the copse-master daemon as one object (docs/design.md §1). It opens
// the master's RocksDB and builds every component with the parts it needs:
//   membership (ClusterManager, ClusterService)
//   name service (DfsService over the namespace in the master's RocksDB)
//   programs (AppService: the program store, its records in the same RocksDB)
//   jobs (JobService, its table in the same RocksDB; JobProtocol for clients)
//   scheduling (SchedulingService: the Scheduler of the config through the
//     one SchedulingLoop; SchedulingProtocol for workers and roots, over
//     SchedulingConnections; SchedulingRecord, what readers see of it)
//   server (MasterService) routing each protocol to its service
//   the read-only HTTP API and dashboard (Api), when [http] enables it
// Components are built in the order they depend on each other and destroyed
// in reverse. The two loops between them are closed here: the job service
// hands its jobs to scheduling when it resumes, and the end of a restarted
// master's recovery is passed to the job service and the protocol.
// Thread-safety: everything runs on the io_context's thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "copse/status.h"
#include "dfs/meta_store.h"
#include "master/metrics.h"
#include "master/scheduling_protocol.h"
#include "master/scheduling_record.h"

namespace copse::master {

class Api;
class AppService;
class ClusterService;
class DfsService;
class JobProtocol;
class MasterService;
class NameServiceAppFiles;
class NameServiceJobFiles;

class Master {
 public:
  struct Options {
    uint16_t port = 0;  // listen here; 0: the config's master.port
  };

  // Opens the master's store under the config's data dir, reads its tables
  // (drains, namespace, programs, jobs) and builds every component.
  // REQUIRES: `io`, `config` and the clocks outlive the master. `clock` is
  // the steady clock (timers, round times), `wall` the calendar's.
  static Result<std::unique_ptr<Master>> Open(asio::io_context& io, const ClusterConfig& config,
                                              std::string secret, const Clock& clock,
                                              const Clock& wall, Options options);
  ~Master();
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  // Hands the jobs to scheduling, listens, and starts the components' timers
  // and the HTTP API.
  Status Start();
  // Closes the servers and stops the timers; the io_context then finishes
  // what is pending.
  void Stop();

 private:
  Master(asio::io_context& io, const ClusterConfig& config, std::string secret, const Clock& clock,
         const Clock& wall, Options options);
  // Membership and the name service.
  Status OpenCluster();
  // The program store and the job table; whether the table holds running
  // jobs (the master restarted with work in flight).
  Result<bool> OpenJobs();
  Status OpenScheduling(bool restarted);
  void ArmSweep();
  Status StartApi();

  asio::io_context& io_;
  const ClusterConfig& config_;
  const std::string secret_;
  const Clock& clock_;
  const Clock& wall_;
  const Options options_;
  std::unique_ptr<dfs::MetaStore> meta_;
  std::unique_ptr<ClusterManager> cluster_;
  std::unique_ptr<ClusterService> cluster_service_;
  std::unique_ptr<DfsService> dfs_;
  std::unique_ptr<NameServiceAppFiles> app_files_;
  std::unique_ptr<AppService> apps_;
  std::unique_ptr<NameServiceJobFiles> files_;
  std::unique_ptr<JobService> jobs_;
  MasterMetrics metrics_;               // Prometheus metrics, served with the HTTP API at /metrics
  SchedulingRecord record_{&metrics_};  // what readers see of scheduling
  SchedulingConnections connections_;
  std::unique_ptr<SchedulingService> scheduling_;
  std::unique_ptr<SchedulingProtocol> scheduling_protocol_;
  std::unique_ptr<JobProtocol> job_protocol_;
  asio::steady_timer sweep_;  // the job table's Sweep, every minute
  std::unique_ptr<MasterService> server_;
  std::unique_ptr<Api> api_;
};

}  // namespace copse::master

// RootTask: a job's root task, the copse-rootjob process (docs/design.md §1, §6;
// Quincy §2). It runs in a slot on a worker, connects to the master and says
// hello; the master answers with the job's spec. It then reads its input
// files' partitions, blocks and replicas from the name service, creates the
// job's output files, and runs the job's DAG state machine
// (rootjob/job_manager.h): every ready vertex is submitted with its exact
// preferred computers and racks (rootjob/locality.h, computed block by
// block), every task event moves the DAG on, stragglers get duplicates,
// losers and consumers of lost outputs are withdrawn, and the vertices'
// states are reported to the master as progress. When the job is over it
// says so (JobOver), waits for the master's answer and exits 0.
//
// If the master goes away, the root reconnects and says hello again listing
// its live tasks; the master says which it still knows, and the others run
// again, as do the runs of a submission whose answer was lost. Nothing is
// sent while no master has welcomed the root; the job's end, once decided,
// is sent again after every welcome until the master answers it, and again
// after a second when the master could not record it (its store refused).
// If the master refuses it (the job was killed, or restarted as a new
// incarnation), it exits 1.
//
// Its connection to the master (net::Link), its timers (net::Timer) and what
// it asks of the name service (RootFiles) are interfaces: the process's root
// makes its own over TCP, the io_context and a DFS client, and a test drives
// the root through fakes of them.
// Thread-safety: everything runs on its io_context thread; DFS calls block
// it briefly (at start and at the end).
#pragma once

#include <capnp/message.h>

#include <asio/io_context.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/net/link.h"
#include "common/tasks.h"
#include "dfs/client.h"
#include "proto/scheduling.capnp.h"
#include "rootjob/job_manager.h"
#include "rootjob/job_spec.h"
#include "rootjob/vertex_io.h"

namespace copse::rootjob {

struct RootOptions {
  uint64_t job = 0;
  uint32_t incarnation = 0;
  uint64_t task = 0;         // this root's task id
  std::string computer;      // where it runs
  Duration tick{1'000'000};  // how often stragglers are looked for
  Duration progress_every{250'000};
  // A JobOver the master could not record is sent again, and a start that
  // met the master gone (reading the inputs' facts) is tried again, after this.
  Duration over_retry{1'000'000};
};

// What the root asks of the name service: its inputs' partitions, blocks
// and replicas, its outputs created, an earlier incarnation's scratch data
// deleted.
class RootFiles {
 public:
  virtual ~RootFiles() = default;
  virtual Result<dfs::FileStatus> Stat(const std::string& path) = 0;
  virtual Status Create(const std::string& path, const dfs::CreateOptions& options) = 0;
  virtual Result<int> DeleteJobScratch(const std::string& job) = 0;
};

class RootTask final : public net::LinkHandler {
 public:
  // The process's root: connects to the config's master over TCP and asks
  // the name service through `dfs`.
  // REQUIRES: io, config and clock outlive the root.
  RootTask(asio::io_context& io, const ClusterConfig& config, std::string secret,
           RootOptions options, const Clock& clock, std::unique_ptr<dfs::DfsClient> dfs);
  // A root over the given parts, which report to it (a test's fakes).
  struct Parts {
    net::Link& link;
    RootFiles& files;
    net::Timer& tick;         // looks for stragglers, sends progress
    net::Timer& over_retry;   // sends again an end the master could not record
    net::Timer& setup_retry;  // tries again a start that met the master gone
  };
  // REQUIRES: every argument outlives the root.
  RootTask(asio::io_context& io, const ClusterConfig& config, RootOptions options,
           const Clock& clock, Parts parts);
  ~RootTask() override;
  RootTask(const RootTask&) = delete;
  RootTask& operator=(const RootTask&) = delete;

  // Connects to the master; the io_context runs until the root is done
  // (the root stops it).
  void Start();
  // 0 once the master recorded the job's end; 1 when it gave up.
  int exit_code() const { return exit_code_; }

  // net::LinkHandler
  void OnLinkOpen(const std::string& remote) override;
  void OnLinkFrame(const net::Frame& frame) override;
  void OnLinkClose(const Status& why) override;

 private:
  // One block of a file partition, for locality.
  struct Block {
    int64_t bytes = 0;
    std::vector<int> replicas;
  };

  void IndexComputers();
  Status Handle(const net::Frame& frame);
  // The master welcomed this root: `spec` is the job's, `unknown` the live
  // tasks it listed that the master does not know.
  Status OnWelcome(const std::string& spec, const std::vector<uint64_t>& unknown);
  Status Setup(const std::string& spec_json);
  void OnEvent(const TaskEvent& e);
  // Submits what is ready, withdraws what must go, reports progress, and
  // ends the job when the DAG is over.
  void Pump();
  VertexTaskRequest BuildTask(const RunId& r);
  NamedLocality Locality(const RunId& r) const;
  void SendProgress(bool force);
  std::string ProgressJson() const;
  void Send(capnp::MallocMessageBuilder& msg);
  void SendOver();
  void GiveUp(const std::string& why);
  void ArmTick();

  asio::io_context& io_;
  const ClusterConfig& config_;
  RootOptions options_;
  const Clock& clock_;
  // The process's own parts (empty when given them).
  std::unique_ptr<RootFiles> own_files_;
  std::unique_ptr<net::Link> own_link_;
  std::unique_ptr<net::Timer> own_tick_, own_over_retry_, own_setup_retry_;
  net::Link& link_;
  RootFiles& files_;
  net::Timer& tick_;
  net::Timer& over_retry_;
  net::Timer& setup_retry_;
  std::map<std::string, int> computer_index_;
  std::vector<int> rack_of_;

  bool set_up_ = false;
  JobSpec spec_;
  std::unique_ptr<JobManager> jm_;
  std::vector<std::vector<std::vector<Block>>> blocks_;  // [file][partition] -> blocks
  std::map<uint64_t, RunId> run_of_task_;
  std::map<RunId, uint64_t> task_of_run_;
  std::deque<std::vector<RunId>> awaiting_ids_;  // submitted batches, oldest first
  std::vector<RunId> pending_withdrawals_;       // runs whose ids have not come yet
  // The job's end as decided, kept until the master records it.
  struct Over {
    bool succeeded = false;
    std::string reason;
    std::string progress;
  };
  std::optional<Over> over_;
  bool welcomed_ = false;  // the current connection's hello was answered
  Timestamp last_progress_{0};
  int duplicates_ = 0;
  int exit_code_ = 1;
};

}  // namespace copse::rootjob

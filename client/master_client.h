// MasterClient: what the `copse` tool asks the master, over an authenticated
// blocking connection: the cluster's status (cluster protocol) and jobs (job
// protocol). Errors name the master's address and say whether the cluster
// looks down or the secret is wrong; a request the master refuses comes back
// as its status (kInvalidArgument for a bad spec, kNotFound, ...).
//
// A master that is not there (restarting) is waited for as the ConnectRetry
// says: when connecting, and when a connection drops in the middle of a
// request, which is then sent again on a new connection. Every request is
// safe to send twice: a submission carries a request id, and the master
// answers a second submission with the same id with the job the first made.
// Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/net/blocking_client.h"

namespace copse::client {

struct ComputerStatus {
  std::string name;
  std::string rack;
  int slots = 0;
  std::string state;
  std::string host;
  int64_t last_heartbeat_ago_ms = -1;
  uint32_t pid = 0;
  int busy_slots = 0;
  bool draining = false;
  int sole_blocks = 0;   // while draining: blocks no computer that stays holds
  int short_blocks = 0;  // while draining: blocks with fewer than their factor elsewhere
};

struct ClusterStatus {
  std::string cluster;
  uint32_t master_pid = 0;
  int64_t uptime_ms = 0;
  int under_replicated_blocks = 0;  // committed DFS blocks short of their factor
  std::vector<ComputerStatus> computers;

  int LiveCount() const;
};

class MasterClient {
 public:
  // Connects using the config's master address and secret file.
  // REQUIRES: config outlives the client.
  static Result<std::unique_ptr<MasterClient>> Connect(const ClusterConfig& config,
                                                       std::chrono::milliseconds timeout,
                                                       net::ConnectRetry retry = {});

  Result<ClusterStatus> GetClusterStatus();
  // Begins (`drain`) or ends draining `computer` (`copse cluster drain`):
  // the master's warning, or "" ; a refusal comes back as its status
  // (kNotFound for a computer the config does not name).
  Result<std::string> Drain(const std::string& computer, bool drain, bool move_tasks);

  // ---- jobs (JSON documents as the master builds them, docs/jobs.md)
  Result<uint64_t> SubmitJob(const std::string& spec);
  Result<std::string> JobStatus(uint64_t job);
  // Polls JobStatus every `poll` until the job is over, for at most `bound`:
  // its last status document when it succeeded; kInternal naming the state
  // and the failure when it failed or was killed; kDeadlineExceeded after `bound`.
  Result<std::string> WaitJob(uint64_t job, std::chrono::milliseconds bound,
                              std::chrono::milliseconds poll = std::chrono::milliseconds(50));
  Result<std::string> ListJobs();
  struct KillOutcome {
    std::string state;
    bool already_over = false;
  };
  Result<KillOutcome> KillJob(uint64_t job);
  Result<std::string> LogIndex(uint64_t job);
  Result<std::string> EngineStats(bool reset);

  // ---- the program store (docs/sdk.md): answers are JSON documents
  struct AppPutRequest {
    std::string name, version, entry, sha256;
    uint64_t size = 0;
    bool shadow = false;
    bool executable = true;
    bool commit = false;  // false: prepare, before the upload
  };
  Result<std::string> AppPut(const AppPutRequest& request);
  Result<std::string> AppList(const std::string& name);
  Result<std::string> AppRemove(const std::string& name, const std::string& version);

 private:
  explicit MasterClient(std::unique_ptr<net::RedialingChannel> channel)
      : channel_(std::move(channel)) {}

  // Sends a request of `protocol` and returns the reply's frame; a dropped
  // connection is made again (as the ConnectRetry says) and the request
  // sent again.
  Result<net::Frame> Call(net::Protocol protocol, const std::vector<uint8_t>& request);
  // Sends a job request; the reply, or the status of a JobError.
  Result<std::vector<uint8_t>> JobCall(std::vector<uint8_t> request);

  std::unique_ptr<net::RedialingChannel> channel_;
};

}  // namespace copse::client

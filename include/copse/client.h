// copse/client.h: a program's way into a Copse cluster (docs/sdk.md):
// submit jobs, follow them, read and write files of the cluster's DFS. It
// speaks to the master named in a cluster config, as the `copse` tool does,
// with the credential that config names.
//
//   auto client = copse::Client::Connect({.config = "cluster.toml"});
//   if (!client.ok()) ...
//   copse::Result<uint64_t> id = (*client)->Submit(spec);   // copse/job.h
//   copse::Result<copse::JobInfo> end = (*client)->Wait(*id);
//   copse::Result<std::string> out = (*client)->ReadFile("/matches");
//
// Errors are Status values: kUnavailable when the master cannot be reached
// (after waiting Options::master_wait for one that restarts),
// kPermissionDenied when it refuses the credential, kInvalidArgument for a
// spec it refuses (the message names the stage and the problem), kNotFound
// for a job or file that does not exist.
// Thread-safety: a Client belongs to one thread at a time.
#pragma once

#include <copse/job.h>
#include <copse/status.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace copse {

// A job as the master reports it.
struct JobInfo {
  uint64_t id = 0;
  std::string name;
  std::string state;    // queued, running, succeeded, failed or killed
  std::string failure;  // why it failed, when it did
  int vertices = 0;     // in all
  int done = 0;         // completed
  std::string json;     // the whole status document (docs/jobs.md)

  bool ended() const { return state == "succeeded" || state == "failed" || state == "killed"; }
  bool succeeded() const { return state == "succeeded"; }
};

class Client {
 public:
  struct Options {
    // The cluster config; empty: $COPSE_CONFIG, then cluster-configs/local.toml.
    std::string config;
    // How long to wait for a master that does not answer (restarting).
    std::chrono::seconds master_wait{30};
    // Files written from outside the cluster (empty) or from this computer.
    std::string computer;
  };

  static Result<std::unique_ptr<Client>> Connect(const Options& options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // ---- jobs
  // Submits a job; returns its id. A submission is applied once, even when
  // its answer was lost and it was sent again.
  Result<uint64_t> Submit(const JobSpec& spec);
  Result<uint64_t> Submit(std::string_view spec_json);
  Result<JobInfo> GetJob(uint64_t job);
  // Waits until the job ended (whatever its end: check succeeded()),
  // calling `progress` whenever its count of done vertices changes.
  // kDeadlineExceeded after `bound`.
  Result<JobInfo> Wait(uint64_t job, const std::function<void(const JobInfo&)>& progress = {},
                       std::chrono::seconds bound = std::chrono::hours(24));
  Status Kill(uint64_t job);

  // ---- files
  // Streams a DFS file's partitions, in order, into `sink`.
  Status ReadFile(const std::string& path,
                  const std::function<Status(std::string_view bytes)>& sink);
  Result<std::string> ReadFile(const std::string& path);
  // Writes `data` as a new DFS file of `partitions` partitions, cut at line
  // ends (no line straddles two), with the config's replication.
  // kAlreadyExists when the path is taken.
  Status WriteFile(const std::string& path, std::string_view data, int partitions = 1);

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse

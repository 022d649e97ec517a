// JobService: the master's job table and the life of every job (docs/design.md
// §6). Clients submit, inspect, list and kill jobs; roots report progress
// and say when their job is over; the scheduling service says when a job is
// admitted, how each of its runs goes and when its root is lost.
//
// Submission checks the spec (rootjob/job_spec.h) with the cluster's limits,
// that every program is in the apps directory, that every input file exists
// and that no output exists or is claimed by another job, and refuses a job
// beyond the queue limit. A job is queued, then running (admitted: its root
// runs), then succeeded, failed or killed. When a job is over its outputs are
// published (success: all at once) or dropped, and its scratch data deleted.
// A root that is lost restarts its job as a new incarnation, keeping its
// admission place; after [jobs] max_root_restarts the job fails instead.
//
// The table lives in the master's RocksDB: a restarted master finds queued
// jobs queued in their order and running jobs running (their roots are
// adopted when their workers register again; a job whose root did not come
// back restarts), and collects files of jobs that ended while it was away.
// Finished jobs are kept for the configured retention.
//
// Status documents are JSON (docs/jobs.md): `copse job status --json` prints
// the very document the HTTP API will serve.
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/disk.h"
#include "copse/status.h"
#include "dfs/meta_store.h"
#include "master/app_service.h"
#include "master/job_scheduling.h"
#include "rootjob/job_spec.h"

namespace copse::master {

// The name service's part in the life of jobs.
class JobFiles {
 public:
  virtual ~JobFiles() = default;
  // Partitions and size of each file; kNotFound names a missing one.
  virtual Result<std::map<std::string, rootjob::FileFacts>> InputFacts(
      const std::vector<std::string>& paths) = 0;
  // kAlreadyExists names an output path that is taken.
  virtual Status OutputsFree(const std::vector<std::string>& paths) = 0;
  // The job's output files become visible, all at once.
  virtual Status PublishOutputs(uint64_t job) = 0;
  virtual void DropOutputs(uint64_t job) = 0;
  virtual void DeleteScratch(uint64_t job) = 0;
  // Jobs that have scratch data or unpublished outputs.
  virtual std::set<uint64_t> JobsWithFiles() = 0;
};

enum class JobState { kQueued, kRunning, kSucceeded, kFailed, kKilled };
const char* JobStateName(JobState s);

struct KillResult {
  JobState state = JobState::kKilled;
  bool already_over = false;
};

// What a root that says hello gets to know.
struct RootAdmission {
  std::string name;
  std::string spec;  // JSON
};

class JobService final : public JobEvents {
 public:
  struct Options {
    std::filesystem::path apps_dir;  // where programs must be
    // The program store, where a stage's program is looked up first
    // (docs/sdk.md); null: the apps directory only.
    const AppService* apps = nullptr;
    // Runs `fn` on the service's thread once the current event is handled
    // (the master posts it to its io_context). REQUIRED.
    std::function<void(std::function<void()>)> defer;
    // How free space under the master's data dir is read; empty: statvfs.
    FreeSpaceFn free_space;
  };

  // REQUIRES: every argument outlives the service.
  JobService(const ClusterConfig& config, dfs::MetaStore& store, JobFiles& files, const Clock& wall,
             Options options);

  // Reads the job table. Returns whether it holds running jobs (the master
  // restarted with work in flight).
  Result<bool> Load();
  // Hands queued and running jobs to `scheduling`, in submission order, and
  // collects files of jobs that are gone. From here on jobs are scheduled
  // there. REQUIRES: `scheduling` outlives the service; called once, before
  // anything else but Load.
  Status Resume(JobScheduling& scheduling);
  // After a restarted master's recovery: running jobs whose root did not
  // come back restart.
  void AfterRecovery();
  // Writes again records the store refused before; forgets finished jobs
  // past the retention or beyond the table's limits (Trim).
  void Sweep();

  // ---- clients
  // kInvalidArgument for a bad spec or unknown program; kNotFound for a
  // missing input; kAlreadyExists for an output that exists or is claimed;
  // kResourceExhausted when the queue is full. A `request_id` (the client's,
  // at most kMaxRequestIdBytes) that a job in the table was submitted with
  // returns that job: a client that lost the answer can ask again.
  static constexpr size_t kMaxRequestIdBytes = 64;
  Result<uint64_t> Submit(std::string_view spec, std::string_view request_id = {});
  Result<std::string> StatusJson(uint64_t job) const;
  std::string ListJson() const;
  Result<KillResult> Kill(uint64_t job);
  // Every run of the job (root and vertices) with where it ran.
  Result<std::string> LogIndexJson(uint64_t job) const;
  // A job that has not ended and is pinned to NAME@VERSION, if there is one
  // (the program store refuses to remove what such a job runs).
  std::optional<uint64_t> PinnedBy(const std::string& name, const std::string& version) const;

  // ---- roots
  // kNotFound / kFailedPrecondition unless `job` runs as this incarnation with
  // this root task.
  Result<RootAdmission> ValidateRoot(uint64_t job, uint32_t incarnation, uint64_t root_task) const;
  void Progress(uint64_t job, std::string_view json);
  // The root says the job is over.
  Status Over(uint64_t job, bool succeeded, const std::string& reason, std::string_view progress);

  // ---- JobEvents (from the scheduling service)
  void OnAdmitted(uint64_t job) override;
  void OnRun(const RunNews& news) override;
  void OnRootLost(uint64_t job, const std::string& why) override;

  // ---- the HTTP API (master/api.h reads the table as it is)
  struct Run {
    uint64_t task = 0;
    uint32_t attempt = 0;
    bool root = false;
    std::string label, computer, state, reason;
    int64_t launched_ms = 0, ended_ms = -1;
    int64_t launch_us = -1;
    int64_t spawn_us = -1;  // of launch_us, until the program was exec'd
    // Bytes the run read, as its DFS client counted them by locality (its
    // result document's bytes_read; 0 until it ends, or when it reported none).
    int64_t read_local = 0, read_rack = 0, read_core = 0;
  };
  struct Job {
    uint64_t id = 0;
    std::string request_id;  // the client's id of the submission, or empty
    std::string name;
    std::string spec;  // as stored (compact JSON)
    JobState state = JobState::kQueued;
    uint32_t incarnation = 0;
    uint64_t root_task = 0;
    int64_t submitted_ms = 0, admitted_ms = -1, finished_ms = -1;
    std::string failure;
    std::vector<std::string> outputs;
    int vertices = 0;
    scheduler::JobAttributes attributes;
    nlohmann::json progress = nlohmann::json::object();  // the root's latest
    nlohmann::json counters = nlohmann::json::object();
    nlohmann::json restarts = nlohmann::json::array();
    std::vector<Run> runs;
    // The stages as submitted and each one's vertex count (the HTTP API's DAG).
    std::vector<rootjob::StageSpec> stages;
    std::vector<int> stage_vertices;
    // The programs of the program store it was pinned to at submission
    // (its spec names them NAME@VERSION); the rest come from the apps
    // directory.
    std::vector<ProgramRef> programs;
    // Grows with every change of the job (its status, runs or progress), so a
    // reader can tell a job it has seen from one that changed.
    uint64_t version = 0;
    uint64_t record_bytes = 0;  // its record's size in the store, as last written
  };

  const std::map<uint64_t, Job>& jobs() const { return jobs_; }
  // The status document of `copse job status --json` (docs/jobs.md).
  nlohmann::json Document(const Job& j) const;
  // A run as the job's document and history show it.
  static nlohmann::json RunToJson(const Run& r);

 private:
  bool over(const Job& j) const {
    return j.state != JobState::kQueued && j.state != JobState::kRunning;
  }
  int64_t NowMs() const;
  // Writes the job's record (and sets its record_bytes).
  Status Save(Job& j);
  // Forgets finished jobs past the retention and beyond [jobs] max_finished
  // and max_finished_mb, oldest first.
  void Trim();
  // Saves a change that has happened already (the scheduler's); a record the
  // store refuses is kept in unsaved_ and written again by Sweep.
  void SaveOrRetry(Job& j);
  nlohmann::json Record(const Job& j) const;
  Result<Job> FromRecord(const nlohmann::json& r) const;
  // Resolves every program the spec names (a stage's, a streaming
  // combiner's) in the program store, then the apps directory; rewrites
  // store programs as NAME@VERSION and returns their pins.
  Result<std::vector<ProgramRef>> PinPrograms(rootjob::JobSpec& spec) const;
  // Ends the job; `by_root`: its root said so (and exits by itself).
  Status Finish(Job& j, JobState state, const std::string& failure, bool by_root);
  Job* Find(uint64_t id);
  const Job* Find(uint64_t id) const;

  const ClusterConfig& config_;
  dfs::MetaStore& store_;
  JobFiles& files_;
  const Clock& wall_;
  Options options_;
  JobScheduling* scheduling_ = nullptr;  // set by Resume
  std::map<uint64_t, Job> jobs_;
  std::set<uint64_t> unsaved_;
  uint64_t next_id_ = 1;
};

}  // namespace copse::master

// ProgramCache: where a worker's vertex programs come from (docs/sdk.md).
//
// A program a job names is one of the job's pinned programs (ProgramRef:
// NAME@VERSION with its SHA-256, from the master's program store) or a
// program of the cluster's apps directory. A pinned program is fetched
// through the DFS client (a replica on this computer first), checked
// against its SHA-256 (a DFS copy that does not match is refused, saying
// so), unpacked when it is a .tar archive, and kept under
// <data dir>/programs/<sha256>[.tar]/ for later runs; past [worker]
// program_cache_mb the least recently used entries no run uses are
// dropped. An entry whose files changed since they were checked (a
// corrupt or tampered cache) is dropped and fetched again; an entry found
// on disk from an earlier worker is checked against its hash once.
//
// Every program's binary is read for the vertex-contract mark
// (copse/vertex.h): `contract` is the version it was built for, 0 for a
// program that does not link the runtime (it runs as a streaming vertex).
//
// Fetching and checking happen on a thread of the cache's own; a program of
// the apps directory is found on the caller's thread, never behind a fetch.
// Answers come back through `post`, on the caller's thread. Entries are
// read-only once checked (a program cannot change its own files); one that
// changed while a run uses it fails the new run as this computer's trouble
// (it is placed again), not the job's.
// Thread-safety: Resolve and Release may be called from one thread (the
// worker's io thread).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "common/config.h"
#include "copse/status.h"
#include "common/tasks.h"
#include "common/work_thread.h"

namespace copse::worker {

struct ResolvedProgram {
  std::filesystem::path exec;
  int contract = 0;    // the mark's version; 0: none (a streaming program)
  std::string lease;   // give back with Release once the run ended; empty: none
  bool fetched = false;  // came through the DFS for this run
};

// What the task manager asks (a fake in its tests).
class ProgramSource {
 public:
  virtual ~ProgramSource() = default;
  using Done = std::function<void(Result<ResolvedProgram>)>;
  // Finds `name` (as the job names it) among `pinned`, else in the apps
  // directory. kNotFound names where it looked; kCorruption a DFS copy whose
  // hash is not the pinned one; kUnavailable when the DFS could not be read.
  virtual void Resolve(const std::string& name, const std::vector<ProgramRef>& pinned,
                       Done done) = 0;
  virtual void Release(const std::string& lease) = 0;
};

class ProgramCache final : public ProgramSource {
 public:
  struct Options {
    std::filesystem::path dir;       // <data dir>/programs
    std::filesystem::path apps_dir;  // the cluster's apps directory
    uint64_t max_bytes = 1u << 30;
    std::string computer;
    // Runs a function on the caller's thread (the worker posts it to its
    // io_context).
    std::function<void(std::function<void()>)> post;
  };
  // REQUIRES: config outlives the cache.
  ProgramCache(const ClusterConfig& config, std::string secret, Options options);
  ~ProgramCache() override;

  void Resolve(const std::string& name, const std::vector<ProgramRef>& pinned, Done done) override;
  void Release(const std::string& lease) override;

  // Bytes the entries take (for tests and the log).
  uint64_t bytes() const;

 private:
  struct Entry;
  struct Marked;
  Result<ResolvedProgram> ResolveNow(const std::string& name, const std::vector<ProgramRef>& pinned);
  Result<ResolvedProgram> FromStore(const ProgramRef& ref);
  Status Fetch(const ProgramRef& ref, const std::filesystem::path& into);
  Result<int> ContractOf(const std::filesystem::path& exec);
  void Evict(const std::string& keep);
  void ScanDisk();

  const ClusterConfig& config_;
  std::string secret_;
  Options options_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;  // GUARDED_BY(mu_), by sha256
  std::map<std::string, std::unique_ptr<Marked>> marks_;   // GUARDED_BY(mu_), by path
  uint64_t clock_ = 0;                                     // GUARDED_BY(mu_): use order
  std::atomic<bool> stopping_{false};
  struct Dfs;
  std::unique_ptr<Dfs> dfs_;  // the fetch thread's
  WorkThread thread_;         // last: joined first
};

// The vertex-contract version marked in the file's bytes; 0 when it has no
// mark (copse/vertex.h).
Result<int> ReadContractMark(const std::filesystem::path& file);

}  // namespace copse::worker

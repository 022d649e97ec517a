// NameService: the master's DFS service logic (docs/design.md §4), between the
// wire and the Namespace. It answers clients (create, allocate, commit, list,
// stat, delete, open a job's output), serves the master's execution engine
// (publish or drop a job's outputs, drop what a task run left unfinished, the
// jobs that still have files), keeps the replica map in step with what workers report,
// knows which computers are live, and on each Tick collects abandoned writes,
// re-replicates blocks of computers dead for longer than the re-replication
// delay, trims surplus copies of computers that came back, and sends workers
// the deletions they owe. Messages to workers go through a WorkerSender, so
// tests drive it with a fake sender and explicit times.
// Thread-safety: not thread-safe; the master owns it on its event loop.
#pragma once

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "dfs/dfs_types.h"
#include "dfs/meta_store.h"
#include "dfs/namespace.h"

namespace copse::dfs {

// How the name service reaches workers. Each call returns false when the
// computer has no open connection to the master right now.
class WorkerSender {
 public:
  virtual ~WorkerSender() = default;
  virtual bool DeleteBlocks(const std::string& computer, const std::vector<BlockId>& blocks) = 0;
  // Asks `computer` to copy `block` from the first of `sources` that works.
  virtual bool Replicate(const std::string& computer, BlockId block, uint64_t size,
                         const std::vector<Endpoint>& sources) = 0;
};

// What a drained computer still holds that the DFS would lose with it
// (NameService::DrainProgress).
struct DrainProgress {
  // Committed blocks with a replica on the computer and none on a live
  // computer that is not draining: lost if it died now.
  int sole_blocks = 0;
  // Committed blocks with a replica on the computer and fewer than their
  // factor on live computers that are not draining (sole ones included).
  int short_blocks = 0;
  // Committed blocks recorded on the computer.
  int blocks = 0;
};

struct NameServiceOptions {
  uint64_t seed = 1;                // placement's random generator
  int max_copies_per_computer = 2;  // concurrent re-replication copies
  Duration copy_timeout{60'000'000};
};

class NameService {
 public:
  // REQUIRES: config, store and sender outlive the service.
  NameService(const ClusterConfig& config, MetaStore& store, WorkerSender& sender,
              NameServiceOptions options);

  // Loads the namespace; `now` is when this master started.
  Status Load(Timestamp now);

  // ---- clients
  Result<CreateResult> Create(const CreateRequest& request, Timestamp now);
  Result<BlockAllocation> AllocateBlock(const BlockRequest& request, Timestamp now);
  Result<bool> CommitPartition(FileId file, int partition, const std::vector<CommitBlock>& blocks,
                               Timestamp now);
  // All of `partitions` or none (Namespace::CommitPartitions).
  Result<bool> CommitPartitions(FileId file, const std::vector<PartitionCommit>& partitions,
                                Timestamp now);
  // The pending output file at `path`, for a run writing one of its partitions.
  Result<OutputFileInfo> OpenOutput(const std::string& path) const;
  Status Abandon(FileId file);
  // With `partition` >= 0 only that partition lists its blocks (Namespace::Stat).
  Result<FileStatus> Stat(const std::string& path, int partition = -1) const;
  Result<std::vector<ListEntry>> List(const std::string& path) const;
  Status Delete(const std::string& path);
  Result<int> DeleteJob(const std::string& job);
  // A reader found a bad copy of `block` on `computer`: it stops counting as a
  // replica, is deleted there, and the block is copied elsewhere.
  Status ReportBadReplica(BlockId block, const std::string& computer, const std::string& reason);

  // ---- the execution engine (the master calls these directly)
  // Makes every pending output file of `job` visible at once (one store
  // write); kFailedPrecondition names the first partition not committed, and
  // nothing is published then. Returns how many files were published.
  Result<int> PublishJobOutputs(const std::string& job);
  // Deletes every pending output file of `job` (the job failed or was killed).
  Result<int> DropJobOutputs(const std::string& job);
  // A run that ended without completing: drops its unfinished files and its
  // uncommitted blocks (Namespace::AbandonRun).
  Result<DroppedWrites> AbandonRun(uint64_t task, uint32_t attempt);
  // Jobs with pending output files, and jobs with scratch files.
  std::vector<std::string> PendingOutputJobs() const { return ns_.PendingOutputJobs(); }
  std::vector<std::string> ScratchJobs() const { return ns_.ScratchJobs(); }

  // ---- workers
  Status OnBlockReport(const std::string& computer,
                       const std::vector<std::pair<BlockId, uint64_t>>& blocks);
  Status OnBlockReceived(const std::string& computer, BlockId block, uint64_t size);
  Status OnBadReplica(const std::string& computer, BlockId block, const std::string& reason);
  void OnReplicationDone(const std::string& computer, BlockId block, bool ok,
                         const std::string& message);

  // ---- membership
  void OnComputerUp(const std::string& computer, Timestamp now);
  void OnComputerDown(const std::string& computer, Timestamp now);
  // A computer is being drained (`copse cluster drain`), or no longer is:
  // while it drains, no new replica is placed there and every block it
  // holds is copied to computers that are not draining (dfs/replication.h).
  // Unknown names are kept too (the master checks them).
  void SetDraining(const std::string& computer, bool draining);
  bool IsDraining(const std::string& computer) const { return draining_.count(computer) != 0; }
  // What `computer` holds that exists on no other computer that stays.
  // Scratch blocks (a job's intermediate data, one copy, regenerated by
  // re-execution) and blocks not yet committed are left out.
  DrainProgress Drain(const std::string& computer) const;

  // Periodic work; call every few hundred milliseconds.
  void Tick(Timestamp now);

  // Live replicas per committed, non-scratch block below its replication
  // factor (for tests and status); replicas on draining computers do not
  // count.
  int UnderReplicatedBlocks() const;
  // The first `limit` of them with their files (Namespace::UnderReplicated).
  std::vector<Namespace::UnderReplicatedBlock> UnderReplicatedList(size_t limit,
                                                                   size_t* total) const {
    return ns_.UnderReplicated([&](const std::string& c) { return Staying(c); }, limit, total);
  }
  // Whether the master has just started and not every computer's worker
  // has registered yet, for at most [dfs] safe_mode: replicas are not placed
  // meanwhile (the DFS service holds such requests).
  bool Starting(Timestamp now) const;
  // Whether the name service counts `computer` as live.
  bool IsLive(const std::string& computer) const { return live_.count(computer) != 0; }
  // Live and not draining: where replicas may be placed and count.
  bool Staying(const std::string& computer) const {
    return IsLive(computer) && !IsDraining(computer);
  }
  size_t copies_in_flight() const;
  const Namespace& ns() const { return ns_; }

 private:
  struct Copy {
    std::string source;
    std::string target;
    Timestamp deadline;
  };

  // Live computers in config order; `usable_only`: only those whose block
  // report arrived since they came up.
  std::vector<PlacementComputer> Computers(bool usable_only) const;
  // Where new replicas may go: live computers that are not draining.
  std::vector<PlacementComputer> Placeable() const;
  Endpoint EndpointOf(const std::string& computer) const;
  bool Counted(const std::string& computer, Timestamp now) const;
  void Queue(const Deletions& deletions);
  void FlushDeletes();
  void StartCopies(Timestamp now);
  void TrimSurplus();

  const ClusterConfig& config_;
  Namespace ns_;
  WorkerSender& sender_;
  NameServiceOptions options_;
  std::mt19937_64 rng_;
  Timestamp started_{0};
  bool all_registered_ = false;     // every computer has been live since the start
  std::set<std::string> live_;      // registered and live
  std::set<std::string> reported_;  // live and its block report arrived since
  std::map<std::string, Timestamp> down_since_;
  std::set<std::string> draining_;
  std::map<std::string, std::set<BlockId>> pending_deletes_;
  std::map<BlockId, std::vector<Copy>> in_flight_;
  std::map<BlockId, std::set<std::string>> avoid_;
};

}  // namespace copse::dfs

#include "dfs/name_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "dfs/replication.h"

namespace copse::dfs {
namespace {

NamespaceOptions FromConfig(const ClusterConfig& config) {
  NamespaceOptions o;
  o.block_size = static_cast<uint64_t>(config.block_size_bytes);
  o.default_replication = config.replication;
  o.uncommitted_grace = config.dfs.uncommitted_grace;
  return o;
}

}  // namespace

NameService::NameService(const ClusterConfig& config, MetaStore& store, WorkerSender& sender,
                         NameServiceOptions options)
    : config_(config),
      ns_(FromConfig(config), store),
      sender_(sender),
      options_(options),
      rng_(options.seed) {}

Status NameService::Load(Timestamp now) {
  started_ = now;
  COPSE_RETURN_IF_ERROR(ns_.Load(now));
  spdlog::info("DFS namespace loaded: {} files, {} blocks", ns_.file_count(), ns_.block_count());
  return Status::Ok();
}

std::vector<PlacementComputer> NameService::Computers(bool usable_only) const {
  std::vector<PlacementComputer> out;
  for (const ComputerConfig& c : config_.computers) {
    if (!live_.count(c.name) || (usable_only && !reported_.count(c.name))) continue;
    out.push_back({c.name, c.rack});
  }
  return out;
}

std::vector<PlacementComputer> NameService::Placeable() const {
  std::vector<PlacementComputer> out = Computers(false);
  std::erase_if(out, [&](const PlacementComputer& c) { return IsDraining(c.name); });
  return out;
}

Endpoint NameService::EndpointOf(const std::string& computer) const {
  const ComputerConfig* c = config_.FindComputer(computer);
  if (!c) return {computer, "", "", 0};
  return {c->name, c->rack, c->host, c->data_port};
}

bool NameService::Starting(Timestamp now) const {
  return !all_registered_ && now - started_ < config_.dfs.safe_mode;
}

bool NameService::Counted(const std::string& computer, Timestamp now) const {
  if (live_.count(computer)) return true;
  auto it = down_since_.find(computer);
  // A computer not seen since this master started gets a worker timeout to
  // register before its replicas start to count as lost.
  Timestamp since = it != down_since_.end() ? it->second : started_ + config_.worker_timeout;
  return now - since < config_.dfs.rereplication_delay;
}

// ---- clients -----------------------------------------------------------------

Result<CreateResult> NameService::Create(const CreateRequest& request, Timestamp now) {
  if (!request.writer.empty() && !config_.FindComputer(request.writer)) {
    return InvalidArgument(
        fmt::format("writer computer '{}' is not in the cluster config", request.writer));
  }
  COPSE_ASSIGN_OR_RETURN(CreateResult r, ns_.Create(request, Placeable(), rng_, now));
  std::string run =
      request.run.empty() ? "" : fmt::format(", task {}.{}", request.run.task, request.run.attempt);
  std::string output = request.output_job.empty() ? "" : ", output of job " + request.output_job;
  spdlog::info("creating {} ({} partitions, replication {}, placement {}, writer {}{}{})",
               request.path, request.partitions, r.replication, request.placement.ToString(),
               request.writer.empty() ? "outside the cluster" : request.writer, run, output);
  return r;
}

Result<BlockAllocation> NameService::AllocateBlock(const BlockRequest& request, Timestamp now) {
  COPSE_ASSIGN_OR_RETURN(Allocation a, ns_.AllocateBlock(request, Placeable(), rng_, now));
  BlockAllocation out{a.id, {}};
  for (const std::string& t : a.targets) out.targets.push_back(EndpointOf(t));
  return out;
}

Result<bool> NameService::CommitPartition(FileId file, int partition,
                                          const std::vector<CommitBlock>& blocks, Timestamp now) {
  return CommitPartitions(file, {PartitionCommit{partition, blocks}}, now);
}

Result<bool> NameService::CommitPartitions(FileId file,
                                           const std::vector<PartitionCommit>& partitions,
                                           Timestamp now) {
  for (const PartitionCommit& p : partitions) {
    for (const CommitBlock& b : p.blocks) {
      for (const std::string& r : b.replicas) {
        if (!config_.FindComputer(r))
          return InvalidArgument(fmt::format("replica computer '{}' is not in the cluster", r));
      }
    }
  }
  Deletions d;
  auto visible = ns_.CommitPartitions(file, partitions, now, &d);
  Queue(d);
  FlushDeletes();
  return visible;
}

Result<OutputFileInfo> NameService::OpenOutput(const std::string& path) const {
  COPSE_ASSIGN_OR_RETURN(FileView v, ns_.OpenOutput(path));
  return OutputFileInfo{v.id, v.output_job, static_cast<int>(v.partitions.size()), v.replication,
                        static_cast<uint64_t>(config_.block_size_bytes)};
}

Status NameService::Abandon(FileId file) {
  Deletions d;
  Status s = ns_.Abandon(file, &d);
  Queue(d);
  FlushDeletes();
  return s;
}

Result<FileStatus> NameService::Stat(const std::string& path, int partition) const {
  COPSE_ASSIGN_OR_RETURN(FileView v, ns_.Stat(path, partition));
  FileStatus out;
  out.id = v.id;
  out.path = v.path;
  out.size = v.size;
  out.replication = v.replication;
  out.placement = v.placement;
  out.scratch_job = v.scratch_job;
  out.block_size = static_cast<uint64_t>(config_.block_size_bytes);
  for (const PartitionView& p : v.partitions) {
    PartitionLocation pl{p.committed, p.size, {}};
    for (const BlockView& b : p.blocks) {
      BlockLocation bl{b.id, b.size, {}};
      for (const std::string& r : b.replicas)
        bl.replicas.push_back({EndpointOf(r), live_.count(r) > 0});
      pl.blocks.push_back(std::move(bl));
    }
    out.partitions.push_back(std::move(pl));
  }
  return out;
}

Result<std::vector<ListEntry>> NameService::List(const std::string& path) const {
  return ns_.List(path);
}

Status NameService::Delete(const std::string& path) {
  Deletions d;
  COPSE_RETURN_IF_ERROR(ns_.Delete(path, &d));
  spdlog::info("deleted {}", path);
  Queue(d);
  FlushDeletes();
  return Status::Ok();
}

Result<int> NameService::DeleteJob(const std::string& job) {
  Deletions d;
  COPSE_ASSIGN_OR_RETURN(int n, ns_.DeleteJob(job, &d));
  if (n > 0) spdlog::info("deleted {} scratch file(s) of job {}", n, job);
  Queue(d);
  FlushDeletes();
  return n;
}

Result<int> NameService::PublishJobOutputs(const std::string& job) {
  COPSE_ASSIGN_OR_RETURN(int n, ns_.PublishJobOutputs(job));
  if (n > 0) spdlog::info("published {} output file(s) of job {}", n, job);
  return n;
}

Result<int> NameService::DropJobOutputs(const std::string& job) {
  Deletions d;
  COPSE_ASSIGN_OR_RETURN(int n, ns_.DropJobOutputs(job, &d));
  if (n > 0) spdlog::info("dropped {} unpublished output file(s) of job {}", n, job);
  Queue(d);
  FlushDeletes();
  return n;
}

Result<DroppedWrites> NameService::AbandonRun(uint64_t task, uint32_t attempt) {
  Deletions d;
  COPSE_ASSIGN_OR_RETURN(DroppedWrites w, ns_.AbandonRun(RunId{task, attempt}, &d));
  if (w.files > 0 || w.blocks > 0) {
    spdlog::info("task {}.{} ended unfinished: dropped {} file(s) and {} uncommitted block(s)",
                 task, attempt, w.files, w.blocks);
  }
  Queue(d);
  FlushDeletes();
  return w;
}

Status NameService::ReportBadReplica(BlockId block, const std::string& computer,
                                     const std::string& reason) {
  if (!config_.FindComputer(computer))
    return InvalidArgument(fmt::format("computer '{}' is not in the cluster", computer));
  std::vector<std::string> replicas = ns_.ReplicasOf(block);
  if (std::find(replicas.begin(), replicas.end(), computer) == replicas.end())
    return Status::Ok();  // already dropped
  spdlog::warn("bad replica of block {} on {}: {}; dropping it and copying the block again", block,
               computer, reason);
  COPSE_RETURN_IF_ERROR(ns_.DropReplica(block, computer));
  pending_deletes_[computer].insert(block);
  avoid_[block].insert(computer);
  FlushDeletes();
  return Status::Ok();
}

// ---- workers -------------------------------------------------------------------

Status NameService::OnBlockReport(const std::string& computer,
                                  const std::vector<std::pair<BlockId, uint64_t>>& blocks) {
  std::vector<std::pair<BlockId, uint64_t>> held;
  const std::set<BlockId>& doomed = pending_deletes_[computer];
  for (const auto& b : blocks)
    if (!doomed.count(b.first)) held.push_back(b);
  Deletions d;
  COPSE_RETURN_IF_ERROR(ns_.ReportBlocks(computer, held, &d));
  if (live_.count(computer)) reported_.insert(computer);
  spdlog::info("{} reports {} block(s); {} to delete", computer, blocks.size(),
               d[computer].size() + doomed.size());
  Queue(d);
  FlushDeletes();
  return Status::Ok();
}

Status NameService::OnBlockReceived(const std::string& computer, BlockId block, uint64_t size) {
  if (pending_deletes_[computer].count(block)) return Status::Ok();
  Deletions d;
  COPSE_RETURN_IF_ERROR(ns_.BlockStored(computer, block, size, &d));
  Queue(d);
  FlushDeletes();
  return Status::Ok();
}

Status NameService::OnBadReplica(const std::string& computer, BlockId block,
                                 const std::string& reason) {
  return ReportBadReplica(block, computer, reason);
}

void NameService::OnReplicationDone(const std::string& computer, BlockId block, bool ok,
                                    const std::string& message) {
  auto it = in_flight_.find(block);
  if (it != in_flight_.end()) {
    auto& copies = it->second;
    copies.erase(std::remove_if(copies.begin(), copies.end(),
                                [&](const Copy& c) { return c.target == computer; }),
                 copies.end());
    if (copies.empty()) in_flight_.erase(it);
  }
  if (ok) {
    spdlog::info("block {} copied to {}", block, computer);
  } else {
    spdlog::warn("copying block {} to {} failed: {}", block, computer, message);
  }
}

// ---- membership ----------------------------------------------------------------

void NameService::OnComputerUp(const std::string& computer, Timestamp /*now*/) {
  live_.insert(computer);
  reported_.erase(computer);  // its replicas count once it reports them
  down_since_.erase(computer);
  if (live_.size() == config_.computers.size()) all_registered_ = true;
}

void NameService::OnComputerDown(const std::string& computer, Timestamp now) {
  live_.erase(computer);
  reported_.erase(computer);
  down_since_[computer] = now;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    auto& copies = it->second;
    copies.erase(
        std::remove_if(copies.begin(), copies.end(),
                       [&](const Copy& c) { return c.target == computer || c.source == computer; }),
        copies.end());
    it = copies.empty() ? in_flight_.erase(it) : std::next(it);
  }
}

void NameService::SetDraining(const std::string& computer, bool draining) {
  if (draining == IsDraining(computer)) return;
  if (draining) {
    draining_.insert(computer);
  } else {
    draining_.erase(computer);
  }
  spdlog::info("DFS: {} {}", computer,
               draining ? "is draining: its blocks are copied elsewhere" : "is no longer draining");
}

DrainProgress NameService::Drain(const std::string& computer) const {
  DrainProgress p;
  for (const ReplicatedBlock& b : ns_.CommittedBlocks()) {
    if (std::find(b.replicas.begin(), b.replicas.end(), computer) == b.replicas.end()) continue;
    ++p.blocks;
    int staying = 0;
    for (const std::string& r : b.replicas) staying += Staying(r) ? 1 : 0;
    p.sole_blocks += staying == 0 ? 1 : 0;
    p.short_blocks += staying < b.replication ? 1 : 0;
  }
  return p;
}

// ---- periodic work -------------------------------------------------------------

void NameService::Queue(const Deletions& deletions) {
  for (const auto& [computer, ids] : deletions)
    pending_deletes_[computer].insert(ids.begin(), ids.end());
}

void NameService::FlushDeletes() {
  for (auto it = pending_deletes_.begin(); it != pending_deletes_.end();) {
    if (it->second.empty()) {
      it = pending_deletes_.erase(it);
      continue;
    }
    if (live_.count(it->first) &&
        sender_.DeleteBlocks(it->first,
                             std::vector<BlockId>(it->second.begin(), it->second.end()))) {
      it = pending_deletes_.erase(it);
      continue;
    }
    ++it;
  }
}

void NameService::StartCopies(Timestamp now) {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    auto& copies = it->second;
    copies.erase(std::remove_if(copies.begin(), copies.end(),
                                [&](const Copy& c) {
                                  if (now < c.deadline) return false;
                                  spdlog::warn("copy of block {} to {} timed out", it->first,
                                               c.target);
                                  return true;
                                }),
                 copies.end());
    it = copies.empty() ? in_flight_.erase(it) : std::next(it);
  }
  ReplicationState state;
  state.live = Computers(false);
  for (const ComputerConfig& c : config_.computers)
    if (Counted(c.name, now)) state.counted.insert(c.name);
  for (const auto& [block, copies] : in_flight_) {
    for (const Copy& c : copies) {
      state.in_flight[block].insert(c.target);
      state.busy[c.source]++;
      state.busy[c.target]++;
    }
  }
  state.avoid = avoid_;
  for (const std::string& c : draining_)
    if (live_.count(c)) state.draining.insert(c);
  state.max_copies_per_computer = options_.max_copies_per_computer;
  std::vector<CopyTask> tasks = PlanCopies(ns_.CommittedBlocks(), state, rng_);
  for (const CopyTask& t : tasks) {
    std::vector<Endpoint> sources = {EndpointOf(t.source)};
    for (const std::string& r : ns_.ReplicasOf(t.block))
      if (r != t.source && live_.count(r)) sources.push_back(EndpointOf(r));
    if (!sender_.Replicate(t.target, t.block, t.size, sources)) continue;
    spdlog::info("copying block {} ({} live replica(s)) from {} to {}", t.block, t.live_replicas,
                 t.source, t.target);
    Duration budget = std::max<Duration>(options_.copy_timeout,
                                         Duration(static_cast<int64_t>(t.size / 20)));  // 20 B/us
    in_flight_[t.block].push_back({t.source, t.target, now + budget});
  }
}

void NameService::TrimSurplus() {
  std::vector<ReplicatedBlock> blocks = ns_.CommittedBlocks();
  std::vector<ReplicatedBlock> settled;
  for (ReplicatedBlock& b : blocks)
    if (!in_flight_.count(b.id)) settled.push_back(std::move(b));
  for (const TrimTask& t : PlanTrims(settled, Computers(true), draining_)) {
    Status s = ns_.DropReplica(t.block, t.computer);
    if (!s.ok()) {
      spdlog::error("cannot drop surplus replica of block {}: {}", t.block, s.ToString());
      continue;
    }
    spdlog::info("dropping surplus replica of block {} on {}", t.block, t.computer);
    pending_deletes_[t.computer].insert(t.block);
  }
}

void NameService::Tick(Timestamp now) {
  Deletions d;
  Status s = ns_.CollectExpired(now, &d);
  if (!s.ok()) spdlog::error("collecting abandoned DFS writes: {}", s.ToString());
  Queue(d);
  StartCopies(now);
  TrimSurplus();
  FlushDeletes();
}

int NameService::UnderReplicatedBlocks() const {
  size_t total = 0;
  UnderReplicatedList(0, &total);
  return static_cast<int>(total);
}

size_t NameService::copies_in_flight() const {
  size_t n = 0;
  for (const auto& [b, copies] : in_flight_) n += copies.size();
  return n;
}

}  // namespace copse::dfs

#include "dfs/namespace.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "dfs/paths.h"
#include "proto/dfs.capnp.h"

namespace copse::dfs {
namespace {

constexpr char kFilePrefix[] = "dfs/f/";
constexpr char kBlockPrefix[] = "dfs/b/";
constexpr char kNextKey[] = "dfs/next";
constexpr int kMaxPartitions = 1'000'000;
constexpr int kMaxReplication = 16;

std::string FileKey(FileId id) { return fmt::format("{}{:016x}", kFilePrefix, id); }
std::string BlockKey(BlockId id) { return fmt::format("{}{:016x}", kBlockPrefix, id); }

std::string ToBytes(capnp::MallocMessageBuilder& msg) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(msg);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

// Runs `fn` on the decoded root of `bytes`; false when they are not a valid message.
template <typename Root, typename Fn>
bool Decode(const std::string& bytes, Fn&& fn) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0) return false;
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), bytes.size());
  try {
    capnp::FlatArrayMessageReader reader(words);
    fn(reader.getRoot<Root>());
    return true;
  } catch (const kj::Exception&) {
    return false;
  }
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Plural(size_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

Namespace::Namespace(const NamespaceOptions& options, MetaStore& store)
    : options_(options), store_(store) {}

// ---- persistence ----------------------------------------------------------

void Namespace::PutFile(Change* c, const File& f) const {
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<proto::FileRecord>();
  r.setFileId(f.id);
  r.setPath(f.path);
  r.setVisible(f.visible);
  r.setReplication(static_cast<uint32_t>(f.replication));
  r.setPlacement(f.placement);
  r.setWriter(f.writer);
  r.setScratchJob(f.scratch_job);
  r.setOutputJob(f.output_job);
  r.setTask(f.run.task);
  r.setAttempt(f.run.attempt);
  auto parts = r.initPartitions(static_cast<unsigned>(f.partitions.size()));
  for (size_t i = 0; i < f.partitions.size(); ++i) {
    const Partition& p = f.partitions[i];
    auto out = parts[static_cast<unsigned>(i)];
    out.setCommitted(p.committed);
    auto blocks = out.initBlocks(static_cast<unsigned>(p.blocks.size()));
    for (size_t j = 0; j < p.blocks.size(); ++j) blocks.set(static_cast<unsigned>(j), p.blocks[j]);
    auto targets = out.initTargets(static_cast<unsigned>(p.targets.size()));
    for (size_t j = 0; j < p.targets.size(); ++j)
      targets.set(static_cast<unsigned>(j), p.targets[j]);
  }
  c->writes.push_back({FileKey(f.id), ToBytes(msg)});
  c->files[f.id] = f;
}

void Namespace::PutBlock(Change* c, const Block& b) const {
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<proto::BlockRecord>();
  r.setBlockId(b.id);
  r.setFileId(b.file);
  r.setPartition(static_cast<uint32_t>(b.partition));
  r.setSize(b.size);
  r.setCommitted(b.committed);
  r.setTask(b.run.task);
  r.setAttempt(b.run.attempt);
  auto reps = r.initReplicas(static_cast<unsigned>(b.replicas.size()));
  for (size_t i = 0; i < b.replicas.size(); ++i) reps.set(static_cast<unsigned>(i), b.replicas[i]);
  c->writes.push_back({BlockKey(b.id), ToBytes(msg)});
  c->blocks[b.id] = b;
}

void Namespace::RemoveBlock(Change* c, const Block& b, Deletions* deletions) const {
  for (const std::string& r : b.replicas) (*deletions)[r].insert(b.id);
  c->writes.push_back({BlockKey(b.id), std::nullopt});
  c->removed_blocks.insert(b.id);
  c->blocks.erase(b.id);
}

void Namespace::RemoveFile(Change* c, const File& f, Deletions* deletions) const {
  for (const Partition& p : f.partitions) {
    for (BlockId id : p.blocks)
      if (auto it = blocks_.find(id); it != blocks_.end()) RemoveBlock(c, it->second, deletions);
  }
  // Blocks allocated but never committed.
  for (const auto& [id, b] : blocks_)
    if (b.file == f.id && !b.committed) RemoveBlock(c, b, deletions);
  c->writes.push_back({FileKey(f.id), std::nullopt});
  c->removed_files.insert(f.id);
  c->files.erase(f.id);
}

bool Namespace::OnlyScratch(const Change& c) const {
  auto scratch_file = [&](FileId id) {
    auto in_change = c.files.find(id);
    if (in_change != c.files.end()) return !in_change->second.scratch_job.empty();
    auto it = files_.find(id);
    return it != files_.end() && !it->second.scratch_job.empty();
  };
  for (const auto& [id, f] : c.files) {
    if (f.scratch_job.empty()) return false;
  }
  for (FileId id : c.removed_files) {
    if (!scratch_file(id)) return false;
  }
  for (const auto& [id, b] : c.blocks) {
    if (!scratch_file(b.file)) return false;
  }
  for (BlockId id : c.removed_blocks) {
    auto it = blocks_.find(id);
    if (it == blocks_.end() || !scratch_file(it->second.file)) return false;
  }
  return true;
}

Status Namespace::Commit(Change c) {
  const uint64_t next_file = c.next_file.value_or(next_file_);
  const uint64_t next_block = c.next_block.value_or(next_block_);
  uint64_t stored_file = stored_file_, stored_block = stored_block_;
  if (next_file > stored_file_ || next_block > stored_block_) {
    stored_file = std::max(stored_file_, next_file + kIdReserve);
    stored_block = std::max(stored_block_, next_block + kIdReserve);
    c.writes.push_back({kNextKey, fmt::format("{} {}", stored_file, stored_block)});
  }
  if (c.writes.empty()) return Status::Ok();
  // Scratch files are the engine's to regenerate (their blocks are not
  // synced on the workers either): their changes go through the log
  // unsynced, unless the id counters move.
  const bool sync = stored_file != stored_file_ || stored_block != stored_block_ || !OnlyScratch(c);
  COPSE_RETURN_IF_ERROR(store_.Apply(c.writes, sync));
  stored_file_ = stored_file;
  stored_block_ = stored_block;
  for (FileId id : c.removed_files) {
    auto it = files_.find(id);
    if (it == files_.end()) continue;
    by_path_.erase(it->second.path);
    files_.erase(it);
  }
  for (auto& [id, f] : c.files) {
    by_path_[f.path] = id;
    files_[id] = std::move(f);
  }
  for (BlockId id : c.removed_blocks) blocks_.erase(id);
  for (auto& [id, b] : c.blocks) blocks_[id] = std::move(b);
  if (c.next_file) next_file_ = *c.next_file;
  if (c.next_block) next_block_ = *c.next_block;
  return Status::Ok();
}

Status Namespace::Load(Timestamp now) {
  files_.clear();
  by_path_.clear();
  blocks_.clear();
  COPSE_ASSIGN_OR_RETURN(MetaStore::Entries next, store_.Scan(kNextKey));
  for (const auto& [k, v] : next) {
    if (k != kNextKey) continue;
    unsigned long long f = 0, b = 0;
    if (std::sscanf(v.c_str(), "%llu %llu", &f, &b) != 2)
      return Corruption(fmt::format("stored DFS id counters '{}' are damaged", v));
    next_file_ = stored_file_ = f;
    next_block_ = stored_block_ = b;
  }
  COPSE_ASSIGN_OR_RETURN(MetaStore::Entries files, store_.Scan(kFilePrefix));
  for (const auto& [k, v] : files) {
    File f;
    bool ok = Decode<proto::FileRecord>(v, [&](proto::FileRecord::Reader r) {
      f.id = r.getFileId();
      f.path = r.getPath();
      f.visible = r.getVisible();
      f.replication = static_cast<int>(r.getReplication());
      f.placement = r.getPlacement();
      f.writer = r.getWriter();
      f.scratch_job = r.getScratchJob();
      f.output_job = r.getOutputJob();
      f.run = {r.getTask(), r.getAttempt()};
      for (auto p : r.getPartitions()) {
        Partition part;
        part.committed = p.getCommitted();
        for (uint64_t id : p.getBlocks()) part.blocks.push_back(id);
        for (auto t : p.getTargets()) part.targets.emplace_back(t);
        f.partitions.push_back(std::move(part));
      }
    });
    if (!ok) return Corruption(fmt::format("stored DFS file record {} is damaged", k));
    f.last_activity = now;
    by_path_[f.path] = f.id;
    files_[f.id] = std::move(f);
  }
  COPSE_ASSIGN_OR_RETURN(MetaStore::Entries blocks, store_.Scan(kBlockPrefix));
  for (const auto& [k, v] : blocks) {
    Block b;
    bool ok = Decode<proto::BlockRecord>(v, [&](proto::BlockRecord::Reader r) {
      b.id = r.getBlockId();
      b.file = r.getFileId();
      b.partition = static_cast<int>(r.getPartition());
      b.size = r.getSize();
      b.committed = r.getCommitted();
      b.run = {r.getTask(), r.getAttempt()};
      for (auto rep : r.getReplicas()) b.replicas.emplace_back(rep);
    });
    if (!ok) return Corruption(fmt::format("stored DFS block record {} is damaged", k));
    blocks_[b.id] = std::move(b);
  }
  return Status::Ok();
}

// ---- writing files ----------------------------------------------------------

Status Namespace::CheckNewPath(const CreateRequest& req) const {
  if (auto it = by_path_.find(req.path); it != by_path_.end()) {
    const File& f = files_.at(it->second);
    if (f.visible) {
      return AlreadyExists(
          fmt::format("file {} exists already (remove it first with `copse fs rm`)", req.path));
    }
    return AlreadyExists(fmt::format("file {} is being written by another writer", req.path));
  }
  for (size_t slash = req.path.find('/', 1); slash != std::string::npos;
       slash = req.path.find('/', slash + 1)) {
    std::string parent = req.path.substr(0, slash);
    if (by_path_.count(parent)) {
      return FailedPrecondition(
          fmt::format("cannot create {}: {} is a file, not a directory", req.path, parent));
    }
  }
  std::string as_dir = req.path + "/";
  auto below = by_path_.lower_bound(as_dir);
  if (below != by_path_.end() && below->first.starts_with(as_dir))
    return FailedPrecondition(fmt::format("cannot create {}: it is a directory", req.path));
  return Status::Ok();
}

std::vector<std::vector<std::string>> Namespace::ReplicaSets(const File& f) const {
  std::vector<std::vector<std::string>> out;
  for (const Partition& p : f.partitions) {
    if (p.committed && !p.blocks.empty()) {
      auto it = blocks_.find(p.blocks.front());
      out.push_back(it != blocks_.end() ? it->second.replicas : p.targets);
    } else {
      out.push_back(p.targets);
    }
  }
  return out;
}

Result<CreateResult> Namespace::Create(const CreateRequest& req,
                                       const std::vector<PlacementComputer>& live,
                                       std::mt19937_64& rng, Timestamp now) {
  COPSE_RETURN_IF_ERROR(ValidatePath(req.path));
  if (req.path == "/") return InvalidArgument("'/' is the root directory, not a file name");
  if (req.partitions < 1 || req.partitions > kMaxPartitions) {
    return InvalidArgument(
        fmt::format("a file has 1 to {} partitions, got {}", kMaxPartitions, req.partitions));
  }
  int replication = req.replication ? req.replication : options_.default_replication;
  if (replication < 1 || replication > kMaxReplication) {
    return InvalidArgument(
        fmt::format("replication must be from 1 to {}, got {}", kMaxReplication, replication));
  }
  bool scratch = !req.scratch_job.empty();
  PlacementRequest place{req.placement, req.writer, replication, req.partitions, {}};
  if (!req.output_job.empty()) {
    if (scratch) {
      return InvalidArgument(
          fmt::format("{} cannot be both a scratch file of job {} and an output of job {}",
                      req.path, req.scratch_job, req.output_job));
    }
    COPSE_RETURN_IF_ERROR(ValidateJobName(req.output_job));
  }
  if (scratch) {
    COPSE_RETURN_IF_ERROR(ValidateJobName(req.scratch_job));
    std::string root = ScratchPath(req.scratch_job, "");
    if (!req.path.starts_with(root) || req.path.size() == root.size())
      return InvalidArgument(
          fmt::format("a scratch file of job {} must be under {}", req.scratch_job, root));
    bool writer_live = std::any_of(
        live.begin(), live.end(), [&](const PlacementComputer& c) { return c.name == req.writer; });
    if (!writer_live) {
      return FailedPrecondition(fmt::format(
          "scratch file {} is kept on its writer's computer, but the writer {}", req.path,
          req.writer.empty() ? "named none (use --computer)" : req.writer + " is not live"));
    }
    place.replication = replication = 1;
    place.mode = PlacementMode{};
  } else if (req.path == kScratchRoot || req.path.starts_with(std::string(kScratchRoot) + "/")) {
    return InvalidArgument(fmt::format("{} is reserved for jobs' scratch files", kScratchRoot));
  }
  COPSE_RETURN_IF_ERROR(CheckNewPath(req));
  if (req.placement.kind == PlacementMode::Kind::kColocate) {
    auto it = by_path_.find(req.placement.colocate_path);
    if (it == by_path_.end() || !files_.at(it->second).visible) {
      return NotFound(fmt::format("placement '{}': no such file {}", req.placement.ToString(),
                                  req.placement.colocate_path));
    }
    place.colocate_sets = ReplicaSets(files_.at(it->second));
  }
  COPSE_ASSIGN_OR_RETURN(auto sets, PlaceFile(live, place, rng));
  File f;
  f.id = next_file_;
  f.path = req.path;
  f.visible = scratch;  // a scratch file's partitions become readable one by one
  f.replication = replication;
  f.placement = place.mode.ToString();
  f.writer = req.writer;
  f.scratch_job = req.scratch_job;
  f.output_job = req.output_job;
  f.run = req.run;
  f.last_activity = now;
  for (auto& set : sets) f.partitions.push_back(Partition{false, {}, std::move(set)});
  Change c;
  PutFile(&c, f);
  c.next_file = next_file_ + 1;
  COPSE_RETURN_IF_ERROR(Commit(std::move(c)));
  return CreateResult{f.id, replication};
}

Result<const Namespace::File*> Namespace::PendingFile(FileId id, int partition) const {
  auto it = files_.find(id);
  if (it == files_.end() || (it->second.visible && it->second.scratch_job.empty())) {
    return NotFound(fmt::format(
        "file {} is not being written (it was committed, abandoned, deleted or collected after "
        "the grace period)",
        id));
  }
  const File& f = it->second;
  if (partition < 0 || partition >= static_cast<int>(f.partitions.size())) {
    return InvalidArgument(fmt::format("{} has {}, not partition {}", f.path,
                                       Plural(f.partitions.size(), "partition"), partition));
  }
  if (f.partitions[static_cast<size_t>(partition)].committed) {
    if (!f.output_job.empty()) {
      return AlreadyExists(
          fmt::format("partition {} of {} was committed by another run", partition, f.path));
    }
    return AlreadyExists(fmt::format("partition {} of {} is committed already", partition, f.path));
  }
  return &f;
}

Result<Allocation> Namespace::AllocateBlock(const BlockRequest& req,
                                            const std::vector<PlacementComputer>& live,
                                            std::mt19937_64& rng, Timestamp now) {
  const int partition = req.partition;
  const std::set<std::string>& exclude = req.exclude;
  COPSE_ASSIGN_OR_RETURN(const File* fp, PendingFile(req.file, partition));
  File f = *fp;
  Partition& p = f.partitions[static_cast<size_t>(partition)];
  std::vector<PlacementComputer> candidates;
  auto mode = ParsePlacementMode(f.placement);
  for (const PlacementComputer& c : live) {
    if (mode.ok() && mode->kind == PlacementMode::Kind::kConfine && c.rack != mode->confine_rack)
      continue;
    candidates.push_back(c);
  }
  auto usable = [&](const std::string& name) {
    return !exclude.count(name) &&
           std::any_of(candidates.begin(), candidates.end(),
                       [&](const PlacementComputer& c) { return c.name == name; });
  };
  std::vector<std::string> targets;
  for (const std::string& t : p.targets)
    if (usable(t)) targets.push_back(t);
  // An output file's partitions are written by vertex runs anywhere in the
  // cluster: the writer's computer holds the first replica, as for any file
  // placed by the writer rule.
  bool writer_first = !f.output_job.empty() && mode.ok() &&
                      mode->kind == PlacementMode::Kind::kWriter && usable(req.writer);
  if (writer_first && (targets.empty() || targets.front() != req.writer)) targets = {req.writer};
  if (!f.scratch_job.empty()) {
    if (targets.empty()) {
      return Unavailable(fmt::format("scratch file {} is kept on computer {}, which is {}", f.path,
                                     f.writer, exclude.count(f.writer) ? "failing" : "not live"));
    }
  } else {
    targets = CompleteReplicaSet(candidates, std::move(targets), f.replication, exclude, rng);
  }
  if (targets.empty()) {
    return Unavailable(fmt::format(
        "no live computer to write partition {} of {} to{}", partition, f.path,
        exclude.empty() ? "" : fmt::format(" ({} failed)", Plural(exclude.size(), "computer"))));
  }
  p.targets = targets;
  f.last_activity = now;
  Block b;
  b.id = next_block_;
  b.file = f.id;
  b.partition = partition;
  b.run = req.run;
  Change c;
  PutFile(&c, f);
  PutBlock(&c, b);
  c.next_block = next_block_ + 1;
  COPSE_RETURN_IF_ERROR(Commit(std::move(c)));
  return Allocation{b.id, std::move(targets)};
}

bool Namespace::File::complete() const {
  return std::all_of(partitions.begin(), partitions.end(),
                     [](const Partition& p) { return p.committed; });
}

Result<bool> Namespace::CommitPartition(FileId file, int partition,
                                        const std::vector<CommitBlock>& blocks, Timestamp now,
                                        Deletions* deletions) {
  return CommitPartitions(file, {PartitionCommit{partition, blocks}}, now, deletions);
}

// Records `commit`'s blocks as committed in `c`.
Status Namespace::CommitBlocks(const File& f, const PartitionCommit& commit, Change* c) const {
  std::set<BlockId> named;
  for (const CommitBlock& cb : commit.blocks) {
    auto it = blocks_.find(cb.id);
    if (it == blocks_.end() || it->second.file != f.id ||
        it->second.partition != commit.partition || it->second.committed) {
      return InvalidArgument(fmt::format(
          "block {} is not an uncommitted block of partition {} of {} (collected after the grace "
          "period?)",
          cb.id, commit.partition, f.path));
    }
    if (!named.insert(cb.id).second)
      return InvalidArgument(fmt::format("block {} is named twice", cb.id));
    if (cb.size == 0 || cb.size > options_.block_size) {
      return InvalidArgument(fmt::format("block {} has {} bytes; a block holds 1 to {}", cb.id,
                                         cb.size, options_.block_size));
    }
    if (cb.replicas.empty())
      return InvalidArgument(fmt::format("block {} has no replica to commit", cb.id));
    Block b = it->second;
    b.committed = true;
    b.size = cb.size;
    for (const std::string& r : cb.replicas)
      if (!Contains(b.replicas, r)) b.replicas.push_back(r);
    PutBlock(c, b);
  }
  return Status::Ok();
}

Result<bool> Namespace::CommitPartitions(FileId file, const std::vector<PartitionCommit>& commits,
                                         Timestamp now, Deletions* deletions) {
  if (commits.empty())
    return InvalidArgument(fmt::format("no partition of file {} to commit", file));
  std::map<int, const PartitionCommit*> by_partition;
  for (const PartitionCommit& pc : commits) {
    COPSE_RETURN_IF_ERROR(PendingFile(file, pc.partition).status());
    if (!by_partition.emplace(pc.partition, &pc).second)
      return InvalidArgument(fmt::format("partition {} is committed twice", pc.partition));
  }
  File f = files_.at(file);
  Change c;
  for (const PartitionCommit& pc : commits) {
    COPSE_RETURN_IF_ERROR(CommitBlocks(f, pc, &c));
    Partition& p = f.partitions[static_cast<size_t>(pc.partition)];
    p.committed = true;
    p.blocks.clear();
    for (const CommitBlock& cb : pc.blocks) p.blocks.push_back(cb.id);
  }
  // Blocks allocated for these partitions and not named (a rewritten block,
  // or another run's copy of the partition) are dropped.
  for (const auto& [id, b] : blocks_) {
    if (b.file != file || b.committed || !by_partition.count(b.partition) || c.blocks.count(id))
      continue;
    RemoveBlock(&c, b, deletions);
  }
  f.last_activity = now;
  // A job's output file becomes visible when the job's outputs are published.
  if (f.output_job.empty() && f.complete()) f.visible = true;
  PutFile(&c, f);
  COPSE_RETURN_IF_ERROR(Commit(std::move(c)));
  return f.visible;
}

Status Namespace::Abandon(FileId file, Deletions* deletions) {
  auto it = files_.find(file);
  // A scratch file is visible from the start: it is written until every
  // partition is committed.
  if (it == files_.end() ||
      (it->second.scratch_job.empty() ? it->second.visible : it->second.complete()))
    return NotFound(fmt::format("file {} is not being written", file));
  if (!it->second.output_job.empty()) {
    return FailedPrecondition(fmt::format(
        "{} is an output of job {}: it is dropped with the job's outputs, not by a writer",
        it->second.path, it->second.output_job));
  }
  Change c;
  RemoveFile(&c, it->second, deletions);
  return Commit(std::move(c));
}

// ---- reading the namespace ----------------------------------------------------

FileView Namespace::View(const File& f, int only_partition) const {
  FileView v;
  v.id = f.id;
  v.path = f.path;
  v.visible = f.visible;
  v.replication = f.replication;
  v.placement = f.placement;
  v.writer = f.writer;
  v.scratch_job = f.scratch_job;
  v.output_job = f.output_job;
  v.run = f.run;
  for (size_t i = 0; i < f.partitions.size(); ++i) {
    const Partition& p = f.partitions[i];
    const bool listed = only_partition < 0 || static_cast<size_t>(only_partition) == i;
    PartitionView pv;
    pv.committed = p.committed;
    if (p.committed) {
      for (BlockId id : p.blocks) {
        auto it = blocks_.find(id);
        if (it == blocks_.end()) continue;
        if (listed) pv.blocks.push_back({id, it->second.size, it->second.replicas});
        pv.size += it->second.size;
      }
    }
    v.size += pv.size;
    v.partitions.push_back(std::move(pv));
  }
  return v;
}

Result<FileView> Namespace::Stat(const std::string& path, int only_partition) const {
  COPSE_RETURN_IF_ERROR(ValidatePath(path));
  auto it = by_path_.find(path);
  if (it == by_path_.end() || !files_.at(it->second).visible) {
    std::string as_dir = path == "/" ? "/" : path + "/";
    auto below = by_path_.lower_bound(as_dir);
    if (below != by_path_.end() && below->first.starts_with(as_dir))
      return InvalidArgument(fmt::format("{} is a directory, not a file", path));
    return NotFound(fmt::format("no such file: {}", path));
  }
  return View(files_.at(it->second), only_partition);
}

Result<std::vector<ListEntry>> Namespace::List(const std::string& path) const {
  COPSE_RETURN_IF_ERROR(ValidatePath(path));
  std::vector<ListEntry> out;
  if (auto it = by_path_.find(path); it != by_path_.end() && files_.at(it->second).visible) {
    FileView v = View(files_.at(it->second));
    out.push_back({v.path, false, v.size, static_cast<int>(v.partitions.size()), v.replication,
                   v.scratch_job});
    return out;
  }
  std::string prefix = path == "/" ? "/" : path + "/";
  std::map<std::string, ListEntry> dirs;
  for (auto it = by_path_.lower_bound(prefix);
       it != by_path_.end() && it->first.starts_with(prefix); ++it) {
    const File& f = files_.at(it->second);
    if (!f.visible) continue;
    std::string rest = it->first.substr(prefix.size());
    size_t slash = rest.find('/');
    if (slash != std::string::npos) {
      ListEntry& d = dirs[prefix + rest.substr(0, slash)];
      d.path = prefix + rest.substr(0, slash);
      d.is_dir = true;
      d.size += View(f).size;
      continue;
    }
    FileView v = View(f);
    out.push_back({v.path, false, v.size, static_cast<int>(v.partitions.size()), v.replication,
                   v.scratch_job});
  }
  for (auto& [name, d] : dirs) out.push_back(std::move(d));
  std::sort(out.begin(), out.end(),
            [](const ListEntry& a, const ListEntry& b) { return a.path < b.path; });
  if (out.empty() && path != "/")
    return NotFound(fmt::format("no such file or directory: {}", path));
  return out;
}

// ---- removing files -----------------------------------------------------------

Status Namespace::Delete(const std::string& path, Deletions* deletions) {
  COPSE_RETURN_IF_ERROR(ValidatePath(path));
  auto it = by_path_.find(path);
  if (it == by_path_.end() || !files_.at(it->second).visible) {
    std::string as_dir = path + "/";
    auto below = by_path_.lower_bound(as_dir);
    if (below != by_path_.end() && below->first.starts_with(as_dir))
      return InvalidArgument(fmt::format("{} is a directory; remove its files one by one", path));
    return NotFound(fmt::format("no such file: {}", path));
  }
  Change c;
  RemoveFile(&c, files_.at(it->second), deletions);
  return Commit(std::move(c));
}

Status Namespace::CollectExpired(Timestamp now, Deletions* deletions) {
  Change c;
  for (auto& [id, f] : files_) {
    if (now - f.last_activity <= options_.uncommitted_grace || !f.output_job.empty()) continue;
    if (!f.visible) {
      RemoveFile(&c, f, deletions);
      continue;
    }
    if (f.scratch_job.empty()) continue;
    for (const auto& [bid, b] : blocks_)
      if (b.file == id && !b.committed) RemoveBlock(&c, b, deletions);
  }
  return Commit(std::move(c));
}

// ---- replicas -----------------------------------------------------------------

Status Namespace::ReportBlocks(const std::string& computer,
                               const std::vector<std::pair<BlockId, uint64_t>>& reported,
                               Deletions* deletions) {
  Change c;
  std::set<BlockId> held;
  for (const auto& [id, size] : reported) {
    held.insert(id);
    auto it = blocks_.find(id);
    if (it == blocks_.end()) {
      (*deletions)[computer].insert(id);  // nobody references it
      continue;
    }
    Block b = it->second;
    bool has = Contains(b.replicas, computer);
    if (b.committed && b.size != size) {
      (*deletions)[computer].insert(id);  // a copy that disagrees with the namespace
      if (has) {
        b.replicas.erase(std::find(b.replicas.begin(), b.replicas.end(), computer));
        PutBlock(&c, b);
      }
      continue;
    }
    if (!has) {
      b.replicas.push_back(computer);
      PutBlock(&c, b);
    }
  }
  for (const auto& [id, b] : blocks_) {
    if (held.count(id) || !Contains(b.replicas, computer)) continue;
    Block copy = b;
    copy.replicas.erase(std::find(copy.replicas.begin(), copy.replicas.end(), computer));
    PutBlock(&c, copy);
  }
  return Commit(std::move(c));
}

Status Namespace::BlockStored(const std::string& computer, BlockId id, uint64_t size,
                              Deletions* deletions) {
  auto it = blocks_.find(id);
  if (it == blocks_.end() || (it->second.committed && it->second.size != size)) {
    (*deletions)[computer].insert(id);
    return Status::Ok();
  }
  if (Contains(it->second.replicas, computer)) return Status::Ok();
  Block b = it->second;
  b.replicas.push_back(computer);
  Change c;
  PutBlock(&c, b);
  return Commit(std::move(c));
}

Status Namespace::DropReplica(BlockId id, const std::string& computer) {
  auto it = blocks_.find(id);
  if (it == blocks_.end() || !Contains(it->second.replicas, computer)) return Status::Ok();
  Block b = it->second;
  b.replicas.erase(std::find(b.replicas.begin(), b.replicas.end(), computer));
  Change c;
  PutBlock(&c, b);
  return Commit(std::move(c));
}

std::vector<ReplicatedBlock> Namespace::CommittedBlocks() const {
  // By file, so that a job's many scratch blocks cost one test per file: the
  // master runs this several times a second.
  std::vector<ReplicatedBlock> out;
  for (const auto& [file_id, f] : files_) {
    if (!f.scratch_job.empty()) continue;
    std::string confine_rack;
    auto mode = ParsePlacementMode(f.placement);
    if (mode.ok() && mode->kind == PlacementMode::Kind::kConfine) confine_rack = mode->confine_rack;
    for (const Partition& p : f.partitions) {
      for (BlockId id : p.blocks) {
        auto b = blocks_.find(id);
        if (b == blocks_.end() || !b->second.committed || b->second.file != file_id) continue;
        out.push_back({id, b->second.size, f.replication, b->second.replicas, confine_rack, false});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ReplicatedBlock& a, const ReplicatedBlock& b) { return a.id < b.id; });
  return out;
}

std::vector<FileView> Namespace::Page(const std::string& prefix, const std::string& after,
                                      size_t limit, bool scratch, bool* more) const {
  std::vector<FileView> out;
  *more = false;
  auto it = after.empty() ? by_path_.lower_bound(prefix) : by_path_.upper_bound(after);
  for (; it != by_path_.end() && it->first.starts_with(prefix); ++it) {
    const File& f = files_.at(it->second);
    bool listed = f.visible || (scratch && !f.scratch_job.empty() && f.complete());
    if (!listed) continue;
    if (out.size() == limit) {
      *more = true;
      break;
    }
    out.push_back(View(f));
  }
  return out;
}

std::map<std::string, Namespace::Holding> Namespace::Holdings() const {
  std::map<std::string, Holding> out;
  for (const auto& [id, b] : blocks_) {
    if (!b.committed) continue;
    for (const std::string& r : b.replicas) {
      Holding& h = out[r];
      h.blocks += 1;
      h.bytes += static_cast<int64_t>(b.size);
    }
  }
  return out;
}

std::vector<Namespace::UnderReplicatedBlock> Namespace::UnderReplicated(
    const std::function<bool(const std::string&)>& live, size_t limit, size_t* total) const {
  std::vector<UnderReplicatedBlock> out;
  *total = 0;
  for (const auto& [path, file_id] : by_path_) {
    const File& f = files_.at(file_id);
    if (!f.scratch_job.empty()) continue;
    for (size_t p = 0; p < f.partitions.size(); ++p) {
      for (BlockId id : f.partitions[p].blocks) {
        auto b = blocks_.find(id);
        if (b == blocks_.end() || !b->second.committed) continue;
        UnderReplicatedBlock u{id, path, static_cast<int>(p), f.replication, {}};
        for (const std::string& r : b->second.replicas) {
          if (live(r)) u.live.push_back(r);
        }
        if (static_cast<int>(u.live.size()) >= f.replication) continue;
        ++*total;
        if (out.size() < limit) out.push_back(std::move(u));
      }
    }
  }
  return out;
}

std::vector<std::string> Namespace::ReplicasOf(BlockId id) const {
  auto it = blocks_.find(id);
  return it == blocks_.end() ? std::vector<std::string>{} : it->second.replicas;
}

}  // namespace copse::dfs

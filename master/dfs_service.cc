#include "master/dfs_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/net/message.h"
#include "dfs/paths.h"
#include "dfs/protocol.h"
#include "proto/dfs.capnp.h"

namespace copse::master {
namespace {

using proto::DfsMessage;

Result<dfs::PlacementMode> ReadPlacement(proto::Placement::Reader p) {
  dfs::PlacementMode m;
  switch (p.which()) {
    case proto::Placement::WRITER:
      break;
    case proto::Placement::RANDOM:
      m.kind = dfs::PlacementMode::Kind::kRandom;
      break;
    case proto::Placement::COLOCATE:
      m.kind = dfs::PlacementMode::Kind::kColocate;
      m.colocate_path = p.getColocate();
      break;
    case proto::Placement::CONFINE:
      m.kind = dfs::PlacementMode::Kind::kConfine;
      m.confine_count = static_cast<int>(p.getConfine().getCount());
      m.confine_rack = p.getConfine().getRack();
      if (m.confine_count < 1) return InvalidArgument("placement 'confine N RACK' needs N >= 1");
      break;
    default:
      return InvalidArgument("unknown placement mode");
  }
  return m;
}

std::vector<dfs::CommitBlock> ReadCommitBlocks(capnp::List<proto::CommittedBlock>::Reader list) {
  std::vector<dfs::CommitBlock> blocks;
  for (auto b : list) {
    dfs::CommitBlock cb{b.getBlockId(), b.getSize(), {}};
    for (auto r : b.getReplicas()) cb.replicas.push_back(r);
    blocks.push_back(std::move(cb));
  }
  return blocks;
}

}  // namespace

DfsService::DfsService(asio::io_context& io, const ClusterConfig& config, const Clock& clock,
                       dfs::MetaStore& store, const ClusterManager& cluster)
    : config_(config),
      clock_(clock),
      cluster_(cluster),
      names_(config, store, *this, dfs::NameServiceOptions{}),
      timer_(io) {}

Status DfsService::Load() { return names_.Load(clock_.Now()); }

void DfsService::Start() { ArmTimer(); }

void DfsService::Stop() {
  stopped_ = true;
  timer_.cancel();
}

void DfsService::ArmTimer() {
  if (stopped_) return;
  timer_.expires_after(std::chrono::milliseconds(200));
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    Tick();
    ArmTimer();
  });
}

void DfsService::OnWorkerRegistered(const std::string& computer, net::Connection& conn,
                                    const WorkerTasks&) {
  workers_[computer] = &conn;
}

void DfsService::OnClose(net::Connection& conn) {
  for (auto it = workers_.begin(); it != workers_.end();) {
    it = it->second->id() == conn.id() ? workers_.erase(it) : std::next(it);
  }
  std::erase_if(held_, [&](const Held& h) { return h.conn->id() == conn.id(); });
}

void DfsService::ReleaseHeld() {
  if (held_.empty() || names_.Starting(clock_.Now())) return;
  std::vector<Held> held = std::move(held_);
  held_.clear();
  spdlog::info("the master is up: answering {} held DFS request(s)", held.size());
  for (Held& h : held) {
    if (!h.conn->open()) continue;
    Status s = OnFrame(*h.conn, h.frame);
    if (!s.ok()) h.conn->Close(s);
  }
}

net::Connection* DfsService::WorkerConn(const std::string& computer) const {
  auto it = workers_.find(computer);
  return it != workers_.end() && it->second->open() ? it->second : nullptr;
}

bool DfsService::DeleteBlocks(const std::string& computer,
                              const std::vector<dfs::BlockId>& blocks) {
  net::Connection* conn = WorkerConn(computer);
  if (!conn) return false;
  capnp::MallocMessageBuilder msg;
  auto ids = msg.initRoot<DfsMessage>().initDeleteBlocks().initBlockIds(
      static_cast<unsigned>(blocks.size()));
  for (unsigned i = 0; i < blocks.size(); ++i) ids.set(i, blocks[i]);
  conn->Send(net::Protocol::kDfs, net::PayloadKind::kMessage, dfs::EncodeDfs(msg));
  return true;
}

bool DfsService::Replicate(const std::string& computer, dfs::BlockId block, uint64_t size,
                           const std::vector<dfs::Endpoint>& sources) {
  net::Connection* conn = WorkerConn(computer);
  if (!conn) return false;
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<DfsMessage>().initReplicateBlock();
  r.setBlockId(block);
  r.setSize(size);
  auto list = r.initSources(static_cast<unsigned>(sources.size()));
  for (unsigned i = 0; i < sources.size(); ++i) dfs::SetEndpoint(list[i], sources[i]);
  conn->Send(net::Protocol::kDfs, net::PayloadKind::kMessage, dfs::EncodeDfs(msg));
  return true;
}

void DfsService::OnComputerUp(const std::string& computer) {
  names_.OnComputerUp(computer, clock_.Now());
  ReleaseHeld();
}

void DfsService::OnComputerDown(const std::string& computer) {
  names_.OnComputerDown(computer, clock_.Now());
}

void DfsService::OnComputerDraining(const std::string& computer, bool draining,
                                    bool /*move_tasks*/) {
  names_.SetDraining(computer, draining);
}

void DfsService::Tick() {
  names_.Tick(clock_.Now());
  ReleaseHeld();
}

Status DfsService::OnFrame(net::Connection& conn, const net::Frame& frame) {
  if (frame.kind != net::PayloadKind::kMessage)
    return InvalidArgument("raw bytes sent to the master's name service");
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    Reader root = reader->getRoot<DfsMessage>();
    switch (root.which()) {
      case DfsMessage::BLOCK_REPORT:
      case DfsMessage::BLOCK_RECEIVED:
      case DfsMessage::BAD_REPLICA:
      case DfsMessage::REPLICATION_DONE:
        return Notice(conn, root);
      case DfsMessage::CREATE_FILE:
      case DfsMessage::ALLOCATE_BLOCK:
        if (names_.Starting(clock_.Now())) {
          held_.push_back({&conn, frame});
          return Status::Ok();
        }
        return Request(conn, root);
      default:
        return Request(conn, root);
    }
  });
}

// A client request: its reply, or an Error the client turns into a status.
Status DfsService::Request(net::Connection& conn, Reader root) {
  Timestamp now = clock_.Now();
  capnp::MallocMessageBuilder reply;
  Builder out = reply.initRoot<DfsMessage>();
  Status s;
  switch (root.which()) {
    case DfsMessage::CREATE_FILE:
      s = OnCreateFile(root.getCreateFile(), out, now);
      break;
    case DfsMessage::ALLOCATE_BLOCK:
      s = OnAllocateBlock(root.getAllocateBlock(), out, now);
      break;
    case DfsMessage::COMMIT_PARTITION:
      s = OnCommitPartition(root.getCommitPartition(), out, now);
      break;
    case DfsMessage::COMMIT_PARTITIONS:
      s = OnCommitPartitions(root.getCommitPartitions(), out, now);
      break;
    case DfsMessage::OPEN_OUTPUT:
      s = OnOpenOutput(root.getOpenOutput(), out);
      break;
    case DfsMessage::ABANDON_FILE:
      s = OnAbandonFile(root.getAbandonFile(), out);
      break;
    case DfsMessage::LIST_FILES:
      s = OnListFiles(root.getListFiles(), out);
      break;
    case DfsMessage::STAT_FILE:
      s = OnStatFile(root.getStatFile(), out);
      break;
    case DfsMessage::DELETE_FILE:
      s = OnDeleteFile(root.getDeleteFile(), out);
      break;
    case DfsMessage::DELETE_JOB_SCRATCH:
      s = OnDeleteJobScratch(root.getDeleteJobScratch(), out);
      break;
    case DfsMessage::REPORT_BAD_REPLICA:
      s = OnReportBadReplica(root.getReportBadReplica(), out);
      break;
    default:
      return InvalidArgument("unexpected DFS message for the master");
  }
  conn.Send(net::Protocol::kDfs, net::PayloadKind::kMessage,
            s.ok() ? dfs::EncodeDfs(reply) : dfs::EncodeError(s));
  return Status::Ok();
}

// A worker's notice on its registration connection: no reply; a notice the
// name service refuses is logged.
Status DfsService::Notice(net::Connection& conn, Reader root) {
  const std::string computer = cluster_.ComputerOfSession(conn.id());
  if (computer.empty()) {
    return InvalidArgument("a worker notice from a connection that registered no computer");
  }
  Status s;
  switch (root.which()) {
    case DfsMessage::BLOCK_REPORT:
      s = OnBlockReport(computer, root.getBlockReport());
      break;
    case DfsMessage::BLOCK_RECEIVED:
      s = OnBlockReceived(computer, root.getBlockReceived());
      break;
    case DfsMessage::BAD_REPLICA:
      s = OnBadReplica(computer, root.getBadReplica());
      break;
    case DfsMessage::REPLICATION_DONE:
      s = OnReplicationDone(computer, root.getReplicationDone());
      break;
    default:
      return Internal("not a worker notice");
  }
  if (!s.ok()) spdlog::error("DFS notice from {}: {}", computer, s.ToString());
  return Status::Ok();
}

Status DfsService::OnCreateFile(proto::CreateFile::Reader c, Builder out, Timestamp now) {
  dfs::CreateRequest req;
  req.path = c.getPath();
  req.partitions = static_cast<int>(c.getPartitions());
  req.replication = static_cast<int>(c.getReplication());
  req.writer = c.getWriter();
  req.scratch_job = c.getScratchJob();
  req.output_job = c.getOutputJob();
  req.run = {c.getTask(), c.getAttempt()};
  COPSE_ASSIGN_OR_RETURN(req.placement, ReadPlacement(c.getPlacement()));
  // The program store's area holds uploads of `copse app put` only; the
  // program store records them (master/app_service.h).
  const bool in_store = dfs::InProgramStore(req.path);
  if (in_store != c.getProgramStore()) {
    return InvalidArgument(
        in_store
            ? fmt::format("{} is the program store's: put programs with `copse app put`", req.path)
            : fmt::format("a program is uploaded under {}/, not at {}", dfs::kAppsRoot, req.path));
  }
  if (req.scratch_job.empty() && req.output_job.empty()) {
    // A new file grows the namespace for good; jobs' files are work already
    // admitted, which the reserve is kept for.
    COPSE_RETURN_IF_ERROR(CheckDiskReserve(config_.master.data_dir, config_.dfs.reserve_bytes, 0,
                                           "the master", free_space_));
  }
  COPSE_ASSIGN_OR_RETURN(dfs::CreateResult r, names_.Create(req, now));
  auto cr = out.initCreateFileReply();
  cr.setFileId(r.id);
  cr.setReplication(static_cast<uint32_t>(r.replication));
  cr.setBlockSize(static_cast<uint64_t>(config_.block_size_bytes));
  cr.setScratch(!req.scratch_job.empty());
  return Status::Ok();
}

Status DfsService::OnAllocateBlock(proto::AllocateBlock::Reader a, Builder out, Timestamp now) {
  dfs::BlockRequest req;
  req.file = a.getFileId();
  req.partition = static_cast<int>(a.getPartition());
  for (auto e : a.getExclude()) req.exclude.insert(e);
  req.writer = a.getWriter();
  req.run = {a.getTask(), a.getAttempt()};
  COPSE_ASSIGN_OR_RETURN(dfs::BlockAllocation r, names_.AllocateBlock(req, now));
  auto ar = out.initAllocateBlockReply();
  ar.setBlockId(r.id);
  auto list = ar.initTargets(static_cast<unsigned>(r.targets.size()));
  for (unsigned i = 0; i < r.targets.size(); ++i) dfs::SetEndpoint(list[i], r.targets[i]);
  return Status::Ok();
}

Status DfsService::OnCommitPartition(proto::CommitPartition::Reader c, Builder out, Timestamp now) {
  COPSE_ASSIGN_OR_RETURN(bool visible,
                         names_.CommitPartition(c.getFileId(), static_cast<int>(c.getPartition()),
                                                ReadCommitBlocks(c.getBlocks()), now));
  out.initCommitPartitionReply().setFileVisible(visible);
  return Status::Ok();
}

Status DfsService::OnCommitPartitions(proto::CommitPartitions::Reader c, Builder out,
                                      Timestamp now) {
  std::vector<dfs::PartitionCommit> partitions;
  for (auto p : c.getPartitions())
    partitions.push_back({static_cast<int>(p.getPartition()), ReadCommitBlocks(p.getBlocks())});
  COPSE_ASSIGN_OR_RETURN(bool visible, names_.CommitPartitions(c.getFileId(), partitions, now));
  out.initCommitPartitionReply().setFileVisible(visible);
  return Status::Ok();
}

Status DfsService::OnOpenOutput(proto::OpenOutput::Reader o, Builder out) {
  COPSE_ASSIGN_OR_RETURN(dfs::OutputFileInfo f, names_.OpenOutput(o.getPath()));
  auto r = out.initOpenOutputReply();
  r.setFileId(f.id);
  r.setPartitions(static_cast<uint32_t>(f.partitions));
  r.setBlockSize(f.block_size);
  r.setReplication(static_cast<uint32_t>(f.replication));
  r.setJob(f.job);
  return Status::Ok();
}

Status DfsService::OnAbandonFile(proto::AbandonFile::Reader a, Builder out) {
  COPSE_RETURN_IF_ERROR(names_.Abandon(a.getFileId()));
  out.initDone();
  return Status::Ok();
}

Status DfsService::OnListFiles(proto::ListFiles::Reader l, Builder out) {
  COPSE_ASSIGN_OR_RETURN(std::vector<dfs::ListEntry> entries, names_.List(l.getPath()));
  auto list = out.initListFilesReply().initEntries(static_cast<unsigned>(entries.size()));
  for (unsigned i = 0; i < entries.size(); ++i) {
    const dfs::ListEntry& e = entries[i];
    list[i].setPath(e.path);
    list[i].setIsDir(e.is_dir);
    list[i].setSize(e.size);
    list[i].setPartitions(static_cast<uint32_t>(e.partitions));
    list[i].setReplication(static_cast<uint32_t>(e.replication));
    list[i].setScratchJob(e.scratch_job);
  }
  return Status::Ok();
}

Status DfsService::OnStatFile(proto::StatFile::Reader st, Builder out) {
  COPSE_ASSIGN_OR_RETURN(dfs::FileStatus f, names_.Stat(st.getPath(), st.getPartition()));
  dfs::SetFileStatus(out.initFileInfo(), f);
  return Status::Ok();
}

Status DfsService::OnDeleteFile(proto::DeleteFile::Reader d, Builder out) {
  std::string path = d.getPath();
  if (dfs::InProgramStore(path)) {
    return InvalidArgument(
        fmt::format("{} is the program store's: remove programs with `copse app rm`", path));
  }
  COPSE_RETURN_IF_ERROR(names_.Delete(path));
  out.initDeleteReply().setFilesDeleted(1);
  return Status::Ok();
}

Status DfsService::OnDeleteJobScratch(proto::DeleteJobScratch::Reader d, Builder out) {
  COPSE_ASSIGN_OR_RETURN(int n, names_.DeleteJob(d.getJob()));
  out.initDeleteReply().setFilesDeleted(static_cast<uint32_t>(n));
  return Status::Ok();
}

Status DfsService::OnReportBadReplica(proto::ReportBadReplica::Reader r, Builder out) {
  COPSE_RETURN_IF_ERROR(names_.ReportBadReplica(r.getBlockId(), r.getComputer(), r.getReason()));
  out.initDone();
  return Status::Ok();
}

Status DfsService::OnBlockReport(const std::string& computer, proto::BlockReport::Reader r) {
  std::vector<std::pair<dfs::BlockId, uint64_t>> blocks;
  for (auto b : r.getBlocks()) blocks.emplace_back(b.getBlockId(), b.getSize());
  return names_.OnBlockReport(computer, blocks);
}

Status DfsService::OnBlockReceived(const std::string& computer, proto::BlockReceived::Reader r) {
  auto b = r.getBlock();
  return names_.OnBlockReceived(computer, b.getBlockId(), b.getSize());
}

Status DfsService::OnBadReplica(const std::string& computer, proto::BadReplica::Reader r) {
  return names_.OnBadReplica(computer, r.getBlockId(), r.getReason());
}

Status DfsService::OnReplicationDone(const std::string& computer,
                                     proto::ReplicationDone::Reader r) {
  names_.OnReplicationDone(computer, r.getBlockId(), r.getOk(), r.getMessage());
  return Status::Ok();
}

}  // namespace copse::master

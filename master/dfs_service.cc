#include "master/dfs_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/net/message.h"
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

}  // namespace

DfsService::DfsService(const ClusterConfig& config, const Clock& clock, dfs::MetaStore& store)
    : config_(config), clock_(clock), names_(config, store, *this, dfs::NameServiceOptions{}) {}

Status DfsService::Load() { return names_.Load(clock_.Now()); }

void DfsService::AttachWorker(const std::string& computer, net::Connection& conn) {
  workers_[computer] = &conn;
}

void DfsService::ConnectionClosed(uint64_t conn_id) {
  for (auto it = workers_.begin(); it != workers_.end();) {
    it = it->second->id() == conn_id ? workers_.erase(it) : std::next(it);
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
}

void DfsService::OnComputerDown(const std::string& computer) {
  names_.OnComputerDown(computer, clock_.Now());
}

void DfsService::Tick() { names_.Tick(clock_.Now()); }

Status DfsService::Handle(net::Connection& conn, const net::Frame& frame,
                          const std::string& computer) {
  if (frame.kind != net::PayloadKind::kMessage)
    return InvalidArgument("raw bytes sent to the master's name service");
  return net::CatchDecodeErrors([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<DfsMessage>();
    Timestamp now = clock_.Now();
    capnp::MallocMessageBuilder reply;
    auto out = reply.initRoot<DfsMessage>();
    Status s;
    bool answer = true;
    auto need_worker = [&]() -> Status {
      if (computer.empty())
        return InvalidArgument("a worker notice from a connection that registered no computer");
      return Status::Ok();
    };
    switch (root.which()) {
      case DfsMessage::CREATE_FILE: {
        auto c = root.getCreateFile();
        dfs::CreateRequest req;
        req.path = c.getPath();
        req.partitions = static_cast<int>(c.getPartitions());
        req.replication = static_cast<int>(c.getReplication());
        req.writer = c.getWriter();
        req.scratch_job = c.getScratchJob();
        auto placement = ReadPlacement(c.getPlacement());
        if (!placement.ok()) {
          s = placement.status();
          break;
        }
        req.placement = *placement;
        auto r = names_.Create(req, now);
        if (!r.ok()) {
          s = r.status();
          break;
        }
        auto cr = out.initCreateFileReply();
        cr.setFileId(r->id);
        cr.setReplication(static_cast<uint32_t>(r->replication));
        cr.setBlockSize(static_cast<uint64_t>(config_.block_size_bytes));
        break;
      }
      case DfsMessage::ALLOCATE_BLOCK: {
        auto a = root.getAllocateBlock();
        std::set<std::string> exclude;
        for (auto e : a.getExclude()) exclude.insert(e);
        auto r =
            names_.AllocateBlock(a.getFileId(), static_cast<int>(a.getPartition()), exclude, now);
        if (!r.ok()) {
          s = r.status();
          break;
        }
        auto ar = out.initAllocateBlockReply();
        ar.setBlockId(r->id);
        auto list = ar.initTargets(static_cast<unsigned>(r->targets.size()));
        for (unsigned i = 0; i < r->targets.size(); ++i) dfs::SetEndpoint(list[i], r->targets[i]);
        break;
      }
      case DfsMessage::COMMIT_PARTITION: {
        auto c = root.getCommitPartition();
        std::vector<dfs::CommitBlock> blocks;
        for (auto b : c.getBlocks()) {
          dfs::CommitBlock cb{b.getBlockId(), b.getSize(), {}};
          for (auto r : b.getReplicas()) cb.replicas.push_back(r);
          blocks.push_back(std::move(cb));
        }
        auto r =
            names_.CommitPartition(c.getFileId(), static_cast<int>(c.getPartition()), blocks, now);
        if (!r.ok()) {
          s = r.status();
          break;
        }
        out.initCommitPartitionReply().setFileVisible(*r);
        break;
      }
      case DfsMessage::ABANDON_FILE:
        s = names_.Abandon(root.getAbandonFile().getFileId());
        if (s.ok()) out.initDone();
        break;
      case DfsMessage::LIST_FILES: {
        auto r = names_.List(root.getListFiles().getPath());
        if (!r.ok()) {
          s = r.status();
          break;
        }
        auto list = out.initListFilesReply().initEntries(static_cast<unsigned>(r->size()));
        for (unsigned i = 0; i < r->size(); ++i) {
          const dfs::ListEntry& e = (*r)[i];
          list[i].setPath(e.path);
          list[i].setIsDir(e.is_dir);
          list[i].setSize(e.size);
          list[i].setPartitions(static_cast<uint32_t>(e.partitions));
          list[i].setReplication(static_cast<uint32_t>(e.replication));
          list[i].setScratchJob(e.scratch_job);
        }
        break;
      }
      case DfsMessage::STAT_FILE: {
        auto r = names_.Stat(root.getStatFile().getPath());
        if (!r.ok()) {
          s = r.status();
          break;
        }
        dfs::SetFileStatus(out.initFileInfo(), *r);
        break;
      }
      case DfsMessage::DELETE_FILE:
        s = names_.Delete(root.getDeleteFile().getPath());
        if (s.ok()) out.initDeleteReply().setFilesDeleted(1);
        break;
      case DfsMessage::DELETE_JOB_SCRATCH: {
        auto r = names_.DeleteJob(root.getDeleteJobScratch().getJob());
        if (!r.ok()) {
          s = r.status();
          break;
        }
        out.initDeleteReply().setFilesDeleted(static_cast<uint32_t>(*r));
        break;
      }
      case DfsMessage::REPORT_BAD_REPLICA: {
        auto r = root.getReportBadReplica();
        s = names_.ReportBadReplica(r.getBlockId(), r.getComputer(), r.getReason());
        if (s.ok()) out.initDone();
        break;
      }
      // ---- worker notices (no reply)
      case DfsMessage::BLOCK_REPORT: {
        answer = false;
        COPSE_RETURN_IF_ERROR(need_worker());
        std::vector<std::pair<dfs::BlockId, uint64_t>> blocks;
        for (auto b : root.getBlockReport().getBlocks())
          blocks.emplace_back(b.getBlockId(), b.getSize());
        s = names_.OnBlockReport(computer, blocks);
        break;
      }
      case DfsMessage::BLOCK_RECEIVED: {
        answer = false;
        COPSE_RETURN_IF_ERROR(need_worker());
        auto b = root.getBlockReceived().getBlock();
        s = names_.OnBlockReceived(computer, b.getBlockId(), b.getSize());
        break;
      }
      case DfsMessage::BAD_REPLICA: {
        answer = false;
        COPSE_RETURN_IF_ERROR(need_worker());
        auto b = root.getBadReplica();
        s = names_.OnBadReplica(computer, b.getBlockId(), b.getReason());
        break;
      }
      case DfsMessage::REPLICATION_DONE: {
        answer = false;
        COPSE_RETURN_IF_ERROR(need_worker());
        auto r = root.getReplicationDone();
        names_.OnReplicationDone(computer, r.getBlockId(), r.getOk(), r.getMessage());
        break;
      }
      default:
        return InvalidArgument("unexpected DFS message for the master");
    }
    if (!answer) {
      if (!s.ok()) spdlog::error("DFS notice from {}: {}", computer, s.ToString());
      return Status::Ok();
    }
    if (!s.ok()) {
      conn.Send(net::Protocol::kDfs, net::PayloadKind::kMessage, dfs::EncodeError(s));
      return Status::Ok();
    }
    conn.Send(net::Protocol::kDfs, net::PayloadKind::kMessage, dfs::EncodeDfs(reply));
    return Status::Ok();
  });
}

}  // namespace copse::master

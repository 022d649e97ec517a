#include "dfs/name_client.h"

#include <fmt/format.h>

#include <algorithm>

#include "dfs/protocol.h"

namespace copse::dfs {
namespace {

using proto::DfsMessage;

void SetPlacement(proto::Placement::Builder out, const PlacementMode& m) {
  switch (m.kind) {
    case PlacementMode::Kind::kWriter:
      out.setWriter();
      break;
    case PlacementMode::Kind::kRandom:
      out.setRandom();
      break;
    case PlacementMode::Kind::kColocate:
      out.setColocate(m.colocate_path);
      break;
    case PlacementMode::Kind::kConfine: {
      auto c = out.initConfine();
      c.setCount(static_cast<uint32_t>(m.confine_count));
      c.setRack(m.confine_rack);
      break;
    }
  }
}

Status Unexpected(const char* request) {
  return Internal(fmt::format("unexpected reply to {}", request));
}

}  // namespace

NameClient::NameClient(std::unique_ptr<net::RedialingChannel> master, std::string computer,
                       RunId run)
    : master_(std::move(master)), computer_(std::move(computer)), run_(run) {}

Result<std::vector<uint8_t>> NameClient::Call(std::vector<uint8_t> request, bool resend) {
  COPSE_ASSIGN_OR_RETURN(net::Frame f, master_->Call(net::Protocol::kDfs, request, resend));
  if (f.protocol != net::Protocol::kDfs || f.kind != net::PayloadKind::kMessage)
    return Internal("the master answered a DFS request with something else");
  return std::move(f.payload);
}

Result<CreatedFile> NameClient::Create(const std::string& path, const CreateOptions& o) {
  capnp::MallocMessageBuilder msg;
  auto c = msg.initRoot<DfsMessage>().initCreateFile();
  c.setPath(path);
  c.setPartitions(static_cast<uint32_t>(std::max(o.partitions, 0)));
  c.setReplication(static_cast<uint32_t>(std::max(o.replication, 0)));
  SetPlacement(c.initPlacement(), o.placement);
  c.setWriter(computer_);
  c.setScratchJob(o.scratch_job);
  c.setOutputJob(o.output_job);
  c.setProgramStore(o.program_store);
  c.setTask(run_.task);
  c.setAttempt(run_.attempt);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg)));
  CreatedFile out;
  COPSE_RETURN_IF_ERROR(OnDfsReply(reply, [&](DfsMessage::Reader root) -> Status {
    if (root.which() != DfsMessage::CREATE_FILE_REPLY) return Unexpected("CreateFile");
    auto r = root.getCreateFileReply();
    out = {r.getFileId(), r.getBlockSize(), static_cast<int>(r.getReplication()), r.getScratch()};
    return Status::Ok();
  }));
  return out;
}

Result<OutputFileInfo> NameClient::OpenOutput(const std::string& path) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<DfsMessage>().initOpenOutput().setPath(path);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg), /*resend=*/true));
  OutputFileInfo out;
  COPSE_RETURN_IF_ERROR(OnDfsReply(reply, [&](DfsMessage::Reader root) -> Status {
    if (root.which() != DfsMessage::OPEN_OUTPUT_REPLY) return Unexpected("OpenOutput");
    auto r = root.getOpenOutputReply();
    out = {r.getFileId(), r.getJob(), static_cast<int>(r.getPartitions()),
           static_cast<int>(r.getReplication()), r.getBlockSize()};
    return Status::Ok();
  }));
  return out;
}

Result<BlockAllocation> NameClient::AllocateBlock(FileId file, int partition,
                                                  const std::vector<std::string>& exclude) {
  capnp::MallocMessageBuilder msg;
  auto a = msg.initRoot<DfsMessage>().initAllocateBlock();
  a.setFileId(file);
  a.setPartition(static_cast<uint32_t>(partition));
  auto ex = a.initExclude(static_cast<unsigned>(exclude.size()));
  for (unsigned i = 0; i < exclude.size(); ++i) ex.set(i, exclude[i]);
  a.setTask(run_.task);
  a.setAttempt(run_.attempt);
  a.setWriter(computer_);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg)));
  BlockAllocation out;
  COPSE_RETURN_IF_ERROR(OnDfsReply(reply, [&](DfsMessage::Reader root) -> Status {
    if (root.which() != DfsMessage::ALLOCATE_BLOCK_REPLY) return Unexpected("AllocateBlock");
    out.id = root.getAllocateBlockReply().getBlockId();
    for (auto t : root.getAllocateBlockReply().getTargets()) out.targets.push_back(ReadEndpoint(t));
    return Status::Ok();
  }));
  if (out.targets.empty()) return Internal("the master allocated a block without replicas");
  return out;
}

Result<bool> NameClient::CommitPartitions(FileId file,
                                          const std::vector<PartitionCommit>& partitions) {
  capnp::MallocMessageBuilder msg;
  auto c = msg.initRoot<DfsMessage>().initCommitPartitions();
  c.setFileId(file);
  auto parts = c.initPartitions(static_cast<unsigned>(partitions.size()));
  for (unsigned p = 0; p < partitions.size(); ++p) {
    const PartitionCommit& pc = partitions[p];
    parts[p].setPartition(static_cast<uint32_t>(pc.partition));
    auto list = parts[p].initBlocks(static_cast<unsigned>(pc.blocks.size()));
    for (unsigned i = 0; i < pc.blocks.size(); ++i) {
      const CommitBlock& b = pc.blocks[i];
      list[i].setBlockId(b.id);
      list[i].setSize(b.size);
      auto reps = list[i].initReplicas(static_cast<unsigned>(b.replicas.size()));
      for (unsigned j = 0; j < b.replicas.size(); ++j) reps.set(j, b.replicas[j]);
    }
  }
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg)));
  bool visible = false;
  COPSE_RETURN_IF_ERROR(OnDfsReply(reply, [&](DfsMessage::Reader root) -> Status {
    if (root.which() != DfsMessage::COMMIT_PARTITION_REPLY) return Unexpected("CommitPartitions");
    visible = root.getCommitPartitionReply().getFileVisible();
    return Status::Ok();
  }));
  return visible;
}

Status NameClient::Abandon(FileId file) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<DfsMessage>().initAbandonFile().setFileId(file);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg)));
  return OnDfsReply(reply, [](DfsMessage::Reader) { return Status::Ok(); });
}

Result<FileStatus> NameClient::Stat(const std::string& path, int partition) {
  capnp::MallocMessageBuilder msg;
  auto st = msg.initRoot<DfsMessage>().initStatFile();
  st.setPath(path);
  st.setPartition(partition);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg), /*resend=*/true));
  FileStatus out;
  COPSE_RETURN_IF_ERROR(OnDfsReply(reply, [&](DfsMessage::Reader root) -> Status {
    if (root.which() != DfsMessage::FILE_INFO) return Unexpected("StatFile");
    out = ReadFileStatus(root.getFileInfo());
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<ListEntry>> NameClient::List(const std::string& path) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<DfsMessage>().initListFiles().setPath(path);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg), /*resend=*/true));
  std::vector<ListEntry> out;
  COPSE_RETURN_IF_ERROR(OnDfsReply(reply, [&](DfsMessage::Reader root) -> Status {
    if (root.which() != DfsMessage::LIST_FILES_REPLY) return Unexpected("ListFiles");
    for (auto e : root.getListFilesReply().getEntries()) {
      out.push_back({e.getPath(), e.getIsDir(), e.getSize(), static_cast<int>(e.getPartitions()),
                     static_cast<int>(e.getReplication()), e.getScratchJob()});
    }
    return Status::Ok();
  }));
  return out;
}

Status NameClient::Delete(const std::string& path) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<DfsMessage>().initDeleteFile().setPath(path);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg)));
  return OnDfsReply(reply, [](DfsMessage::Reader) { return Status::Ok(); });
}

Result<int> NameClient::DeleteJobScratch(const std::string& job) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<DfsMessage>().initDeleteJobScratch().setJob(job);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg)));
  int n = 0;
  COPSE_RETURN_IF_ERROR(OnDfsReply(reply, [&](DfsMessage::Reader root) -> Status {
    if (root.which() == DfsMessage::DELETE_REPLY)
      n = static_cast<int>(root.getDeleteReply().getFilesDeleted());
    return Status::Ok();
  }));
  return n;
}

Status NameClient::ReportBadReplica(BlockId block, const std::string& computer,
                                    const std::string& reason) {
  capnp::MallocMessageBuilder msg;
  auto rb = msg.initRoot<DfsMessage>().initReportBadReplica();
  rb.setBlockId(block);
  rb.setComputer(computer);
  rb.setReason(reason);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(EncodeDfs(msg)));
  return OnDfsReply(reply, [](DfsMessage::Reader) { return Status::Ok(); });
}

}  // namespace copse::dfs

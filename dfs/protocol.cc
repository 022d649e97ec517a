#include "dfs/protocol.h"

#include "common/net/message.h"

namespace copse::dfs {

std::vector<uint8_t> EncodeDfs(capnp::MallocMessageBuilder& msg) { return net::EncodeMessage(msg); }

void SetError(proto::Error::Builder out, const Status& s) {
  out.setCode(static_cast<uint16_t>(s.code()));
  out.setMessage(s.message());
}

std::vector<uint8_t> EncodeError(const Status& s) {
  capnp::MallocMessageBuilder msg;
  SetError(msg.initRoot<proto::DfsMessage>().initError(), s);
  return EncodeDfs(msg);
}

Status StatusFromError(proto::Error::Reader e) {
  uint16_t code = e.getCode();
  if (code == 0 || code > static_cast<uint16_t>(StatusCode::kDataLoss))
    return Internal(std::string("peer error: ") + e.getMessage().cStr());
  return Status(static_cast<StatusCode>(code), e.getMessage());
}

void SetEndpoint(proto::Endpoint::Builder out, const Endpoint& e) {
  out.setComputer(e.computer);
  out.setRack(e.rack);
  out.setHost(e.host);
  out.setDataPort(e.data_port);
}

Endpoint ReadEndpoint(proto::Endpoint::Reader r) {
  return {r.getComputer(), r.getRack(), r.getHost(), r.getDataPort()};
}

void SetFileStatus(proto::FileInfo::Builder out, const FileStatus& f) {
  out.setPath(f.path);
  out.setFileId(f.id);
  out.setSize(f.size);
  out.setReplication(static_cast<uint32_t>(f.replication));
  out.setPlacement(f.placement);
  out.setScratchJob(f.scratch_job);
  out.setBlockSize(f.block_size);
  auto parts = out.initPartitions(static_cast<unsigned>(f.partitions.size()));
  for (unsigned i = 0; i < f.partitions.size(); ++i) {
    const PartitionLocation& p = f.partitions[i];
    parts[i].setCommitted(p.committed);
    parts[i].setSize(p.size);
    auto blocks = parts[i].initBlocks(static_cast<unsigned>(p.blocks.size()));
    for (unsigned j = 0; j < p.blocks.size(); ++j) {
      const BlockLocation& b = p.blocks[j];
      blocks[j].setBlockId(b.id);
      blocks[j].setSize(b.size);
      auto reps = blocks[j].initReplicas(static_cast<unsigned>(b.replicas.size()));
      for (unsigned k = 0; k < b.replicas.size(); ++k) {
        const ReplicaLocation& r = b.replicas[k];
        reps[k].setComputer(r.where.computer);
        reps[k].setRack(r.where.rack);
        reps[k].setHost(r.where.host);
        reps[k].setDataPort(r.where.data_port);
        reps[k].setLive(r.live);
      }
    }
  }
}

FileStatus ReadFileStatus(proto::FileInfo::Reader r) {
  FileStatus f;
  f.path = r.getPath();
  f.id = r.getFileId();
  f.size = r.getSize();
  f.replication = static_cast<int>(r.getReplication());
  f.placement = r.getPlacement();
  f.scratch_job = r.getScratchJob();
  f.block_size = r.getBlockSize();
  for (auto p : r.getPartitions()) {
    PartitionLocation pl;
    pl.committed = p.getCommitted();
    pl.size = p.getSize();
    for (auto b : p.getBlocks()) {
      BlockLocation bl;
      bl.id = b.getBlockId();
      bl.size = b.getSize();
      for (auto rep : b.getReplicas()) {
        bl.replicas.push_back(
            {{rep.getComputer(), rep.getRack(), rep.getHost(), rep.getDataPort()}, rep.getLive()});
      }
      pl.blocks.push_back(std::move(bl));
    }
    f.partitions.push_back(std::move(pl));
  }
  return f;
}

}  // namespace copse::dfs

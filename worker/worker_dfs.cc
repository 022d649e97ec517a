#include "worker/worker_dfs.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/net/message.h"
#include "dfs/protocol.h"
#include "proto/dfs.capnp.h"
#include "worker/metrics.h"

namespace copse::worker {

WorkerDfs::WorkerDfs(asio::io_context& io, const ClusterConfig& config,
                     const ComputerConfig& computer, std::string secret, WorkerAgent& agent)
    : io_(io), config_(config), computer_(computer), secret_(std::move(secret)), agent_(agent) {}

WorkerDfs::~WorkerDfs() { Stop(); }

Status WorkerDfs::Start() {
  dfs::BlockStoreOptions o;
  o.dir = computer_.data_dir / "blocks";
  o.computer = computer_.name;
  o.block_size = static_cast<uint64_t>(config_.block_size_bytes);
  o.reserve_bytes = config_.dfs.reserve_bytes;
  o.sync_on_close = config_.dfs.sync_on_close;
  COPSE_ASSIGN_OR_RETURN(store_, dfs::BlockStore::Open(o));
  dfs::BlockServer::Callbacks cb;
  cb.stored = [this](dfs::BlockId id, uint64_t size) {
    capnp::MallocMessageBuilder msg;
    auto b = msg.initRoot<proto::DfsMessage>().initBlockReceived().initBlock();
    b.setBlockId(id);
    b.setSize(size);
    agent_.Send(net::Protocol::kDfs, dfs::EncodeDfs(msg));
  };
  cb.bad_replica = [this](dfs::BlockId id, const Status& why) {
    capnp::MallocMessageBuilder msg;
    auto b = msg.initRoot<proto::DfsMessage>().initBadReplica();
    b.setBlockId(id);
    b.setReason(why.message());
    agent_.Send(net::Protocol::kDfs, dfs::EncodeDfs(msg));
  };
  if (WorkerMetrics* m = metrics_) {
    // Where the reader is, from the config: this computer, its rack, or
    // elsewhere (another rack, or outside the cluster).
    cb.served = [this, m](const std::string& reader, uint64_t bytes) {
      WorkerMetrics::Locality where = WorkerMetrics::Locality::kRemote;
      if (reader == computer_.name) {
        where = WorkerMetrics::Locality::kLocal;
      } else if (const ComputerConfig* c = config_.FindComputer(reader);
                 c != nullptr && c->rack == computer_.rack) {
        where = WorkerMetrics::Locality::kRack;
      }
      m->Served(where, bytes);
    };
  }
  server_ = std::make_unique<dfs::BlockServer>(io_, *store_, secret_,
                                               dfs::BlockServerOptions{computer_.name}, cb);
  Status s = server_->Listen(computer_.host, computer_.data_port);
  if (!s.ok()) {
    return Status(s.code(), fmt::format("data port of {}: {}", computer_.name, s.message()));
  }
  spdlog::info("block store in {} serving on {}:{}", o.dir.string(), computer_.host,
               server_->port());
  local_ = std::make_unique<dfs::LocalReadServer>(*store_, secret_, computer_.name);
  if (WorkerMetrics* m = metrics_) {
    local_->set_on_served(
        [m](uint64_t bytes) { m->Served(WorkerMetrics::Locality::kLocal, bytes); });
  }
  std::filesystem::path sock = dfs::LocalReadSocketPath(computer_.data_dir);
  Status ls = local_->Listen(sock);
  if (!ls.ok()) {
    // Clients on this computer read through the data port instead.
    spdlog::warn("no local reads on {}: {}", computer_.name, ls.ToString());
    local_.reset();
  }
  agent_.AddPart(net::Protocol::kDfs, this);
  return Status::Ok();
}

void WorkerDfs::Stop() {
  if (local_) local_->Stop();
  if (server_) server_->Stop();
}

uint64_t WorkerDfs::BlockBytes() const { return store_ ? store_->BlockBytesOnDisk() : 0; }

void WorkerDfs::ReportBlocks() {
  auto blocks = store_->List();
  if (!blocks.ok()) {
    spdlog::error("cannot list the block store: {}", blocks.status().ToString());
    return;
  }
  capnp::MallocMessageBuilder msg;
  auto list = msg.initRoot<proto::DfsMessage>().initBlockReport().initBlocks(
      static_cast<unsigned>(blocks->size()));
  for (unsigned i = 0; i < blocks->size(); ++i) {
    list[i].setBlockId((*blocks)[i].id);
    list[i].setSize((*blocks)[i].size);
  }
  agent_.Send(net::Protocol::kDfs, dfs::EncodeDfs(msg));
}

Status WorkerDfs::OnMasterFrame(const net::Frame& frame) {
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::DfsMessage>();
    switch (root.which()) {
      case proto::DfsMessage::DELETE_BLOCKS: {
        // On a thread of their own: a job's end can delete tens of
        // thousands of scratch blocks here, which on the io thread held the
        // heartbeats long enough for the master to declare the computer
        // dead, and on the commit thread held the next job's writes.
        std::vector<uint64_t> ids;
        for (uint64_t id : root.getDeleteBlocks().getBlockIds()) ids.push_back(id);
        dfs::BlockStore* store = store_.get();
        deleter_.Post([store, ids = std::move(ids)] {
          for (uint64_t id : ids) {
            Status s = store->DeleteBlock(id);
            if (!s.ok()) spdlog::error("deleting block {}: {}", id, s.ToString());
          }
          Status gc = store->CollectGarbage();
          if (!gc.ok()) spdlog::error("block store garbage collection: {}", gc.ToString());
          spdlog::info("deleted {} block(s) at the master's request", ids.size());
        });
        return Status::Ok();
      }
      case proto::DfsMessage::REPLICATE_BLOCK: {
        auto r = root.getReplicateBlock();
        std::vector<dfs::Endpoint> sources;
        for (auto e : r.getSources()) sources.push_back(dfs::ReadEndpoint(e));
        dfs::BlockId id = r.getBlockId();
        server_->Replicate(id, r.getSize(), std::move(sources), [this, id](const Status& s) {
          if (!s.ok()) spdlog::warn("copying block {}: {}", id, s.ToString());
          capnp::MallocMessageBuilder msg;
          auto d = msg.initRoot<proto::DfsMessage>().initReplicationDone();
          d.setBlockId(id);
          d.setOk(s.ok());
          d.setMessage(s.message());
          agent_.Send(net::Protocol::kDfs, dfs::EncodeDfs(msg));
        });
        return Status::Ok();
      }
      default:
        return InvalidArgument("unexpected DFS message from the master");
    }
  });
}

}  // namespace copse::worker

#include "dfs/block_server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <asio/post.hpp>

#include "common/net/message.h"
#include "dfs/chunk.h"
#include "dfs/protocol.h"

namespace copse::dfs {
namespace {

void SendMessage(net::Connection& conn, capnp::MallocMessageBuilder& msg) {
  conn.Send(net::Protocol::kDfs, net::PayloadKind::kMessage, EncodeDfs(msg));
}

void SendError(net::Connection& conn, const Status& s) {
  conn.Send(net::Protocol::kDfs, net::PayloadKind::kMessage, EncodeError(s));
}

}  // namespace

BlockServer::BlockServer(asio::io_context& io, BlockStore& store, std::string secret,
                         BlockServerOptions options, Callbacks callbacks)
    : io_(io),
      store_(store),
      secret_(secret),
      options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      server_(io, std::move(secret), "worker-data", net::TransportOptions{}, this) {}

BlockServer::~BlockServer() { Stop(); }

Status BlockServer::Listen(const std::string& host, uint16_t port) {
  return server_.Listen(host, port);
}

void BlockServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  committer_.Stop();  // finishes the queued commits
  server_.Stop();
  for (auto& [id, t] : transfers_) {
    if (t.kind == Transfer::Kind::kWrite) store_.AbortBlock(t.block);
  }
  transfers_.clear();
  for (auto& [serial, c] : copies_) {
    if (c.begun) store_.AbortBlock(c.block);
  }
  copies_.clear();
}

void BlockServer::Retire(std::unique_ptr<PeerLink> link) {
  if (!link) return;
  auto* raw = link.release();
  asio::post(io_, [raw] { delete raw; });
}

BlockServer::Transfer* BlockServer::Find(uint64_t conn_id, uint64_t serial) {
  auto it = transfers_.find(conn_id);
  if (it == transfers_.end() || it->second.serial != serial) return nullptr;
  return &it->second;
}

// ---- inbound connections ------------------------------------------------------

void BlockServer::OnOpen(net::Connection& conn) {
  Transfer& t = transfers_[conn.id()];
  t.conn = &conn;
}

void BlockServer::OnClose(net::Connection& conn, const Status& why) {
  auto it = transfers_.find(conn.id());
  if (it == transfers_.end()) return;
  Transfer& t = it->second;
  if (t.kind == Transfer::Kind::kWrite) {
    spdlog::warn("write of block {} from {} broke off: {}", t.block, conn.remote(),
                 why.ok() ? "connection closed" : why.ToString());
    // A block being committed stays: it is whole, and the master learns of
    // it (or deletes it when no file references it).
    if (!t.committing) store_.AbortBlock(t.block);
    Retire(std::move(t.down));
  }
  transfers_.erase(it);
}

void BlockServer::OnDrained(net::Connection& conn) {
  auto it = transfers_.find(conn.id());
  if (it != transfers_.end() && it->second.kind == Transfer::Kind::kRead)
    PumpRead(conn, it->second);
}

void BlockServer::OnFrame(net::Connection& conn, net::Frame frame) {
  auto it = transfers_.find(conn.id());
  if (it == transfers_.end()) return;
  Transfer& t = it->second;
  if (frame.protocol != net::Protocol::kDfs) {
    conn.Close(
        InvalidArgument(fmt::format("{} frame on a data port", net::ProtocolName(frame.protocol))));
    return;
  }
  if (frame.kind == net::PayloadKind::kRaw) {
    if (t.kind != Transfer::Kind::kWrite || t.ended) {
      conn.Close(InvalidArgument("chunk bytes outside a block write"));
      return;
    }
    HandleChunk(conn, t, std::move(frame));
    return;
  }
  Status s = HandleMessage(conn, t, frame);
  if (!s.ok()) conn.Close(s);
}

Status BlockServer::HandleMessage(net::Connection& conn, Transfer& t, const net::Frame& frame) {
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::DfsMessage>();
    switch (root.which()) {
      case proto::DfsMessage::READ_BLOCK:
        if (t.kind != Transfer::Kind::kIdle)
          return InvalidArgument("ReadBlock while another transfer runs on this connection");
        StartRead(conn, t, root.getReadBlock().getBlockId(), root.getReadBlock().getFirstChunk(),
                  root.getReadBlock().getReader());
        return Status::Ok();
      case proto::DfsMessage::WRITE_BLOCK: {
        if (t.kind != Transfer::Kind::kIdle)
          return InvalidArgument("WriteBlock while another transfer runs on this connection");
        auto wb = root.getWriteBlock();
        std::vector<Endpoint> pipeline;
        for (auto e : wb.getPipeline()) pipeline.push_back(ReadEndpoint(e));
        StartWrite(conn, t, wb.getBlockId(), std::move(pipeline), wb.getNoSync());
        return Status::Ok();
      }
      case proto::DfsMessage::WRITE_END:
        if (t.kind != Transfer::Kind::kWrite || t.ended)
          return InvalidArgument("WriteEnd outside a block write");
        EndWrite(conn, t, root.getWriteEnd().getSize(), root.getWriteEnd().getChunks());
        return Status::Ok();
      default:
        return InvalidArgument("unexpected message on a data port");
    }
  });
}

// ---- reads ----------------------------------------------------------------------

void BlockServer::StartRead(net::Connection& conn, Transfer& t, BlockId block, uint32_t first,
                            std::string reader) {
  auto info = store_.Stat(block);
  if (!info.ok()) {
    SendError(conn, Status(info.status().code(),
                           fmt::format("block {} is not on {}: {}", block, options_.computer,
                                       info.status().message())));
    return;
  }
  if (first > info->chunks) {
    SendError(conn, InvalidArgument(fmt::format("block {} has {} chunks, asked from chunk {}",
                                                block, info->chunks, first)));
    return;
  }
  capnp::MallocMessageBuilder msg;
  auto h = msg.initRoot<proto::DfsMessage>().initReadHeader();
  h.setBlockId(block);
  h.setSize(info->size);
  h.setChunks(info->chunks);
  h.setFirstChunk(first);
  SendMessage(conn, msg);
  t.kind = Transfer::Kind::kRead;
  t.serial = next_serial_++;
  t.block = block;
  t.reader = std::move(reader);
  t.next = first;
  t.chunks = info->chunks;
  PumpRead(conn, t);
}

void BlockServer::PumpRead(net::Connection& conn, Transfer& t) {
  while (t.next < t.chunks && conn.queued_bytes() < options_.read_window_bytes) {
    std::vector<uint8_t> framed;
    Status s = store_.ReadChunk(t.block, t.next, &framed);
    if (!s.ok()) {
      SendError(conn, s);
      t.kind = Transfer::Kind::kIdle;
      if (s.code() == StatusCode::kCorruption) {
        spdlog::error("{}; deleting this copy", s.message());
        Status d = store_.DeleteBlock(t.block);
        if (!d.ok()) spdlog::error("deleting bad block {}: {}", t.block, d.ToString());
        if (callbacks_.bad_replica) callbacks_.bad_replica(t.block, s);
      }
      return;
    }
    if (callbacks_.served && framed.size() >= kChunkTrailer) {
      callbacks_.served(t.reader, framed.size() - kChunkTrailer);
    }
    conn.Send(net::Protocol::kDfs, net::PayloadKind::kRaw, std::move(framed));
    ++t.next;
  }
  if (t.next >= t.chunks) t.kind = Transfer::Kind::kIdle;
}

// ---- writes ---------------------------------------------------------------------

void BlockServer::StartWrite(net::Connection& conn, Transfer& t, BlockId block,
                             std::vector<Endpoint> pipeline, bool no_sync) {
  Status s = store_.BeginBlock(block, no_sync ? BlockSync::kNoSync : BlockSync::kStore);
  if (!s.ok()) {
    SendError(conn, s);
    conn.CloseAfterFlush(Status::Ok());
    return;
  }
  t = Transfer{};
  t.conn = &conn;
  t.kind = Transfer::Kind::kWrite;
  t.serial = next_serial_++;
  t.block = block;
  if (pipeline.empty()) return;
  Endpoint next = pipeline.front();
  pipeline.erase(pipeline.begin());
  t.down_computer = next.computer;
  t.down_done = false;
  uint64_t conn_id = conn.id();
  uint64_t serial = t.serial;
  PeerLink::Callbacks cb;
  cb.on_frame = [this, conn_id, serial](net::Frame f) {
    OnDownFrame(conn_id, serial, std::move(f));
  };
  cb.on_close = [this, conn_id, serial](const Status& why) {
    if (Transfer* tr = Find(conn_id, serial)) DownFailed(*tr, why);
  };
  t.down = std::make_unique<PeerLink>(io_, next, secret_, "worker " + options_.computer, cb);
  t.down->Start();
  capnp::MallocMessageBuilder msg;
  auto w = msg.initRoot<proto::DfsMessage>().initWriteBlock();
  w.setBlockId(block);
  w.setNoSync(no_sync);
  auto list = w.initPipeline(static_cast<unsigned>(pipeline.size()));
  for (unsigned i = 0; i < pipeline.size(); ++i) SetEndpoint(list[i], pipeline[i]);
  t.down->Send(net::PayloadKind::kMessage, EncodeDfs(msg));
}

void BlockServer::HandleChunk(net::Connection& conn, Transfer& t, net::Frame frame) {
  if (t.failed) return;
  Status s = store_.PutChunk(t.block, t.received, frame.payload);
  if (!s.ok()) {
    FailWrite(t, s);
    (void)conn;
    return;
  }
  t.bytes += frame.payload.size() - kChunkTrailer;
  ++t.received;
  if (t.down && !t.down_done) t.down->Send(net::PayloadKind::kRaw, std::move(frame.payload));
  MaybeAckUp(t);
}

void BlockServer::EndWrite(net::Connection& conn, Transfer& t, uint64_t size, uint32_t chunks) {
  if (t.failed) return;
  if (size != t.bytes || chunks != t.received) {
    FailWrite(t, InvalidArgument(fmt::format(
                     "block {}: the writer ended after {} bytes in {} chunks, {} arrived in {}",
                     t.block, size, chunks, t.bytes, t.received)));
    (void)conn;
    return;
  }
  t.ended = true;
  if (t.down && !t.down_done) {
    capnp::MallocMessageBuilder msg;
    auto e = msg.initRoot<proto::DfsMessage>().initWriteEnd();
    e.setSize(size);
    e.setChunks(chunks);
    t.down->Send(net::PayloadKind::kMessage, EncodeDfs(msg));
  }
  MaybeFinish(t);
}

void BlockServer::OnDownFrame(uint64_t conn_id, uint64_t serial, net::Frame frame) {
  Transfer* t = Find(conn_id, serial);
  if (!t || t->down_done) return;
  if (frame.kind != net::PayloadKind::kMessage) {
    DownFailed(*t, InvalidArgument("raw bytes from the next replica"));
    return;
  }
  Status s = net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::DfsMessage>();
    switch (root.which()) {
      case proto::DfsMessage::CHUNK_ACK:
        t->down_acked = std::max(t->down_acked, root.getChunkAck().getChunks());
        MaybeAckUp(*t);
        return Status::Ok();
      case proto::DfsMessage::WRITE_ACK: {
        auto a = root.getWriteAck();
        for (auto c : a.getStored()) t->stored.push_back(c);
        for (auto f : a.getFailures()) t->failures.push_back(f);
        t->down_done = true;
        Retire(std::move(t->down));
        MaybeAckUp(*t);
        MaybeFinish(*t);
        return Status::Ok();
      }
      case proto::DfsMessage::ERROR:
        return StatusFromError(root.getError());
      default:
        return InvalidArgument("unexpected message from the next replica");
    }
  });
  if (!s.ok()) {
    if (Transfer* again = Find(conn_id, serial)) DownFailed(*again, s);
  }
}

void BlockServer::DownFailed(Transfer& t, const Status& why) {
  if (t.down_done) return;
  spdlog::warn("block {}: next replica {} dropped out: {}", t.block, t.down_computer,
               why.ToString());
  t.failures.push_back(fmt::format("{}: {}", t.down_computer, why.message()));
  t.down_done = true;
  Retire(std::move(t.down));
  MaybeAckUp(t);
  MaybeFinish(t);
}

void BlockServer::MaybeAckUp(Transfer& t) {
  if (t.failed || !t.conn) return;
  uint32_t acked = t.received;
  if (!t.down_done) acked = std::min(acked, t.down_acked);
  if (acked <= t.acked_up) return;
  t.acked_up = acked;
  capnp::MallocMessageBuilder msg;
  msg.initRoot<proto::DfsMessage>().initChunkAck().setChunks(acked);
  SendMessage(*t.conn, msg);
}

void BlockServer::MaybeFinish(Transfer& t) {
  if (t.failed || !t.ended) return;
  // Commit here as soon as every chunk is stored, on the commit thread, while
  // this thread keeps forwarding to the replicas downstream, which commit
  // their copies at the same time.
  if (!t.committed) {
    if (!t.committing) StartCommit(t);
    return;
  }
  if (!t.down_done) return;
  capnp::MallocMessageBuilder msg;
  auto a = msg.initRoot<proto::DfsMessage>().initWriteAck();
  a.setBlockId(t.block);
  a.setSize(t.bytes);
  auto stored = a.initStored(static_cast<unsigned>(t.stored.size() + 1));
  stored.set(0, options_.computer);
  for (unsigned i = 0; i < t.stored.size(); ++i) stored.set(i + 1, t.stored[i]);
  auto failures = a.initFailures(static_cast<unsigned>(t.failures.size()));
  for (unsigned i = 0; i < t.failures.size(); ++i) failures.set(i, t.failures[i]);
  SendMessage(*t.conn, msg);
  net::Connection* conn = t.conn;
  t = Transfer{};
  t.conn = conn;
}

void BlockServer::StartCommit(Transfer& t) {
  t.committing = true;
  uint64_t conn_id = t.conn ? t.conn->id() : 0;
  uint64_t serial = t.serial;
  BlockId block = t.block;
  uint64_t bytes = t.bytes;
  uint32_t chunks = t.received;
  std::weak_ptr<int> alive = alive_;
  auto job = [this, alive, conn_id, serial, block, bytes, chunks] {
    Status s = store_.CommitBlock(block, bytes, chunks);  // aborts the block when it fails
    asio::post(io_, [this, alive, conn_id, serial, block, bytes, s] {
      if (alive.expired() || stopped_) return;
      if (s.ok() && callbacks_.stored) callbacks_.stored(block, bytes);
      Transfer* tr = Find(conn_id, serial);
      if (!tr) return;
      tr->committing = false;
      if (!s.ok()) {
        tr->committed = true;  // nothing left to abort
        FailWrite(*tr, s);
        return;
      }
      tr->committed = true;
      MaybeFinish(*tr);
    });
  };
  committer_.Post(std::move(job));
}

void BlockServer::FailWrite(Transfer& t, const Status& why) {
  if (t.failed) return;
  t.failed = true;
  spdlog::warn("write of block {} failed on {}: {}", t.block, options_.computer, why.ToString());
  if (!t.committed && !t.committing) store_.AbortBlock(t.block);
  Retire(std::move(t.down));
  t.down_done = true;
  if (t.conn) {
    SendError(*t.conn, Status(why.code(), fmt::format("{}: {}", options_.computer, why.message())));
    t.conn->CloseAfterFlush(Status::Ok());
  }
}

// ---- copies from peers ------------------------------------------------------------

void BlockServer::Replicate(BlockId block, uint64_t size, std::vector<Endpoint> sources,
                            std::function<void(const Status&)> done) {
  if (store_.Stat(block).ok()) {
    if (callbacks_.stored) callbacks_.stored(block, store_.Stat(block)->size);
    done(Status::Ok());
    return;
  }
  uint64_t serial = next_serial_++;
  Copy& c = copies_[serial];
  c.block = block;
  c.size = size;
  c.sources = std::move(sources);
  c.done = std::move(done);
  NextSource(serial);
}

void BlockServer::NextSource(uint64_t serial) {
  auto it = copies_.find(serial);
  if (it == copies_.end()) return;
  Copy& c = it->second;
  if (c.begun) store_.AbortBlock(c.block);
  c.begun = false;
  c.header = false;
  c.received = 0;
  c.bytes = 0;
  Retire(std::move(c.link));
  if (c.next_source >= c.sources.size()) {
    std::string why = c.errors.empty() ? "no source given" : fmt::format("{}", c.errors.back());
    for (size_t i = 0; i + 1 < c.errors.size(); ++i) why = c.errors[i] + "; " + why;
    FinishCopy(serial, Unavailable(fmt::format("cannot copy block {}: {}", c.block, why)));
    return;
  }
  Endpoint from = c.sources[c.next_source++];
  Status s = store_.BeginBlock(c.block);
  if (!s.ok()) {
    FinishCopy(serial, s);
    return;
  }
  c.begun = true;
  PeerLink::Callbacks cb;
  cb.on_frame = [this, serial](net::Frame f) { OnCopyFrame(serial, std::move(f)); };
  cb.on_close = [this, serial, who = from.computer](const Status& why) {
    auto i = copies_.find(serial);
    if (i == copies_.end() || i->second.committing) return;
    i->second.errors.push_back(fmt::format("{}: {}", who, why.message()));
    NextSource(serial);
  };
  c.link = std::make_unique<PeerLink>(io_, from, secret_, "worker " + options_.computer, cb);
  c.link->Start();
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<proto::DfsMessage>().initReadBlock();
  r.setBlockId(c.block);
  r.setFirstChunk(0);
  r.setReader(options_.computer);
  c.link->Send(net::PayloadKind::kMessage, EncodeDfs(msg));
}

void BlockServer::OnCopyFrame(uint64_t serial, net::Frame frame) {
  auto it = copies_.find(serial);
  if (it == copies_.end()) return;
  Copy& c = it->second;
  std::string from = c.link ? c.link->to().computer : "?";
  Status s;
  if (frame.kind == net::PayloadKind::kRaw) {
    if (!c.header) {
      s = InvalidArgument("chunk before the read header");
    } else {
      uint64_t n = frame.payload.size() >= kChunkTrailer ? frame.payload.size() - kChunkTrailer : 0;
      s = store_.PutChunk(c.block, c.received, frame.payload);
      if (s.ok()) {
        ++c.received;
        c.bytes += n;
        if (c.received == c.chunks) {
          c.committing = true;
          s = store_.CommitBlock(c.block, c.bytes, c.chunks);
          c.committing = false;
          if (s.ok()) {
            c.begun = false;
            if (callbacks_.stored) callbacks_.stored(c.block, c.bytes);
            FinishCopy(serial, Status::Ok());
            return;
          }
        }
      }
    }
  } else {
    s = net::GuardRequest([&]() -> Status {
      COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
      auto root = reader->getRoot<proto::DfsMessage>();
      if (root.which() == proto::DfsMessage::ERROR) return StatusFromError(root.getError());
      if (root.which() != proto::DfsMessage::READ_HEADER || c.header)
        return InvalidArgument("unexpected message from the copy source");
      c.header = true;
      c.chunks = root.getReadHeader().getChunks();
      if (c.size && root.getReadHeader().getSize() != c.size) {
        return Corruption(fmt::format("source holds {} bytes of block {}, expected {}",
                                      root.getReadHeader().getSize(), c.block, c.size));
      }
      if (c.chunks == 0) {
        COPSE_RETURN_IF_ERROR(store_.CommitBlock(c.block, 0, 0));
        c.begun = false;
      }
      return Status::Ok();
    });
    if (s.ok() && c.header && c.chunks == 0 && !c.begun) {
      if (callbacks_.stored) callbacks_.stored(c.block, 0);
      FinishCopy(serial, Status::Ok());
      return;
    }
  }
  if (!s.ok()) {
    c.errors.push_back(fmt::format("{}: {}", from, s.message()));
    NextSource(serial);
  }
}

void BlockServer::FinishCopy(uint64_t serial, const Status& s) {
  auto it = copies_.find(serial);
  if (it == copies_.end()) return;
  Copy c = std::move(it->second);
  copies_.erase(it);
  if (c.begun) store_.AbortBlock(c.block);
  Retire(std::move(c.link));
  if (c.done) c.done(s);
}

}  // namespace copse::dfs

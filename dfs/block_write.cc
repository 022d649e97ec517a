#include "dfs/block_write.h"

#include <fmt/format.h>

#include "dfs/chunk.h"
#include "dfs/protocol.h"

namespace copse::dfs {

BlockWrite::BlockWrite(const BlockWriteOptions& options, BlockId id, std::string first,
                       std::unique_ptr<net::BlockingChannel> ch)
    : options_(options), id_(id), first_(std::move(first)), ch_(std::move(ch)) {}

Result<std::unique_ptr<BlockWrite>> BlockWrite::Start(const BlockWriteOptions& options,
                                                      const BlockAllocation& block) {
  const Endpoint& first = block.targets.front();
  auto ch = net::BlockingChannel::Connect(first.host, first.data_port, options.secret,
                                          options.peer_name, options.timeout);
  if (!ch.ok()) {
    return Status(ch.status().code(),
                  fmt::format("{} (data port of {})", ch.status().message(), first.computer));
  }
  std::unique_ptr<BlockWrite> w(new BlockWrite(options, block.id, first.computer, std::move(*ch)));
  capnp::MallocMessageBuilder msg;
  auto wb = msg.initRoot<proto::DfsMessage>().initWriteBlock();
  wb.setBlockId(block.id);
  wb.setNoSync(options.no_sync);
  auto pl = wb.initPipeline(static_cast<unsigned>(block.targets.size() - 1));
  for (unsigned i = 1; i < block.targets.size(); ++i) SetEndpoint(pl[i - 1], block.targets[i]);
  Status s = w->ch_->Send(net::Protocol::kDfs, net::PayloadKind::kMessage, EncodeDfs(msg),
                          options.timeout);
  if (!s.ok()) return w->Fail(s);
  return w;
}

Status BlockWrite::Fail(const Status& s) {
  ch_.reset();  // the worker drops what it had of the block
  failed_ = s.message().find(first_) == std::string::npos
                ? Status(s.code(), fmt::format("{}: {}", first_, s.message()))
                : s;
  return failed_;
}

Status BlockWrite::ReceiveReply() {
  auto f = ch_->Receive(options_.timeout);
  if (!f.ok()) return Fail(f.status());
  if (f->kind != net::PayloadKind::kMessage)
    return Fail(Internal("raw bytes in answer to a write"));
  Status s = OnDfsReply(f->payload, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() == proto::DfsMessage::CHUNK_ACK) {
      acked_ = std::max(acked_, root.getChunkAck().getChunks());
      return Status::Ok();
    }
    if (root.which() != proto::DfsMessage::WRITE_ACK) return Internal("unexpected write reply");
    CommitBlock cb{id_, root.getWriteAck().getSize(), {}};
    for (auto c : root.getWriteAck().getStored()) cb.replicas.push_back(c);
    done_ = std::move(cb);
    return Status::Ok();
  });
  return s.ok() ? s : Fail(s);
}

Status BlockWrite::SendChunk(std::vector<uint8_t> chunk) {
  if (!ch_) return failed_.ok() ? FailedPrecondition("the block write is over") : failed_;
  if (chunk.empty() || chunk.size() > kChunkSize || short_chunk_) {
    return Fail(Internal(fmt::format("block {}: a chunk of {} bytes{}", id_, chunk.size(),
                                     short_chunk_ ? " after a short one" : "")));
  }
  while (chunks_ - acked_ >= options_.window_chunks) COPSE_RETURN_IF_ERROR(ReceiveReply());
  size_t n = chunk.size();
  short_chunk_ = n < kChunkSize;
  FrameChunk(&chunk);
  Status s =
      ch_->Send(net::Protocol::kDfs, net::PayloadKind::kRaw, std::move(chunk), options_.timeout);
  if (!s.ok()) return Fail(s);
  bytes_ += n;
  ++chunks_;
  return Status::Ok();
}

Status BlockWrite::End() {
  if (!ch_) return failed_.ok() ? FailedPrecondition("the block write is over") : failed_;
  capnp::MallocMessageBuilder end;
  auto we = end.initRoot<proto::DfsMessage>().initWriteEnd();
  we.setSize(bytes_);
  we.setChunks(chunks_);
  Status s =
      ch_->Send(net::Protocol::kDfs, net::PayloadKind::kMessage, EncodeDfs(end), options_.timeout);
  return s.ok() ? s : Fail(s);
}

Result<CommitBlock> BlockWrite::Finish() {
  while (!done_) {
    if (!ch_) return failed_.ok() ? FailedPrecondition("the block write is over") : failed_;
    COPSE_RETURN_IF_ERROR(ReceiveReply());
  }
  ch_.reset();
  if (done_->size != bytes_) {
    return Fail(Internal(
        fmt::format("block {} committed with {} bytes, {} were sent", id_, done_->size, bytes_)));
  }
  return *done_;
}

}  // namespace copse::dfs

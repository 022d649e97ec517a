#include "dfs/client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "common/net/message.h"
#include "dfs/chunk.h"
#include "dfs/protocol.h"

namespace copse::dfs {
namespace {

using Sink = std::function<Status(std::span<const uint8_t>)>;

std::vector<uint8_t> Encode(capnp::MallocMessageBuilder& msg) { return EncodeDfs(msg); }

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

}  // namespace

struct DfsClient::Writing {
  FileId file = 0;
  std::string path;
  uint64_t block_size = 0;
  int partitions = 0;
  int partition = -1;  // the partition being written; -1: none
  std::vector<uint8_t> buffer;
  std::vector<CommitBlock> blocks;
  bool finished = false;
};

DfsClient::DfsClient(const ClusterConfig& config, std::string secret, DfsClientOptions options,
                     std::unique_ptr<net::BlockingChannel> master)
    : config_(config),
      secret_(std::move(secret)),
      options_(std::move(options)),
      master_(std::move(master)) {}

DfsClient::~DfsClient() {
  if (writing_ && !writing_->finished) (void)Abandon();
}

Result<std::unique_ptr<DfsClient>> DfsClient::Connect(const ClusterConfig& config,
                                                      const std::string& secret,
                                                      DfsClientOptions options) {
  if (!options.computer.empty() && !config.FindComputer(options.computer)) {
    return InvalidArgument(
        fmt::format("computer '{}' is not in {}", options.computer, config.source.string()));
  }
  std::string name = options.computer.empty() ? "dfs client" : "dfs client on " + options.computer;
  COPSE_ASSIGN_OR_RETURN(
      auto ch, net::BlockingChannel::Connect(config.master.host, config.master.port, secret, name,
                                             options.timeout));
  return std::unique_ptr<DfsClient>(new DfsClient(config, secret, options, std::move(ch)));
}

Result<std::vector<uint8_t>> DfsClient::Call(std::vector<uint8_t> request) {
  COPSE_RETURN_IF_ERROR(master_->Send(net::Protocol::kDfs, net::PayloadKind::kMessage,
                                      std::move(request), options_.timeout));
  COPSE_ASSIGN_OR_RETURN(net::Frame f, master_->Receive(options_.timeout));
  if (f.protocol != net::Protocol::kDfs || f.kind != net::PayloadKind::kMessage)
    return Internal("the master answered a DFS request with something else");
  return std::move(f.payload);
}

// Decodes a reply payload and runs `fn` on its root, turning an Error reply
// into its Status.
template <typename Fn>
static Status OnReply(const std::vector<uint8_t>& payload, Fn&& fn) {
  net::Frame f{net::Protocol::kDfs, net::PayloadKind::kMessage, payload};
  return net::CatchDecodeErrors([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(f));
    auto root = reader->getRoot<proto::DfsMessage>();
    if (root.which() == proto::DfsMessage::ERROR) return StatusFromError(root.getError());
    return fn(root);
  });
}

// ---- writing -----------------------------------------------------------------------

Status DfsClient::Create(const std::string& path, const CreateOptions& o) {
  if (writing_ && !writing_->finished)
    return FailedPrecondition(fmt::format("{} is still being written", writing_->path));
  capnp::MallocMessageBuilder msg;
  auto c = msg.initRoot<proto::DfsMessage>().initCreateFile();
  c.setPath(path);
  c.setPartitions(static_cast<uint32_t>(std::max(o.partitions, 0)));
  c.setReplication(static_cast<uint32_t>(std::max(o.replication, 0)));
  SetPlacement(c.initPlacement(), o.placement);
  c.setWriter(options_.computer);
  c.setScratchJob(o.scratch_job);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(Encode(msg)));
  auto w = std::make_unique<Writing>();
  w->path = path;
  w->partitions = o.partitions;
  COPSE_RETURN_IF_ERROR(OnReply(reply, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() != proto::DfsMessage::CREATE_FILE_REPLY)
      return Internal("unexpected reply to CreateFile");
    w->file = root.getCreateFileReply().getFileId();
    w->block_size = root.getCreateFileReply().getBlockSize();
    return Status::Ok();
  }));
  if (w->block_size == 0 || w->block_size % kChunkSize != 0)
    w->block_size = static_cast<uint64_t>(config_.block_size_bytes);
  writing_ = std::move(w);
  return Status::Ok();
}

Status DfsClient::BeginPartition(int partition) {
  if (!writing_ || writing_->finished) return FailedPrecondition("no file is being written");
  if (writing_->partition >= 0)
    return FailedPrecondition(fmt::format("partition {} is still open", writing_->partition));
  if (partition < 0 || partition >= writing_->partitions) {
    return InvalidArgument(fmt::format("{} has partitions 0..{}, not {}", writing_->path,
                                       writing_->partitions - 1, partition));
  }
  writing_->partition = partition;
  writing_->buffer.clear();
  writing_->blocks.clear();
  pending_.clear();
  return Status::Ok();
}

Status DfsClient::Append(std::span<const uint8_t> bytes) {
  if (!writing_ || writing_->partition < 0) return FailedPrecondition("no partition is open");
  Writing& w = *writing_;
  while (!bytes.empty()) {
    size_t room = static_cast<size_t>(w.block_size) - w.buffer.size();
    size_t take = std::min(room, bytes.size());
    w.buffer.insert(w.buffer.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(take));
    bytes = bytes.subspan(take);
    if (w.buffer.size() == w.block_size) COPSE_RETURN_IF_ERROR(FlushBlock());
  }
  return Status::Ok();
}

Result<bool> DfsClient::EndPartition() {
  if (!writing_ || writing_->partition < 0) return FailedPrecondition("no partition is open");
  Writing& w = *writing_;
  if (!w.buffer.empty()) COPSE_RETURN_IF_ERROR(FlushBlock());
  COPSE_RETURN_IF_ERROR(FinishAllBlocks());
  capnp::MallocMessageBuilder msg;
  auto c = msg.initRoot<proto::DfsMessage>().initCommitPartition();
  c.setFileId(w.file);
  c.setPartition(static_cast<uint32_t>(w.partition));
  auto list = c.initBlocks(static_cast<unsigned>(w.blocks.size()));
  for (unsigned i = 0; i < w.blocks.size(); ++i) {
    list[i].setBlockId(w.blocks[i].id);
    list[i].setSize(w.blocks[i].size);
    auto reps = list[i].initReplicas(static_cast<unsigned>(w.blocks[i].replicas.size()));
    for (unsigned j = 0; j < w.blocks[i].replicas.size(); ++j) reps.set(j, w.blocks[i].replicas[j]);
  }
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(Encode(msg)));
  bool visible = false;
  COPSE_RETURN_IF_ERROR(OnReply(reply, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() != proto::DfsMessage::COMMIT_PARTITION_REPLY)
      return Internal("unexpected reply to CommitPartition");
    visible = root.getCommitPartitionReply().getFileVisible();
    return Status::Ok();
  }));
  w.partition = -1;
  w.blocks.clear();
  if (visible) w.finished = true;
  return visible;
}

Status DfsClient::Abandon() {
  if (!writing_ || writing_->finished) return Status::Ok();
  writing_->finished = true;
  pending_.clear();
  capnp::MallocMessageBuilder msg;
  msg.initRoot<proto::DfsMessage>().initAbandonFile().setFileId(writing_->file);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(Encode(msg)));
  return OnReply(reply, [](proto::DfsMessage::Reader) { return Status::Ok(); });
}

// One block on its way: its bytes (kept until the replicas acknowledge it, so
// that it can be written again to another pipeline) and its connection.
struct DfsClient::PendingBlock {
  std::vector<uint8_t> data;
  BlockId id = 0;
  std::vector<Endpoint> targets;
  std::unique_ptr<net::BlockingChannel> ch;
  uint32_t acked = 0;
  Status sent;  // how sending went
  std::optional<CommitBlock> done;
};

Result<std::pair<BlockId, std::vector<Endpoint>>> DfsClient::AllocateBlock(
    const std::vector<std::string>& exclude) {
  Writing& w = *writing_;
  capnp::MallocMessageBuilder msg;
  auto a = msg.initRoot<proto::DfsMessage>().initAllocateBlock();
  a.setFileId(w.file);
  a.setPartition(static_cast<uint32_t>(w.partition));
  auto ex = a.initExclude(static_cast<unsigned>(exclude.size()));
  for (unsigned i = 0; i < exclude.size(); ++i) ex.set(i, exclude[i]);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(Encode(msg)));
  BlockId id = 0;
  std::vector<Endpoint> targets;
  COPSE_RETURN_IF_ERROR(OnReply(reply, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() != proto::DfsMessage::ALLOCATE_BLOCK_REPLY)
      return Internal("unexpected reply to AllocateBlock");
    id = root.getAllocateBlockReply().getBlockId();
    for (auto t : root.getAllocateBlockReply().getTargets()) targets.push_back(ReadEndpoint(t));
    return Status::Ok();
  }));
  if (targets.empty()) return Internal("the master allocated a block without replicas");
  return std::make_pair(id, std::move(targets));
}

Status DfsClient::FlushBlock() {
  Writing& w = *writing_;
  auto p = std::make_unique<PendingBlock>();
  p->data.swap(w.buffer);
  if (!spare_.empty()) {
    w.buffer.swap(spare_.back());  // a finished block's buffer, already faulted in
    spare_.pop_back();
  }
  w.buffer.clear();
  auto allocated = AllocateBlock({});
  if (!allocated.ok()) return allocated.status();
  p->id = allocated->first;
  p->targets = std::move(allocated->second);
  p->sent = SendBlock(*p);
  pending_.push_back(std::move(p));
  // The next block streams while this one commits on its replicas.
  while (pending_.size() >= static_cast<size_t>(std::max(options_.blocks_in_flight, 1)))
    COPSE_RETURN_IF_ERROR(FinishOldestBlock());
  return Status::Ok();
}

Status DfsClient::FinishOldestBlock() {
  Writing& w = *writing_;
  std::unique_ptr<PendingBlock> p = std::move(pending_.front());
  pending_.pop_front();
  Status s = p->sent.ok() ? AwaitBlock(*p) : p->sent;
  std::vector<std::string> exclude;
  std::vector<std::string> errors;
  for (int attempt = 1; !s.ok(); ++attempt) {
    errors.push_back(s.message());
    if (attempt >= options_.write_attempts) {
      if (s.code() == StatusCode::kResourceExhausted) return s;
      return Unavailable(fmt::format("cannot write a block of {} partition {}: {}", w.path,
                                     w.partition, fmt::join(errors, "; ")));
    }
    // Write it again, to a pipeline without the first replica that failed.
    exclude.push_back(p->targets.front().computer);
    auto allocated = AllocateBlock(exclude);
    if (!allocated.ok()) {
      return Status(
          allocated.status().code(),
          fmt::format("{} (after: {})", allocated.status().message(), fmt::join(errors, "; ")));
    }
    p->id = allocated->first;
    p->targets = std::move(allocated->second);
    p->acked = 0;
    p->done.reset();
    s = SendBlock(*p);
    if (s.ok()) s = AwaitBlock(*p);
  }
  w.blocks.push_back(std::move(*p->done));
  p->data.clear();
  if (spare_.empty()) spare_.push_back(std::move(p->data));
  return Status::Ok();
}

Status DfsClient::FinishAllBlocks() {
  while (!pending_.empty()) COPSE_RETURN_IF_ERROR(FinishOldestBlock());
  return Status::Ok();
}

Status DfsClient::BlockFailed(PendingBlock& p, const Status& s) {
  p.ch.reset();  // a failed write closes its connection
  const std::string& first = p.targets.front().computer;
  return s.message().find(first) == std::string::npos
             ? Status(s.code(), fmt::format("{}: {}", first, s.message()))
             : s;
}

Status DfsClient::HandleWriteReply(PendingBlock& p, const net::Frame& f) {
  if (f.kind != net::PayloadKind::kMessage) return Internal("raw bytes in answer to a write");
  return OnReply(f.payload, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() == proto::DfsMessage::CHUNK_ACK) {
      p.acked = std::max(p.acked, root.getChunkAck().getChunks());
      return Status::Ok();
    }
    if (root.which() != proto::DfsMessage::WRITE_ACK) return Internal("unexpected write reply");
    CommitBlock cb{p.id, root.getWriteAck().getSize(), {}};
    for (auto c : root.getWriteAck().getStored()) cb.replicas.push_back(c);
    p.done = std::move(cb);
    return Status::Ok();
  });
}

Status DfsClient::SendBlock(PendingBlock& p) {
  const Endpoint& first = p.targets.front();
  std::string name =
      options_.computer.empty() ? "dfs client" : "dfs client on " + options_.computer;
  auto ch =
      net::BlockingChannel::Connect(first.host, first.data_port, secret_, name, options_.timeout);
  if (!ch.ok()) {
    return BlockFailed(
        p, Status(ch.status().code(),
                  fmt::format("{} (data port of {})", ch.status().message(), first.computer)));
  }
  p.ch = std::move(*ch);
  {
    capnp::MallocMessageBuilder msg;
    auto wb = msg.initRoot<proto::DfsMessage>().initWriteBlock();
    wb.setBlockId(p.id);
    auto pl = wb.initPipeline(static_cast<unsigned>(p.targets.size() - 1));
    for (unsigned i = 1; i < p.targets.size(); ++i) SetEndpoint(pl[i - 1], p.targets[i]);
    Status s =
        p.ch->Send(net::Protocol::kDfs, net::PayloadKind::kMessage, Encode(msg), options_.timeout);
    if (!s.ok()) return BlockFailed(p, s);
  }
  uint32_t chunks = ChunkCount(p.data.size());
  for (uint32_t i = 0; i < chunks; ++i) {
    size_t begin = static_cast<size_t>(i) * kChunkSize;
    size_t end = std::min(p.data.size(), begin + kChunkSize);
    std::vector<uint8_t> framed;
    framed.reserve(end - begin + kChunkTrailer);
    framed.assign(p.data.begin() + static_cast<ptrdiff_t>(begin),
                  p.data.begin() + static_cast<ptrdiff_t>(end));
    FrameChunk(&framed);
    Status s = p.ch->Send(net::Protocol::kDfs, net::PayloadKind::kRaw, std::move(framed),
                          options_.timeout);
    if (!s.ok()) return BlockFailed(p, s);
    while (i + 1 - p.acked >= options_.write_window_chunks) {
      auto f = p.ch->Receive(options_.timeout);
      if (!f.ok()) return BlockFailed(p, f.status());
      s = HandleWriteReply(p, *f);
      if (!s.ok()) return BlockFailed(p, s);
    }
  }
  capnp::MallocMessageBuilder end;
  auto we = end.initRoot<proto::DfsMessage>().initWriteEnd();
  we.setSize(p.data.size());
  we.setChunks(chunks);
  Status s =
      p.ch->Send(net::Protocol::kDfs, net::PayloadKind::kMessage, Encode(end), options_.timeout);
  if (!s.ok()) return BlockFailed(p, s);
  return Status::Ok();
}

Status DfsClient::AwaitBlock(PendingBlock& p) {
  while (!p.done) {
    auto f = p.ch->Receive(options_.timeout);
    if (!f.ok()) return BlockFailed(p, f.status());
    Status s = HandleWriteReply(p, *f);
    if (!s.ok()) return BlockFailed(p, s);
  }
  p.ch.reset();
  if (p.done->size != p.data.size()) {
    return BlockFailed(p, Internal(fmt::format("block {} committed with {} bytes, {} were sent",
                                               p.id, p.done->size, p.data.size())));
  }
  return Status::Ok();
}

// ---- reading -----------------------------------------------------------------------

Result<FileStatus> DfsClient::Stat(const std::string& path) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<proto::DfsMessage>().initStatFile().setPath(path);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(Encode(msg)));
  FileStatus out;
  COPSE_RETURN_IF_ERROR(OnReply(reply, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() != proto::DfsMessage::FILE_INFO) return Internal("unexpected reply to Stat");
    out = ReadFileStatus(root.getFileInfo());
    return Status::Ok();
  }));
  return out;
}

Result<net::BlockingChannel*> DfsClient::DataChannel(const Endpoint& e) {
  auto it = data_.find(e.computer);
  if (it != data_.end()) return it->second.get();
  std::string name =
      options_.computer.empty() ? "dfs client" : "dfs client on " + options_.computer;
  auto ch = net::BlockingChannel::Connect(e.host, e.data_port, secret_, name, options_.timeout);
  if (!ch.ok()) {
    return Status(ch.status().code(),
                  fmt::format("{} (data port of {})", ch.status().message(), e.computer));
  }
  net::BlockingChannel* raw = ch->get();
  data_[e.computer] = std::move(*ch);
  return raw;
}

void DfsClient::DropDataChannel(const std::string& computer) { data_.erase(computer); }

uint64_t* DfsClient::CounterFor(const Endpoint& e) {
  if (!options_.computer.empty() && e.computer == options_.computer) return &counters_.local;
  const ComputerConfig* self =
      options_.computer.empty() ? nullptr : config_.FindComputer(options_.computer);
  if (self && self->rack == e.rack) return &counters_.rack;
  return &counters_.core;
}

Status DfsClient::ReadBlockFrom(const Endpoint& e, const BlockLocation& b, uint32_t* next_chunk,
                                const Sink& sink) {
  COPSE_ASSIGN_OR_RETURN(net::BlockingChannel * ch, DataChannel(e));
  auto fail = [&](const Status& s) {
    DropDataChannel(e.computer);
    return s;
  };
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<proto::DfsMessage>().initReadBlock();
  r.setBlockId(b.id);
  r.setFirstChunk(*next_chunk);
  Status s =
      ch->Send(net::Protocol::kDfs, net::PayloadKind::kMessage, Encode(msg), options_.timeout);
  if (!s.ok()) return fail(s);
  auto hf = ch->Receive(options_.timeout);
  if (!hf.ok()) return fail(hf.status());
  uint32_t chunks = 0;
  s = OnReply(hf->payload, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() != proto::DfsMessage::READ_HEADER) return Internal("unexpected read reply");
    chunks = root.getReadHeader().getChunks();
    if (root.getReadHeader().getSize() != b.size) {
      return Corruption(fmt::format("{} holds {} bytes of block {}, the name service says {}",
                                    e.computer, root.getReadHeader().getSize(), b.id, b.size));
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;  // the connection stays usable after an Error reply
  uint64_t* counter = CounterFor(e);
  while (*next_chunk < chunks) {
    auto f = ch->Receive(options_.timeout);
    if (!f.ok()) return fail(f.status());
    if (f->kind == net::PayloadKind::kMessage) {
      // An Error in place of a chunk ends this transfer (a checksum mismatch).
      Status err = OnReply(f->payload, [](proto::DfsMessage::Reader) {
        return Internal("unexpected message in a block read");
      });
      return err;
    }
    std::span<const uint8_t> framed(f->payload);
    s = VerifyFramedChunk(
        framed, fmt::format("chunk {} of block {} from {}", *next_chunk, b.id, e.computer));
    if (!s.ok()) return fail(s);
    auto bytes = framed.first(framed.size() - kChunkTrailer);
    *counter += bytes.size();
    ++*next_chunk;
    s = sink(bytes);
    if (!s.ok()) return fail(s);
  }
  return Status::Ok();
}

Status DfsClient::ReadBlockLocally(const BlockLocation& b, uint32_t* next_chunk, const Sink& sink,
                                   bool* sink_failed) {
  *sink_failed = false;
  if (!local_) {
    const ComputerConfig* self = config_.FindComputer(options_.computer);
    if (!self) return FailedPrecondition("no computer of this client");
    auto ch =
        LocalReadChannel::Connect(LocalReadSocketPath(self->data_dir), secret_, options_.timeout);
    if (!ch.ok()) {
      local_refused_ = true;
      spdlog::debug("no local reads on {}: {}", options_.computer, ch.status().ToString());
      return ch.status();
    }
    local_ = std::move(*ch);
  }
  auto opened = local_->Open(b.id, *next_chunk);
  if (!opened.ok()) {
    // An error the worker answered keeps the connection usable; anything else
    // (a broken connection, a reply that does not add up) drops it.
    StatusCode c = opened.status().code();
    if (c == StatusCode::kIoError || c == StatusCode::kDisconnected ||
        c == StatusCode::kDeadlineExceeded)
      local_.reset();
    return opened.status();
  }
  if (opened->size != b.size) {
    return Corruption(fmt::format("{} holds {} bytes of block {}, the name service says {}",
                                  options_.computer, opened->size, b.id, b.size));
  }
  for (size_t i = 0; i < opened->chunk_at.size(); ++i) {
    auto bytes = LocalReadChannel::ReadChunk(*opened, i, b.id, &local_buf_);
    if (!bytes.ok()) return bytes.status();
    counters_.local += bytes->size();
    local_path_bytes_ += bytes->size();
    ++*next_chunk;
    Status s = sink(*bytes);
    if (!s.ok()) {
      *sink_failed = true;
      return s;
    }
  }
  return Status::Ok();
}

Status DfsClient::ReadPartition(const FileStatus& file, int partition, const Sink& sink) {
  if (partition < 0 || partition >= static_cast<int>(file.partitions.size())) {
    return InvalidArgument(fmt::format("{} has {} partition(s); there is no partition {}",
                                       file.path, file.partitions.size(), partition));
  }
  const PartitionLocation& p = file.partitions[static_cast<size_t>(partition)];
  if (!p.committed)
    return NotFound(fmt::format("partition {} of {} is not committed", partition, file.path));
  const ComputerConfig* self =
      options_.computer.empty() ? nullptr : config_.FindComputer(options_.computer);
  for (const BlockLocation& b : p.blocks) {
    std::vector<ReplicaLocation> order = b.replicas;
    auto rank = [&](const ReplicaLocation& r) {
      int level = 2;
      if (!options_.computer.empty() && r.where.computer == options_.computer)
        level = 0;
      else if (self && r.where.rack == self->rack)
        level = 1;
      return (r.live ? 0 : 10) + level;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](const auto& x, const auto& y) { return rank(x) < rank(y); });
    uint32_t next = 0;
    std::vector<std::string> errors;
    bool ok = false;
    bool any_live = false;
    for (const ReplicaLocation& r : order) {
      if (!r.live) continue;
      any_live = true;
      if (options_.local_reads && !local_refused_ && !options_.computer.empty() &&
          r.where.computer == options_.computer) {
        bool sink_failed = false;
        Status ls = ReadBlockLocally(b, &next, sink, &sink_failed);
        if (ls.ok()) {
          ok = true;
          break;
        }
        if (sink_failed) return ls;
        // The rest of the block comes through the data port of the same
        // replica, where the worker checks the stored chunks itself.
        spdlog::debug("local read of block {} stopped at chunk {}: {}", b.id, next, ls.ToString());
      }
      Status s = ReadBlockFrom(r.where, b, &next, sink);
      if (s.ok()) {
        ok = true;
        break;
      }
      if (s.code() == StatusCode::kCorruption) {
        // The worker deletes a bad copy and tells the master; a copy that
        // went bad on the way is reported here.
        capnp::MallocMessageBuilder msg;
        auto rb = msg.initRoot<proto::DfsMessage>().initReportBadReplica();
        rb.setBlockId(b.id);
        rb.setComputer(r.where.computer);
        rb.setReason(s.message());
        auto reply = Call(Encode(msg));
        (void)reply;
      }
      errors.push_back(fmt::format("{}: {}", r.where.computer, s.message()));
    }
    if (ok) continue;
    if (!any_live && !file.scratch_job.empty()) {
      std::vector<std::string> where;
      for (const ReplicaLocation& r : b.replicas) where.push_back(r.where.computer);
      return DataLoss(fmt::format(
          "replica lost: partition {} of {} (block {}) was only on computer {}", partition,
          file.path, b.id,
          where.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(where, ","))));
    }
    if (!any_live) {
      std::vector<std::string> where;
      for (const ReplicaLocation& r : b.replicas) where.push_back(r.where.computer);
      return Unavailable(fmt::format(
          "no live replica of block {} (partition {} of {}); its replicas were on {}", b.id,
          partition, file.path,
          where.empty() ? std::string("no computer") : fmt::format("{}", fmt::join(where, ", "))));
    }
    return Unavailable(fmt::format("cannot read block {} (partition {} of {}): {}", b.id, partition,
                                   file.path, fmt::join(errors, "; ")));
  }
  return Status::Ok();
}

// ---- names -------------------------------------------------------------------------

Result<std::vector<ListEntry>> DfsClient::List(const std::string& path) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<proto::DfsMessage>().initListFiles().setPath(path);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(Encode(msg)));
  std::vector<ListEntry> out;
  COPSE_RETURN_IF_ERROR(OnReply(reply, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() != proto::DfsMessage::LIST_FILES_REPLY)
      return Internal("unexpected reply to ListFiles");
    for (auto e : root.getListFilesReply().getEntries()) {
      out.push_back({e.getPath(), e.getIsDir(), e.getSize(), static_cast<int>(e.getPartitions()),
                     static_cast<int>(e.getReplication()), e.getScratchJob()});
    }
    return Status::Ok();
  }));
  return out;
}

Status DfsClient::Delete(const std::string& path) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<proto::DfsMessage>().initDeleteFile().setPath(path);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(Encode(msg)));
  return OnReply(reply, [](proto::DfsMessage::Reader) { return Status::Ok(); });
}

Result<int> DfsClient::DeleteJobScratch(const std::string& job) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<proto::DfsMessage>().initDeleteJobScratch().setJob(job);
  COPSE_ASSIGN_OR_RETURN(auto reply, Call(Encode(msg)));
  int n = 0;
  COPSE_RETURN_IF_ERROR(OnReply(reply, [&](proto::DfsMessage::Reader root) -> Status {
    if (root.which() == proto::DfsMessage::DELETE_REPLY)
      n = static_cast<int>(root.getDeleteReply().getFilesDeleted());
    return Status::Ok();
  }));
  return n;
}

}  // namespace copse::dfs

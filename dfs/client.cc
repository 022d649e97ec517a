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

}  // namespace

struct DfsClient::Writing {
  FileId file = 0;
  std::string path;
  uint64_t block_size = 0;
  int partitions = 0;
  int partition = -1;    // the partition being written; -1: none
  bool no_sync = false;  // a scratch file
  bool output = false;   // one partition of a job's output file
  std::vector<uint8_t> buffer;
  std::vector<CommitBlock> blocks;
  bool finished = false;
};

DfsClient::DfsClient(const ClusterConfig& config, std::string secret, DfsClientOptions options,
                     std::unique_ptr<net::RedialingChannel> master)
    : config_(config),
      secret_(std::move(secret)),
      options_(std::move(options)),
      names_(std::make_unique<NameClient>(std::move(master), options_.computer,
                                          RunId{options_.task_id, options_.attempt})) {}

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
      auto ch, net::RedialingChannel::Connect(
                   [&config, secret, name, timeout = options.timeout](const net::ConnectRetry& r) {
                     return net::BlockingChannel::Connect(config.master.host, config.master.port,
                                                          secret, name, timeout, r);
                   },
                   options.connect_retry, options.timeout));
  return std::unique_ptr<DfsClient>(new DfsClient(config, secret, options, std::move(ch)));
}

BlockWriteOptions DfsClient::block_write_options() const {
  BlockWriteOptions o;
  o.secret = secret_;
  o.peer_name = options_.computer.empty() ? "dfs client" : "dfs client on " + options_.computer;
  o.timeout = options_.timeout;
  o.window_chunks = std::max<uint32_t>(options_.write_window_chunks, 1);
  return o;
}

// ---- writing -----------------------------------------------------------------------

Status DfsClient::Create(const std::string& path, const CreateOptions& o) {
  if (writing_ && !writing_->finished)
    return FailedPrecondition(fmt::format("{} is still being written", writing_->path));
  COPSE_ASSIGN_OR_RETURN(CreatedFile created, names_->Create(path, o));
  // A job's output file is the job's: vertex runs write its partitions.
  if (!o.output_job.empty()) return Status::Ok();
  auto w = std::make_unique<Writing>();
  w->path = path;
  w->partitions = o.partitions;
  w->file = created.id;
  w->block_size = created.block_size;
  w->no_sync = created.scratch;
  if (w->block_size == 0 || w->block_size % kChunkSize != 0)
    w->block_size = static_cast<uint64_t>(config_.block_size_bytes);
  writing_ = std::move(w);
  return Status::Ok();
}

Status DfsClient::OpenOutputPartition(const std::string& path, int partition) {
  if (writing_ && !writing_->finished)
    return FailedPrecondition(fmt::format("{} is still being written", writing_->path));
  COPSE_ASSIGN_OR_RETURN(OutputFileInfo out, names_->OpenOutput(path));
  auto w = std::make_unique<Writing>();
  w->path = path;
  w->partitions = out.partitions;
  w->file = out.id;
  w->block_size = out.block_size;
  w->output = true;
  if (w->block_size == 0 || w->block_size % kChunkSize != 0)
    w->block_size = static_cast<uint64_t>(config_.block_size_bytes);
  writing_ = std::move(w);
  Status s = BeginPartition(partition);
  if (!s.ok()) writing_->finished = true;
  return s;
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
  auto visible = names_->CommitPartitions(w.file, {PartitionCommit{w.partition, w.blocks}});
  if (!visible.ok()) {
    // Another run won this output partition: nothing is left to write.
    if (w.output && visible.status().code() == StatusCode::kAlreadyExists) w.finished = true;
    return visible.status();
  }
  w.partition = -1;
  w.blocks.clear();
  if (*visible || w.output) w.finished = true;
  return *visible;
}

Status DfsClient::Abandon() {
  if (!writing_ || writing_->finished) return Status::Ok();
  writing_->finished = true;
  pending_.clear();
  // A job's output file is the job's: this run's blocks of it are dropped by
  // the master when the run ends, or with the job's outputs.
  if (writing_->output) return Status::Ok();
  return names_->Abandon(writing_->file);
}

// One block on its way: its bytes (kept until the replicas acknowledge it, so
// that it can be written again to another pipeline) and its write.
struct DfsClient::PendingBlock {
  std::vector<uint8_t> data;
  BlockAllocation block;
  std::unique_ptr<BlockWrite> write;
  Status sent;  // how sending went
  std::optional<CommitBlock> done;
};

Status DfsClient::FlushBlock() {
  Writing& w = *writing_;
  auto p = std::make_unique<PendingBlock>();
  p->data.swap(w.buffer);
  if (!spare_.empty()) {
    w.buffer.swap(spare_.back());  // a finished block's buffer, already faulted in
    spare_.pop_back();
  }
  w.buffer.clear();
  auto allocated = names_->AllocateBlock(w.file, w.partition, {});
  if (!allocated.ok()) return allocated.status();
  p->block = std::move(*allocated);
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
    exclude.push_back(p->block.targets.front().computer);
    auto allocated = names_->AllocateBlock(w.file, w.partition, exclude);
    if (!allocated.ok()) {
      return Status(
          allocated.status().code(),
          fmt::format("{} (after: {})", allocated.status().message(), fmt::join(errors, "; ")));
    }
    p->block = std::move(*allocated);
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

Status DfsClient::SendBlock(PendingBlock& p) {
  BlockWriteOptions o = block_write_options();
  o.no_sync = writing_->no_sync;
  COPSE_ASSIGN_OR_RETURN(p.write, BlockWrite::Start(o, p.block));
  for (size_t begin = 0; begin < p.data.size(); begin += kChunkSize) {
    size_t end = std::min(p.data.size(), begin + kChunkSize);
    std::vector<uint8_t> chunk;
    chunk.reserve(end - begin + kChunkTrailer);
    chunk.assign(p.data.begin() + static_cast<ptrdiff_t>(begin),
                 p.data.begin() + static_cast<ptrdiff_t>(end));
    COPSE_RETURN_IF_ERROR(p.write->SendChunk(std::move(chunk)));
  }
  return p.write->End();
}

Status DfsClient::AwaitBlock(PendingBlock& p) {
  auto done = p.write->Finish();
  p.write.reset();
  if (!done.ok()) return done.status();
  p.done = std::move(*done);
  return Status::Ok();
}

// ---- reading -----------------------------------------------------------------------

Result<FileStatus> DfsClient::Stat(const std::string& path, int partition) {
  return names_->Stat(path, partition);
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
                                const Sink& sink, bool* sink_failed) {
  *sink_failed = false;
  COPSE_ASSIGN_OR_RETURN(net::BlockingChannel * ch, DataChannel(e));
  auto fail = [&](const Status& s) {
    DropDataChannel(e.computer);
    return s;
  };
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<proto::DfsMessage>().initReadBlock();
  r.setBlockId(b.id);
  r.setFirstChunk(*next_chunk);
  r.setReader(options_.computer);
  Status s =
      ch->Send(net::Protocol::kDfs, net::PayloadKind::kMessage, EncodeDfs(msg), options_.timeout);
  if (!s.ok()) return fail(s);
  auto hf = ch->Receive(options_.timeout);
  if (!hf.ok()) return fail(hf.status());
  uint32_t chunks = 0;
  s = OnDfsReply(hf->payload, [&](proto::DfsMessage::Reader root) -> Status {
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
      Status err = OnDfsReply(f->payload, [](proto::DfsMessage::Reader) {
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
    if (!s.ok()) {
      // The reader stopped: the rest of this block's chunks are still on
      // their way, so the connection cannot be reused.
      *sink_failed = true;
      return fail(s);
    }
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
      bool sink_failed = false;
      Status s = ReadBlockFrom(r.where, b, &next, sink, &sink_failed);
      if (s.ok()) {
        ok = true;
        break;
      }
      if (sink_failed) return s;  // the reader's own error ends the read, on any replica
      if (s.code() == StatusCode::kCorruption) {
        // The worker deletes a bad copy and tells the master; a copy that
        // went bad on the way is reported here.
        (void)names_->ReportBadReplica(b.id, r.where.computer, s.message());
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
  return names_->List(path);
}

Status DfsClient::Delete(const std::string& path) { return names_->Delete(path); }

Result<int> DfsClient::DeleteJobScratch(const std::string& job) {
  return names_->DeleteJobScratch(job);
}

}  // namespace copse::dfs

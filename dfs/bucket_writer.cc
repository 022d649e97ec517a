#include "dfs/bucket_writer.h"

#include <fmt/format.h>

#include <algorithm>

#include "dfs/chunk.h"

namespace copse::dfs {

Result<std::unique_ptr<BucketWriter>> BucketWriter::Open(DfsClient& client, const std::string& path,
                                                         int buckets,
                                                         const std::string& scratch_job) {
  if (scratch_job.empty())
    return InvalidArgument(fmt::format("bucket file {} needs the job it is scratch data of", path));
  if (client.options().computer.empty()) {
    return InvalidArgument(fmt::format(
        "bucket file {} is kept on its writer's computer, but the client names none", path));
  }
  CreateOptions o;
  o.partitions = buckets;
  o.scratch_job = scratch_job;
  COPSE_ASSIGN_OR_RETURN(CreatedFile created, client.names().Create(path, o));
  uint64_t block_size = created.block_size;
  if (block_size == 0 || block_size % kChunkSize != 0)
    return Internal(fmt::format("the master gave {} a block size of {} bytes", path, block_size));
  BlockWriteOptions options = client.block_write_options();
  options.no_sync = created.scratch;
  return std::unique_ptr<BucketWriter>(
      new BucketWriter(client, path, created.id, block_size, options, buckets));
}

BucketWriter::BucketWriter(DfsClient& client, std::string path, FileId file, uint64_t block_size,
                           BlockWriteOptions options, int buckets)
    : client_(client),
      path_(std::move(path)),
      file_(file),
      block_size_(block_size),
      options_(std::move(options)),
      buckets_(static_cast<size_t>(buckets)) {}

BucketWriter::~BucketWriter() {
  if (!done_) (void)Abandon();
}

Status BucketWriter::Fail(int bucket, const Status& s) {
  if (failed_.ok())
    failed_ = Status(s.code(), fmt::format("bucket {} of {}: {}", bucket, path_, s.message()));
  return failed_;
}

Status BucketWriter::Append(int bucket, std::span<const uint8_t> bytes) {
  if (done_) return FailedPrecondition(fmt::format("bucket file {} is closed", path_));
  if (!failed_.ok()) return failed_;
  if (bucket < 0 || bucket >= buckets()) {
    return InvalidArgument(
        fmt::format("{} has buckets 0..{}, not {}", path_, buckets() - 1, bucket));
  }
  Bucket& b = buckets_[static_cast<size_t>(bucket)];
  while (!bytes.empty()) {
    if (b.chunk.capacity() < kChunkSize + kChunkTrailer)
      b.chunk.reserve(kChunkSize + kChunkTrailer);
    size_t take = std::min(kChunkSize - b.chunk.size(), bytes.size());
    b.chunk.insert(b.chunk.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(take));
    bytes = bytes.subspan(take);
    b.size += take;
    if (b.chunk.size() == kChunkSize) COPSE_RETURN_IF_ERROR(SendChunk(bucket));
  }
  return Status::Ok();
}

Status BucketWriter::SendChunk(int bucket) {
  Bucket& b = buckets_[static_cast<size_t>(bucket)];
  if (!b.write) {
    auto allocated = client_.names().AllocateBlock(file_, bucket, {});
    if (!allocated.ok()) return Fail(bucket, allocated.status());
    auto write = BlockWrite::Start(options_, *allocated);
    if (!write.ok()) return Fail(bucket, write.status());
    b.write = std::move(*write);
  }
  // The chunk's buffer travels with the frame; the bucket's next one is new.
  std::vector<uint8_t> chunk;
  chunk.swap(b.chunk);
  Status s = b.write->SendChunk(std::move(chunk));
  if (!s.ok()) return Fail(bucket, s);
  if (b.write->bytes() >= block_size_) return FinishBlock(bucket, /*ended=*/false);
  return Status::Ok();
}

Status BucketWriter::FinishBlock(int bucket, bool ended) {
  Bucket& b = buckets_[static_cast<size_t>(bucket)];
  Status s = ended ? Status::Ok() : b.write->End();
  Result<CommitBlock> done = s.ok() ? b.write->Finish() : Result<CommitBlock>(s);
  b.write.reset();
  if (!done.ok()) return Fail(bucket, done.status());
  b.blocks.push_back(std::move(*done));
  return Status::Ok();
}

Result<std::vector<uint64_t>> BucketWriter::Close() {
  if (done_) return FailedPrecondition(fmt::format("bucket file {} is closed", path_));
  if (!failed_.ok()) return failed_;
  for (int i = 0; i < buckets(); ++i) {
    if (!buckets_[static_cast<size_t>(i)].chunk.empty()) COPSE_RETURN_IF_ERROR(SendChunk(i));
  }
  // Every last block ends first, so that the worker commits them while the
  // acknowledgements are collected.
  for (int i = 0; i < buckets(); ++i) {
    Bucket& b = buckets_[static_cast<size_t>(i)];
    if (!b.write) continue;
    Status s = b.write->End();
    if (!s.ok()) return Fail(i, s);
  }
  for (int i = 0; i < buckets(); ++i) {
    if (buckets_[static_cast<size_t>(i)].write)
      COPSE_RETURN_IF_ERROR(FinishBlock(i, /*ended=*/true));
  }
  std::vector<PartitionCommit> commits;
  std::vector<uint64_t> sizes;
  for (int i = 0; i < buckets(); ++i) {
    Bucket& b = buckets_[static_cast<size_t>(i)];
    commits.push_back({i, std::move(b.blocks)});
    sizes.push_back(b.size);
  }
  auto committed = client_.names().CommitPartitions(file_, commits);
  if (!committed.ok()) {
    failed_ = committed.status();
    return failed_;
  }
  done_ = true;
  return sizes;
}

Status BucketWriter::Abandon() {
  if (done_) return Status::Ok();
  done_ = true;
  for (Bucket& b : buckets_) b.write.reset();  // the worker drops the blocks being written
  return client_.names().Abandon(file_);
}

}  // namespace copse::dfs

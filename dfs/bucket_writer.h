// BucketWriter: writes one scratch file whose partitions are buckets, all at
// once: an all-to-all producer (docs/design.md §6) writes one bucket per consumer,
// 40 or more, interleaved. Each bucket buffers at most one chunk
// (dfs/chunk.h, 1 MiB); a full chunk goes straight to the bucket's current
// block through that block's own data connection to the writer's worker (a
// scratch file has one replica, on the writer's computer, written with
// noSync), and a block that reaches the block size is committed there and the
// next one begun. Close finishes every bucket's last block and commits every
// partition in one request (an empty bucket commits as an empty partition).
//
// Memory is one chunk per bucket and nothing kept for rewrites: when a block
// write fails (the worker went away), the writer fails with that error and
// the caller abandons it; the engine reruns the producer.
//
// Usage:
//   COPSE_ASSIGN_OR_RETURN(auto w, BucketWriter::Open(client, path, 40, job));
//   COPSE_RETURN_IF_ERROR(w->Append(bucket, bytes));  // any order
//   COPSE_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, w->Close());
//
// Thread-safety: not thread-safe; blocking, one thread. The client must
// outlive the writer and not be used by another writer at the same time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "copse/status.h"
#include "dfs/block_write.h"
#include "dfs/client.h"
#include "dfs/dfs_types.h"

namespace copse::dfs {

class BucketWriter {
 public:
  // Creates the scratch file `path` of job `scratch_job` with `buckets`
  // partitions, written from the client's computer (which must be named in
  // its options: scratch data stays on its writer's computer).
  static Result<std::unique_ptr<BucketWriter>> Open(DfsClient& client, const std::string& path,
                                                    int buckets, const std::string& scratch_job);
  // Abandons the file unless Close succeeded.
  ~BucketWriter();
  BucketWriter(const BucketWriter&) = delete;
  BucketWriter& operator=(const BucketWriter&) = delete;

  // Appends `bytes` to bucket `bucket`. Every full chunk is sent on; a
  // failed block write fails this and every later call.
  Status Append(int bucket, std::span<const uint8_t> bytes);
  // Finishes every bucket and commits them all; the bytes of each bucket, in
  // order. After an error, Abandon.
  Result<std::vector<uint64_t>> Close();
  // Drops the file and whatever was written of it.
  Status Abandon();

  FileId file() const { return file_; }
  int buckets() const { return static_cast<int>(buckets_.size()); }

 private:
  struct Bucket {
    std::vector<uint8_t> chunk;         // the bytes of the next chunk
    std::unique_ptr<BlockWrite> write;  // the block being written, if any
    std::vector<CommitBlock> blocks;    // committed on the worker, in order
    uint64_t size = 0;                  // bytes appended
  };

  BucketWriter(DfsClient& client, std::string path, FileId file, uint64_t block_size,
               BlockWriteOptions options, int buckets);
  // Sends bucket `b`'s buffered chunk to its current block (begun when there
  // is none); finishes the block when it is full.
  Status SendChunk(int b);
  // Ends bucket `b`'s block (unless `ended`) and waits for its commit on
  // the worker.
  Status FinishBlock(int b, bool ended);
  // Records the first failure, naming the bucket; every later call returns it.
  Status Fail(int bucket, const Status& s);

  DfsClient& client_;
  std::string path_;
  FileId file_;
  uint64_t block_size_;
  BlockWriteOptions options_;
  std::vector<Bucket> buckets_;
  Status failed_;
  bool done_ = false;  // closed or abandoned
};

}  // namespace copse::dfs

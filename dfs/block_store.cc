#include "dfs/block_store.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <sys/statvfs.h>

#include <cstring>

#include "dfs/crc32c.h"

namespace copse::dfs {
namespace {

constexpr uint8_t kMetaVersion = 1;
constexpr uint8_t kStateWriting = 1;
constexpr uint8_t kStateCommitted = 2;
constexpr size_t kMetaSize = 14;

void PutBigEndian(uint64_t v, int bytes, char* out) {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

uint64_t GetBigEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string ChunkKey(BlockId id, uint32_t index) {
  std::string k(12, '\0');
  PutBigEndian(id, 8, k.data());
  PutBigEndian(index, 4, k.data() + 8);
  return k;
}

std::string MetaKey(BlockId id) {
  std::string k(9, '\0');
  k[0] = 'b';
  PutBigEndian(id, 8, k.data() + 1);
  return k;
}

struct Meta {
  uint8_t state = 0;
  uint64_t size = 0;
  uint32_t chunks = 0;
};

std::string EncodeMeta(const Meta& m) {
  std::string v(kMetaSize, '\0');
  v[0] = static_cast<char>(kMetaVersion);
  v[1] = static_cast<char>(m.state);
  PutBigEndian(m.size, 8, v.data() + 2);
  PutBigEndian(m.chunks, 4, v.data() + 10);
  return v;
}

bool DecodeMeta(const rocksdb::Slice& v, Meta* m) {
  if (v.size() != kMetaSize || static_cast<uint8_t>(v[0]) != kMetaVersion) return false;
  m->state = static_cast<uint8_t>(v[1]);
  m->size = GetBigEndian(v.data() + 2, 8);
  m->chunks = static_cast<uint32_t>(GetBigEndian(v.data() + 10, 4));
  return m->state == kStateWriting || m->state == kStateCommitted;
}

Result<uint64_t> StatvfsFree(const std::filesystem::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0)
    return IoError(fmt::format("cannot check free space under {}", dir.string()));
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

rocksdb::ColumnFamilyOptions ChunkFamilyOptions(uint64_t block_size) {
  rocksdb::ColumnFamilyOptions o;
  o.enable_blob_files = true;
  o.min_blob_size = 0;
  o.blob_file_size = 256u << 20;
  o.blob_compression_type = rocksdb::kNoCompression;
  o.compression = rocksdb::kNoCompression;
  o.enable_blob_garbage_collection = true;
  o.blob_garbage_collection_age_cutoff = 0.25;
  o.blob_garbage_collection_force_threshold = 0.5;
  uint64_t buffer = std::clamp<uint64_t>(block_size, 16u << 20, 256u << 20);
  o.write_buffer_size = buffer;
  o.max_write_buffer_number = 4;
  return o;
}

std::vector<rocksdb::ColumnFamilyDescriptor> Families(uint64_t block_size) {
  return {{rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
          {"chunks", ChunkFamilyOptions(block_size)}};
}

rocksdb::DBOptions BaseDbOptions() {
  rocksdb::DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.max_background_jobs = 2;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.keep_log_file_num = 2;
  o.max_open_files = -1;
  return o;
}

}  // namespace

uint32_t ChunkCount(uint64_t size) {
  return static_cast<uint32_t>((size + kChunkSize - 1) / kChunkSize);
}

void FrameChunk(std::vector<uint8_t>* chunk) {
  uint32_t crc = Crc32c(*chunk);
  size_t n = chunk->size();
  chunk->resize(n + kChunkTrailer);
  for (size_t i = 0; i < kChunkTrailer; ++i) (*chunk)[n + i] = static_cast<uint8_t>(crc >> (8 * i));
}

Status VerifyFramedChunk(std::span<const uint8_t> framed, const std::string& what) {
  if (framed.size() < kChunkTrailer)
    return Corruption(fmt::format("{}: {} bytes is too short for a chunk", what, framed.size()));
  size_t n = framed.size() - kChunkTrailer;
  uint32_t stored = 0;
  for (size_t i = 0; i < kChunkTrailer; ++i)
    stored |= static_cast<uint32_t>(framed[n + i]) << (8 * i);
  uint32_t actual = Crc32c(framed.first(n));
  if (stored != actual) {
    return Corruption(fmt::format("{}: checksum mismatch (stored CRC32C {:08x}, data has {:08x})",
                                  what, stored, actual));
  }
  return Status::Ok();
}

BlockStore::BlockStore(const BlockStoreOptions& options) : options_(options), dir_(options.dir) {
  if (!options_.free_space) options_.free_space = StatvfsFree;
}

BlockStore::~BlockStore() {
  if (db_) {
    for (auto* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
    (void)db_->Close();
  }
}

Status BlockStore::Convert(const std::string& op, const void* status) const {
  const auto& s = *static_cast<const rocksdb::Status*>(status);
  if (s.ok()) return Status::Ok();
  std::string where = options_.computer.empty()
                          ? dir_.string()
                          : fmt::format("computer {} ({})", options_.computer, dir_.string());
  if (s.IsNoSpace()) return ResourceExhausted(fmt::format("disk full on {}: {}", where, op));
  if (s.IsCorruption()) return Corruption(fmt::format("{} on {}: {}", op, where, s.ToString()));
  if (s.IsNotFound()) return NotFound(fmt::format("{} on {}: not found", op, where));
  return IoError(fmt::format("{} on {}: {}", op, where, s.ToString()));
}

Result<std::unique_ptr<BlockStore>> BlockStore::Open(const BlockStoreOptions& options) {
  std::unique_ptr<BlockStore> store(new BlockStore(options));
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec)
    return IoError(
        fmt::format("cannot create block store dir {}: {}", options.dir.string(), ec.message()));
  COPSE_RETURN_IF_ERROR(store->OpenDb());
  COPSE_RETURN_IF_ERROR(store->DropHalfWritten());
  return store;
}

Status BlockStore::OpenDb() {
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(BaseDbOptions(), dir_.string(),
                                        Families(options_.block_size), &handles_, &db);
  if (!s.ok()) {
    if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
      return Unavailable(
          fmt::format("block store {} is in use by another process (is a worker for this computer "
                      "already running?)",
                      dir_.string()));
    }
    return Convert("opening the block store", &s);
  }
  db_.reset(db);
  return Status::Ok();
}

Status BlockStore::DropHalfWritten() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[0]));
  rocksdb::WriteBatch batch;
  int dropped = 0;
  for (it->Seek("b"); it->Valid() && it->key().starts_with("b"); it->Next()) {
    Meta m;
    if (it->key().size() != 9 || (DecodeMeta(it->value(), &m) && m.state == kStateCommitted))
      continue;
    BlockId id = GetBigEndian(it->key().data() + 1, 8);
    (void)batch.DeleteRange(handles_[1], ChunkKey(id, 0), ChunkKey(id + 1, 0));
    (void)batch.Delete(handles_[0], it->key());
    deleted_.push_back(id);
    ++dropped;
  }
  rocksdb::Status s = it->status();
  if (!s.ok()) return Convert("scanning blocks", &s);
  if (dropped == 0) return Status::Ok();
  rocksdb::WriteOptions wo;
  wo.sync = true;
  s = db_->Write(wo, &batch);
  return Convert("dropping half-written blocks", &s);
}

Status BlockStore::CheckSpace() const {
  COPSE_ASSIGN_OR_RETURN(uint64_t free, options_.free_space(dir_));
  if (free < options_.reserve_bytes + options_.block_size) {
    std::string who = options_.computer.empty() ? "" : " on computer " + options_.computer;
    return ResourceExhausted(fmt::format(
        "disk full{}: {} MiB free under {}, {} MiB must stay free (dfs.reserve_mb) and a block "
        "needs up to {} MiB",
        who, free >> 20, dir_.string(), options_.reserve_bytes >> 20, options_.block_size >> 20));
  }
  return Status::Ok();
}

Status BlockStore::BeginBlock(BlockId id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (writing_.count(id)) return AlreadyExists(fmt::format("block {} is being written", id));
  }
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handles_[0], MetaKey(id), &value);
  if (s.ok()) return AlreadyExists(fmt::format("block {} is stored here already", id));
  if (!s.IsNotFound()) return Convert("looking up a block", &s);
  COPSE_RETURN_IF_ERROR(CheckSpace());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!writing_.emplace(id, Writing{}).second)
      return AlreadyExists(fmt::format("block {} is being written", id));
  }
  // Synced, so that after a crash Open finds and drops whatever chunks of this
  // block a memtable flush had already written.
  rocksdb::WriteOptions wo;
  wo.sync = true;
  s = db_->Put(wo, handles_[0], MetaKey(id), EncodeMeta(Meta{kStateWriting, 0, 0}));
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    writing_.erase(id);
    return Convert("starting a block", &s);
  }
  return Status::Ok();
}

Status BlockStore::PutChunk(BlockId id, uint32_t index, std::span<const uint8_t> framed) {
  std::string what = fmt::format("chunk {} of block {}", index, id);
  COPSE_RETURN_IF_ERROR(VerifyFramedChunk(framed, what));
  size_t bytes = framed.size() - kChunkTrailer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = writing_.find(id);
    if (it == writing_.end())
      return FailedPrecondition(fmt::format("block {} is not being written", id));
    Writing& w = it->second;
    if (index != w.next_index)
      return InvalidArgument(fmt::format("{}: expected chunk {} next", what, w.next_index));
    if (w.short_chunk_seen)
      return InvalidArgument(
          fmt::format("{}: follows a short chunk, which must be the last", what));
    if (bytes == 0 || bytes > kChunkSize)
      return InvalidArgument(
          fmt::format("{}: {} bytes (a chunk holds 1 to {})", what, bytes, kChunkSize));
    if (w.bytes + bytes > options_.block_size)
      return InvalidArgument(
          fmt::format("block {} would exceed the block size of {} bytes", id, options_.block_size));
    w.next_index++;
    w.bytes += bytes;
    w.short_chunk_seen = bytes < kChunkSize;
  }
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;  // the block is flushed and synced as a whole on commit
  rocksdb::Slice value(reinterpret_cast<const char*>(framed.data()), framed.size());
  rocksdb::Status s = db_->Put(wo, handles_[1], ChunkKey(id, index), value);
  return Convert("storing " + what, &s);
}

Status BlockStore::CommitBlock(BlockId id, uint64_t size, uint32_t chunks) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = writing_.find(id);
    if (it == writing_.end())
      return FailedPrecondition(fmt::format("block {} is not being written", id));
    if (it->second.next_index != chunks || it->second.bytes != size || size == 0) {
      return InvalidArgument(fmt::format(
          "block {}: the writer says {} bytes in {} chunks, but {} bytes in {} chunks arrived", id,
          size, chunks, it->second.bytes, it->second.next_index));
    }
  }
  rocksdb::FlushOptions fo;
  fo.wait = true;
  rocksdb::Status s = db_->Flush(fo, handles_[1]);
  if (s.ok()) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    s = db_->Put(wo, handles_[0], MetaKey(id), EncodeMeta(Meta{kStateCommitted, size, chunks}));
  }
  if (!s.ok()) {
    Status err = Convert(fmt::format("committing block {}", id), &s);
    AbortBlock(id);
    return err;
  }
  std::lock_guard<std::mutex> lock(mu_);
  writing_.erase(id);
  return Status::Ok();
}

void BlockStore::AbortBlock(BlockId id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!writing_.erase(id)) return;
    deleted_.push_back(id);
  }
  rocksdb::WriteBatch batch;
  (void)batch.DeleteRange(handles_[1], ChunkKey(id, 0), ChunkKey(id + 1, 0));
  (void)batch.Delete(handles_[0], MetaKey(id));
  (void)db_->Write(rocksdb::WriteOptions(), &batch);
}

Result<StoredBlockInfo> BlockStore::Stat(BlockId id) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handles_[0], MetaKey(id), &value);
  Meta m;
  if (s.IsNotFound() || (s.ok() && (!DecodeMeta(value, &m) || m.state != kStateCommitted))) {
    std::string where = options_.computer.empty() ? "" : " on computer " + options_.computer;
    return NotFound(fmt::format("block {} is not stored{}", id, where));
  }
  if (!s.ok()) return Convert("looking up a block", &s);
  return StoredBlockInfo{id, m.size, m.chunks};
}

Status BlockStore::ReadChunk(BlockId id, uint32_t index, std::vector<uint8_t>* framed) const {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = false;  // our own CRC32C covers the value
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(ro, handles_[1], ChunkKey(id, index), &value);
  if (s.IsNotFound()) {
    return Corruption(fmt::format("chunk {} of block {} is missing from the store{}", index, id,
                                  options_.computer.empty() ? "" : " on " + options_.computer));
  }
  if (!s.ok()) return Convert(fmt::format("reading chunk {} of block {}", index, id), &s);
  framed->resize(value.size());
  std::memcpy(framed->data(), value.data(), value.size());
  std::string where = options_.computer.empty() ? "" : " on computer " + options_.computer;
  return VerifyFramedChunk(*framed, fmt::format("chunk {} of block {}{}", index, id, where));
}

Status BlockStore::DeleteBlock(BlockId id) {
  rocksdb::WriteBatch batch;
  (void)batch.DeleteRange(handles_[1], ChunkKey(id, 0), ChunkKey(id + 1, 0));
  (void)batch.Delete(handles_[0], MetaKey(id));
  rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), &batch);
  if (!s.ok()) return Convert(fmt::format("deleting block {}", id), &s);
  std::lock_guard<std::mutex> lock(mu_);
  deleted_.push_back(id);
  return Status::Ok();
}

Result<std::vector<StoredBlockInfo>> BlockStore::List() const {
  std::vector<StoredBlockInfo> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[0]));
  for (it->Seek("b"); it->Valid() && it->key().starts_with("b"); it->Next()) {
    Meta m;
    if (it->key().size() != 9 || !DecodeMeta(it->value(), &m) || m.state != kStateCommitted)
      continue;
    out.push_back({GetBigEndian(it->key().data() + 1, 8), m.size, m.chunks});
  }
  rocksdb::Status s = it->status();
  if (!s.ok()) return Convert("listing blocks", &s);
  return out;
}

Status BlockStore::CollectGarbage() {
  std::vector<BlockId> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ids.swap(deleted_);
  }
  if (ids.empty()) return Status::Ok();
  std::sort(ids.begin(), ids.end());
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  // Compact runs of consecutive ids together.
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] <= ids[j] + 1) ++j;
    std::string begin = ChunkKey(ids[i], 0), end = ChunkKey(ids[j] + 1, 0);
    rocksdb::Slice b(begin), e(end);
    rocksdb::Status s = db_->CompactRange(co, handles_[1], &b, &e);
    if (!s.ok()) return Convert("collecting garbage", &s);
    i = j + 1;
  }
  return Status::Ok();
}

uint64_t BlockStore::BlobBytesOnDisk() const {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    if (e.path().extension() == ".blob") total += e.file_size(ec);
  }
  return total;
}

Status BlockStore::CorruptChunkForTesting(BlockId id, uint32_t index,
                                          std::span<const uint8_t> value) {
  rocksdb::Slice v(reinterpret_cast<const char*>(value.data()), value.size());
  rocksdb::Status s = db_->Put(rocksdb::WriteOptions(), handles_[1], ChunkKey(id, index), v);
  if (s.ok()) s = db_->Flush(rocksdb::FlushOptions(), handles_[1]);
  return Convert("corrupting a chunk", &s);
}

}  // namespace copse::dfs

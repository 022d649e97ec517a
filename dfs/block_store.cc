#include "dfs/block_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/table_properties.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

namespace copse::dfs {
namespace {

constexpr uint8_t kMetaVersion = 1;
constexpr uint8_t kStateWriting = 1;
constexpr uint8_t kStateCommitted = 2;
constexpr uint8_t kStateCommittedNoSync = 3;  // valid only with its marker (NoSyncMarkerKey)
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

std::string MetaKey(BlockId id) {
  std::string k(9, '\0');
  k[0] = 'b';
  PutBigEndian(id, 8, k.data() + 1);
  return k;
}

// In the chunk column family after a no-sync block's chunks: 13 bytes, so
// that the location collector (which takes 12-byte chunk keys) ignores it, and
// inside the block's key range, so that deleting the block deletes it.
std::string NoSyncMarkerKey(BlockId id) { return ChunkKey(id, UINT32_MAX) + '\x01'; }

struct Meta {
  uint8_t state = 0;
  uint64_t size = 0;
  uint32_t chunks = 0;
  bool committed() const { return state == kStateCommitted || state == kStateCommittedNoSync; }
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
  return m->state == kStateWriting || m->committed();
}

Result<uint64_t> StatvfsFree(const std::filesystem::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0)
    return IoError(fmt::format("cannot check free space under {}", dir.string()));
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

constexpr char kLocationsProperty[] = "copse.chunk-locations";
constexpr size_t kLocationRecord = 12 + 4 * 8;  // key, file, offset, size, sequence
constexpr uint8_t kBlobIndexTypeBlob = 1;       // RocksDB's BlobIndex::Type::kBlob
constexpr uint8_t kNoCompression = 0;

bool GetVarint64(const char** p, const char* end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift <= 63 && *p < end; shift += 7) {
    uint64_t byte = static_cast<uint8_t>(*(*p)++);
    *v |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// RocksDB's on-disk blob reference: type kBlob, varint64 file number, offset,
// size, then one compression byte.
bool DecodeBlobIndex(const rocksdb::Slice& v, ChunkLocation* out) {
  const char* p = v.data();
  const char* end = p + v.size();
  if (p == end || static_cast<uint8_t>(*p++) != kBlobIndexTypeBlob) return false;
  if (!GetVarint64(&p, end, &out->blob_file) || !GetVarint64(&p, end, &out->offset) ||
      !GetVarint64(&p, end, &out->size))
    return false;
  return p + 1 == end && static_cast<uint8_t>(*p) == kNoCompression;
}

}  // namespace

// Chunk key -> the newest location a table references. Entries carry the
// sequence number of the entry that references them, so that a newer value
// of a key (only CorruptChunkForTesting writes one) wins over an older one.
struct BlockStore::LocationIndex {
  struct Entry {
    ChunkLocation where;
    uint64_t sequence = 0;
  };
  std::mutex mu;
  std::map<std::pair<BlockId, uint32_t>, Entry> entries;  // GUARDED_BY(mu)

  void Add(const std::string& key, const Entry& e) {
    std::pair<BlockId, uint32_t> k{GetBigEndian(key.data(), 8),
                                   static_cast<uint32_t>(GetBigEndian(key.data() + 8, 4))};
    std::lock_guard<std::mutex> lock(mu);
    auto [it, inserted] = entries.emplace(k, e);
    if (!inserted && (e.sequence >= it->second.sequence || e.sequence == 0)) it->second = e;
  }
};

class BlockStore::LocationCollectorFactory final : public rocksdb::TablePropertiesCollectorFactory {
 public:
  explicit LocationCollectorFactory(std::shared_ptr<LocationIndex> index)
      : index_(std::move(index)) {}
  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context) override {
    return new Collector(index_);
  }
  const char* Name() const override { return "copse.chunk-locations"; }

 private:
  class Collector final : public rocksdb::TablePropertiesCollector {
   public:
    explicit Collector(std::shared_ptr<LocationIndex> index) : index_(std::move(index)) {}
    rocksdb::Status AddUserKey(const rocksdb::Slice& key, const rocksdb::Slice& value,
                               rocksdb::EntryType type, rocksdb::SequenceNumber seq,
                               uint64_t) override {
      ChunkLocation where;
      if (type != rocksdb::kEntryBlobIndex || key.size() != 12 || !DecodeBlobIndex(value, &where))
        return rocksdb::Status::OK();
      std::string rec(kLocationRecord, '\0');
      std::memcpy(rec.data(), key.data(), 12);
      PutBigEndian(where.blob_file, 8, rec.data() + 12);
      PutBigEndian(where.offset, 8, rec.data() + 20);
      PutBigEndian(where.size, 8, rec.data() + 28);
      PutBigEndian(seq, 8, rec.data() + 36);
      records_ += rec;
      return rocksdb::Status::OK();
    }
    rocksdb::Status Finish(rocksdb::UserCollectedProperties* properties) override {
      ForEachRecord(records_, [&](const std::string& key, const LocationIndex::Entry& e) {
        index_->Add(key, e);
      });
      (*properties)[kLocationsProperty] = records_;
      return rocksdb::Status::OK();
    }
    rocksdb::UserCollectedProperties GetReadableProperties() const override {
      return {{kLocationsProperty,
               fmt::format("{} chunk locations", records_.size() / kLocationRecord)}};
    }
    const char* Name() const override { return "copse.chunk-locations"; }

   private:
    std::shared_ptr<LocationIndex> index_;
    std::string records_;
  };
  std::shared_ptr<LocationIndex> index_;

 public:
  template <typename Fn>
  static void ForEachRecord(const std::string& records, Fn&& fn) {
    for (size_t at = 0; at + kLocationRecord <= records.size(); at += kLocationRecord) {
      const char* r = records.data() + at;
      LocationIndex::Entry e;
      e.where.blob_file = GetBigEndian(r + 12, 8);
      e.where.offset = GetBigEndian(r + 20, 8);
      e.where.size = GetBigEndian(r + 28, 8);
      e.sequence = GetBigEndian(r + 36, 8);
      fn(std::string(r, 12), e);
    }
  }
};

namespace {

rocksdb::ColumnFamilyOptions ChunkFamilyOptions(
    uint64_t block_size, std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> collector) {
  rocksdb::ColumnFamilyOptions o;
  o.table_properties_collector_factories.push_back(std::move(collector));
  o.enable_blob_files = true;
  o.min_blob_size = 0;
  o.blob_file_size = 256u << 20;
  o.blob_compression_type = rocksdb::kNoCompression;
  o.compression = rocksdb::kNoCompression;
  o.enable_blob_garbage_collection = true;
  o.blob_garbage_collection_age_cutoff = 0.25;
  o.blob_garbage_collection_force_threshold = 0.5;
  // Small memtables, flushed in the background while a block streams in: a
  // commit then flushes only the rest, and the memtables' memory is reused
  // soon instead of being fresh (first-touch page faults are expensive on
  // virtual machines: they dominated 3-replica writes with one 64 MiB
  // memtable per block).
  (void)block_size;
  o.write_buffer_size = 16u << 20;
  o.max_write_buffer_number = 4;
  return o;
}

std::vector<rocksdb::ColumnFamilyDescriptor> Families(
    uint64_t block_size, std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> collector) {
  return {{rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
          {"chunks", ChunkFamilyOptions(block_size, std::move(collector))}};
}

rocksdb::DBOptions BaseDbOptions() {
  rocksdb::DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.max_background_jobs = 2;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.keep_log_file_num = 2;
  o.max_open_files = -1;
  // With sync_on_close false every chunk goes through the log; the meta
  // family's memtable rarely fills, so bound the logs kept for it (and the
  // replay after a crash).
  o.max_total_wal_size = 256u << 20;
  // Blob files are written in 8 MiB pieces at 8 MiB-aligned offsets (the
  // default 1 MiB buffer is bypassed by 1 MiB chunks, which then land at
  // unaligned offsets): the page cache then holds them in large folios, and
  // reading them back (the local read path) is faster.
  o.writable_file_max_buffer_size = 8u << 20;
  return o;
}

}  // namespace

BlockStore::BlockStore(const BlockStoreOptions& options)
    : options_(options), dir_(options.dir), locations_(std::make_shared<LocationIndex>()) {
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
  // Locations first: dropping a half-written block forgets its own.
  COPSE_RETURN_IF_ERROR(store->LoadLocations());
  COPSE_RETURN_IF_ERROR(store->DropHalfWritten());
  return store;
}

Status BlockStore::OpenDb() {
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(
      BaseDbOptions(), dir_.string(),
      Families(options_.block_size, std::make_shared<LocationCollectorFactory>(locations_)),
      &handles_, &db);
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

Status BlockStore::LoadLocations() {
  rocksdb::TablePropertiesCollection tables;
  rocksdb::Status s = db_->GetPropertiesOfAllTables(handles_[1], &tables);
  if (!s.ok()) return Convert("reading chunk locations", &s);
  for (const auto& [file, props] : tables) {
    auto it = props->user_collected_properties.find(kLocationsProperty);
    if (it == props->user_collected_properties.end()) continue;
    LocationCollectorFactory::ForEachRecord(
        it->second,
        [&](const std::string& key, const LocationIndex::Entry& e) { locations_->Add(key, e); });
  }
  return Status::Ok();
}

void BlockStore::ForgetLocations(BlockId id) {
  std::lock_guard<std::mutex> lock(locations_->mu);
  auto& m = locations_->entries;
  m.erase(m.lower_bound({id, 0}), m.lower_bound({id + 1, 0}));
}

std::filesystem::path BlockStore::BlobFilePath(uint64_t number) const {
  return dir_ / fmt::format("{:06}.blob", number);
}

Result<std::vector<ChunkLocation>> BlockStore::LocateChunks(BlockId id, uint32_t first) const {
  COPSE_ASSIGN_OR_RETURN(StoredBlockInfo info, Stat(id));
  if (first > info.chunks) {
    return InvalidArgument(
        fmt::format("block {} has {} chunks, asked from chunk {}", id, info.chunks, first));
  }
  std::vector<ChunkLocation> out;
  if (FindLocations(id, first, info.chunks, &out)) return out;
  // Committed but still in a memtable (sync_on_close false): its locations
  // are known once a flush wrote it to blob files.
  rocksdb::FlushOptions fo;
  fo.wait = true;
  rocksdb::Status s = db_->Flush(fo, handles_[1]);
  if (!s.ok()) return Convert(fmt::format("flushing block {}", id), &s);
  if (FindLocations(id, first, info.chunks, &out)) return out;
  return Unavailable(fmt::format("the location of a chunk of block {} is not known", id));
}

bool BlockStore::FindLocations(BlockId id, uint32_t first, uint32_t chunks,
                               std::vector<ChunkLocation>* out) const {
  out->clear();
  out->reserve(chunks - first);
  std::lock_guard<std::mutex> lock(locations_->mu);
  auto it = locations_->entries.lower_bound({id, first});
  for (uint32_t i = first; i < chunks; ++i, ++it) {
    if (it == locations_->entries.end() || it->first != std::pair<BlockId, uint32_t>{id, i})
      return false;
    out->push_back(it->second.where);
  }
  return true;
}

Status BlockStore::DropHalfWritten() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[0]));
  rocksdb::WriteBatch batch;
  int dropped = 0;
  for (it->Seek("b"); it->Valid() && it->key().starts_with("b"); it->Next()) {
    Meta m;
    if (it->key().size() != 9) continue;
    BlockId id = GetBigEndian(it->key().data() + 1, 8);
    bool decoded = DecodeMeta(it->value(), &m);
    if (decoded && m.state == kStateCommitted) continue;
    if (decoded && m.state == kStateCommittedNoSync) {
      std::string marker;
      rocksdb::Status g =
          db_->Get(rocksdb::ReadOptions(), handles_[1], NoSyncMarkerKey(id), &marker);
      if (g.ok()) continue;
      if (!g.IsNotFound()) return Convert("checking a block's commit marker", &g);
    }
    (void)batch.DeleteRange(handles_[1], ChunkKey(id, 0), ChunkKey(id + 1, 0));
    (void)batch.Delete(handles_[0], it->key());
    // A flush (of the replayed log, say) may have published its chunks: a
    // rewrite of the id must not be read from them.
    ForgetLocations(id);
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

Status BlockStore::BeginBlock(BlockId id, BlockSync sync) {
  const bool no_sync = sync == BlockSync::kNoSync;
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
    Writing w;
    w.no_sync = no_sync;
    if (!writing_.emplace(id, w).second)
      return AlreadyExists(fmt::format("block {} is being written", id));
  }
  ForgetLocations(id);  // whatever an earlier, dropped copy of the id left
  // Durable before any chunk of the block is, so that after a crash Open
  // finds and drops whatever chunks a memtable flush had already written:
  // synced when the chunks skip the log; otherwise the log holds it before
  // the chunks, and RocksDB syncs a log before flushing what it covers when
  // there are several column families.
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_on_close && !no_sync;
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
  bool no_log = false;
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
    no_log = options_.sync_on_close || w.no_sync;
  }
  rocksdb::WriteOptions wo;
  // With sync_on_close the block is flushed and synced as a whole on commit;
  // otherwise the (unsynced) log keeps it across a process crash. A no-sync
  // block is neither: its commit marker tells whether a flush kept it.
  wo.disableWAL = no_log;
  rocksdb::Slice value(reinterpret_cast<const char*>(framed.data()), framed.size());
  rocksdb::Status s = db_->Put(wo, handles_[1], ChunkKey(id, index), value);
  return Convert("storing " + what, &s);
}

Status BlockStore::CommitBlock(BlockId id, uint64_t size, uint32_t chunks) {
  bool no_sync = false;
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
    no_sync = it->second.no_sync;
  }
  rocksdb::Status s;
  if (no_sync) {
    // After the chunks in their column family: a flush that keeps the marker
    // kept them.
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    s = db_->Put(wo, handles_[1], NoSyncMarkerKey(id), "1");
  } else if (options_.sync_on_close) {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    s = db_->Flush(fo, handles_[1]);
  }
  if (s.ok()) {
    // In the log after the block's chunks: a replay never finds the commit
    // without them (a no-sync block's is checked against its marker).
    rocksdb::WriteOptions wo;
    wo.sync = options_.sync_on_close && !no_sync;
    Meta m{no_sync ? kStateCommittedNoSync : kStateCommitted, size, chunks};
    s = db_->Put(wo, handles_[0], MetaKey(id), EncodeMeta(m));
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
  ForgetLocations(id);
  rocksdb::WriteBatch batch;
  (void)batch.DeleteRange(handles_[1], ChunkKey(id, 0), ChunkKey(id + 1, 0));
  (void)batch.Delete(handles_[0], MetaKey(id));
  (void)db_->Write(rocksdb::WriteOptions(), &batch);
}

Result<StoredBlockInfo> BlockStore::Stat(BlockId id) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handles_[0], MetaKey(id), &value);
  Meta m;
  if (s.IsNotFound() || (s.ok() && (!DecodeMeta(value, &m) || !m.committed()))) {
    std::string where = options_.computer.empty() ? "" : " on computer " + options_.computer;
    return NotFound(fmt::format("block {} is not stored{}", id, where));
  }
  if (!s.ok()) return Convert("looking up a block", &s);
  return StoredBlockInfo{id, m.size, m.chunks, m.state == kStateCommittedNoSync};
}

bool BlockStore::ReadChunkFromBlobFile(BlockId id, uint32_t index,
                                       std::vector<uint8_t>* framed) const {
  ChunkLocation loc;
  {
    std::lock_guard<std::mutex> lock(locations_->mu);
    auto it = locations_->entries.find({id, index});
    if (it == locations_->entries.end()) return false;
    loc = it->second.where;
  }
  if (loc.size <= kChunkTrailer || loc.size > kChunkSize + kChunkTrailer ||
      loc.offset < kChunkKeySize)
    return false;
  int fd = ::open(BlobFilePath(loc.blob_file).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // relocated by blob GC since
  auto read_all = [fd](void* buf, size_t n, uint64_t at) {
    auto* p = static_cast<uint8_t*>(buf);
    while (n > 0) {
      ssize_t r = ::pread(fd, p, n, static_cast<off_t>(at));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      p += r;
      at += static_cast<uint64_t>(r);
      n -= static_cast<size_t>(r);
    }
    return true;
  };
  char key[kChunkKeySize];
  std::string want = ChunkKey(id, index);
  bool ok = read_all(key, kChunkKeySize, loc.offset - kChunkKeySize) &&
            std::memcmp(key, want.data(), kChunkKeySize) == 0;
  if (ok) {
    framed->resize(loc.size);
    ok = read_all(framed->data(), loc.size, loc.offset);
  }
  ::close(fd);
  return ok;
}

Status BlockStore::ReadChunk(BlockId id, uint32_t index, std::vector<uint8_t>* framed) const {
  std::string where = options_.computer.empty() ? "" : " on computer " + options_.computer;
  std::string what = fmt::format("chunk {} of block {}{}", index, id, where);
  // Straight from the blob file when its place is known (one copy); anything
  // doubtful is read again through RocksDB, whose answer counts.
  if (ReadChunkFromBlobFile(id, index, framed) && VerifyFramedChunk(*framed, what).ok())
    return Status::Ok();
  rocksdb::ReadOptions ro;
  ro.verify_checksums = false;  // our own CRC32C covers the value
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(ro, handles_[1], ChunkKey(id, index), &value);
  if (s.IsNotFound()) {
    return Corruption(fmt::format("chunk {} of block {} is missing from the store{}", index, id,
                                  options_.computer.empty() ? "" : " on " + options_.computer));
  }
  if (!s.ok()) return Convert(fmt::format("reading chunk {} of block {}", index, id), &s);
  // assign, not resize + memcpy: no zero-fill of the 1 MiB first.
  const auto* bytes = reinterpret_cast<const uint8_t*>(value.data());
  framed->assign(bytes, bytes + value.size());
  return VerifyFramedChunk(*framed, what);
}

Status BlockStore::DeleteBlock(BlockId id) {
  rocksdb::WriteBatch batch;
  (void)batch.DeleteRange(handles_[1], ChunkKey(id, 0), ChunkKey(id + 1, 0));
  (void)batch.Delete(handles_[0], MetaKey(id));
  rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), &batch);
  if (!s.ok()) return Convert(fmt::format("deleting block {}", id), &s);
  ForgetLocations(id);
  std::lock_guard<std::mutex> lock(mu_);
  deleted_.push_back(id);
  return Status::Ok();
}

Result<std::vector<StoredBlockInfo>> BlockStore::List() const {
  std::vector<StoredBlockInfo> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[0]));
  for (it->Seek("b"); it->Valid() && it->key().starts_with("b"); it->Next()) {
    Meta m;
    if (it->key().size() != 9 || !DecodeMeta(it->value(), &m) || !m.committed()) continue;
    out.push_back({GetBigEndian(it->key().data() + 1, 8), m.size, m.chunks,
                   m.state == kStateCommittedNoSync});
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
  // A compaction that ran while a block was deleted may have republished it.
  for (BlockId id : ids) {
    if (!Stat(id).ok()) ForgetLocations(id);
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

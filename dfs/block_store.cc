#include "dfs/block_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "common/disk.h"

namespace copse::dfs {
namespace {

constexpr uint8_t kMetaVersion = 1;
constexpr uint8_t kStateCommitted = 2;
constexpr uint8_t kStateCommittedNoSync = 3;
constexpr size_t kMetaSize = 14;
constexpr size_t kFileNameSize = 16;  // hex digits of the block id
// A block's file is allocated this many chunk records at a time, ahead of
// the writes (fallocate: the page cache writes then find the blocks
// allocated, which measured 10% less CPU in the workers), and a block that
// its commit syncs has each such group written back as soon as it is
// complete (sync_file_range), so that the commit's fdatasync finds little
// left to write, which measured faster (docs/dfs.md).
constexpr uint32_t kGroupChunks = 8;

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

// A committed block's record in the index.
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
  return (m->state == kStateCommitted || m->state == kStateCommittedNoSync) && m->size > 0 &&
         m->chunks == ChunkCount(m->size);
}

// The length of a committed block's file: each chunk adds its key and CRC.
uint64_t FileLength(const Meta& m) {
  return m.size + uint64_t{m.chunks} * (kChunkKeySize + kChunkTrailer);
}

// The bytes in chunk `index` of a block of `size` bytes.
uint64_t ChunkBytes(uint64_t size, uint32_t index) {
  return std::min<uint64_t>(kChunkSize, size - uint64_t{index} * kChunkSize);
}

uint64_t RecordOffset(uint32_t index) { return uint64_t{index} * BlockStore::kChunkRecordSize; }

bool ParseFileName(const std::string& name, BlockId* id) {
  if (name.size() != kFileNameSize) return false;
  *id = 0;
  for (char c : name) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    *id = (*id << 4) | static_cast<uint64_t>(d);
  }
  return true;
}

// pwritev/preadv until every byte of `iov` is done; the bytes done, or -1
// with errno set. A read stops short at the end of the file.
template <typename Fn>
ssize_t TransferAll(Fn&& fn, iovec* iov, int n, uint64_t at) {
  ssize_t total = 0;
  while (n > 0) {
    ssize_t r = fn(iov, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    total += r;
    at += static_cast<uint64_t>(r);
    auto left = static_cast<size_t>(r);
    while (n > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --n;
    }
    if (n > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return total;
}

rocksdb::Options DbOptions() {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.max_background_jobs = 2;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.keep_log_file_num = 2;
  o.max_open_files = -1;
  // Only the index lives here: a few bytes per block.
  o.write_buffer_size = 4u << 20;
  return o;
}

}  // namespace

struct BlockStore::File {
  explicit File(int f) : fd(f) {}
  ~File() { ::close(fd); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  const int fd;
};

BlockStore::BlockStore(const BlockStoreOptions& options)
    : options_(options), dir_(options.dir), blocks_dir_(options.dir / "blocks") {
  if (!options_.free_space) options_.free_space = FreeDiskBytes;
}

BlockStore::~BlockStore() {
  writing_.clear();  // their files stay for the next Open to remove
  if (blocks_dir_fd_ >= 0) ::close(blocks_dir_fd_);
  if (db_) (void)db_->Close();
}

std::string BlockStore::Where() const {
  return options_.computer.empty()
             ? dir_.string()
             : fmt::format("computer {} ({})", options_.computer, dir_.string());
}

void BlockStore::ResumeAfterFailure() const {
  if (write_failed_.exchange(false)) (void)db_->Resume();
}

Status BlockStore::Convert(const std::string& op, const void* status) const {
  const auto& s = *static_cast<const rocksdb::Status*>(status);
  if (s.ok()) return Status::Ok();
  if (!s.IsNotFound()) write_failed_.store(true);
  if (s.IsNoSpace()) return ResourceExhausted(fmt::format("disk full on {}: {}", Where(), op));
  if (s.IsCorruption()) return Corruption(fmt::format("{} on {}: {}", op, Where(), s.ToString()));
  if (s.IsNotFound()) return NotFound(fmt::format("{} on {}: not found", op, Where()));
  return IoError(fmt::format("{} on {}: {}", op, Where(), s.ToString()));
}

Status BlockStore::FileError(const std::string& what, BlockId id, int err) const {
  if (err == ENOSPC || err == EDQUOT)
    return ResourceExhausted(fmt::format("disk full on {}: {}", Where(), what));
  return IoError(fmt::format("{} on {} ({}): {}", what, Where(), BlockFilePath(id).string(),
                             std::strerror(err)));
}

Result<std::unique_ptr<BlockStore>> BlockStore::Open(const BlockStoreOptions& options) {
  std::unique_ptr<BlockStore> store(new BlockStore(options));
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec)
    return IoError(
        fmt::format("cannot create block store dir {}: {}", options.dir.string(), ec.message()));
  COPSE_RETURN_IF_ERROR(store->CheckLayout());
  COPSE_RETURN_IF_ERROR(store->OpenDb());  // first: it locks the dir against another process
  std::filesystem::create_directories(store->blocks_dir_, ec);
  if (ec) {
    return IoError(fmt::format("cannot create block store dir {}: {}", store->blocks_dir_.string(),
                               ec.message()));
  }
  store->blocks_dir_fd_ = ::open(store->blocks_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (store->blocks_dir_fd_ < 0) {
    return IoError(
        fmt::format("cannot open {}: {}", store->blocks_dir_.string(), std::strerror(errno)));
  }
  COPSE_RETURN_IF_ERROR(store->Recover());
  return store;
}

Status BlockStore::CheckLayout() {
  std::vector<std::string> families;
  rocksdb::Status s =
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir_.string(), &families);
  if (!s.ok()) return Status::Ok();  // a new store (OpenDb reports anything else)
  for (const std::string& f : families) {
    if (f == rocksdb::kDefaultColumnFamilyName) continue;
    return FailedPrecondition(fmt::format(
        "block store {} has the old layout (chunks in RocksDB blob files, column family \"{}\"), "
        "which this version does not read: remove the directory and restart the worker (the "
        "master copies its blocks again from other replicas)",
        dir_.string(), f));
  }
  return Status::Ok();
}

Status BlockStore::OpenDb() {
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(DbOptions(), dir_.string(), &db);
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

Status BlockStore::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  // Records first: a committed block whose file is short lost its data.
  std::unordered_set<BlockId> kept;
  rocksdb::WriteBatch drop;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek("b"); it->Valid() && it->key().starts_with("b"); it->Next()) {
    Meta m;
    if (it->key().size() == 9 && DecodeMeta(it->value(), &m)) {
      BlockId id = GetBigEndian(it->key().data() + 1, 8);
      struct stat st {};
      bool found = ::stat(BlockFilePath(id).c_str(), &st) == 0;
      if (found && static_cast<uint64_t>(st.st_size) >= FileLength(m)) {
        kept.insert(id);
        continue;
      }
      spdlog::warn("block store {}: dropping block {}: its file is {}, {} bytes expected", Where(),
                   id, found ? fmt::format("{} bytes long", st.st_size) : "missing", FileLength(m));
    }
    (void)drop.Delete(it->key());
  }
  rocksdb::Status s = it->status();
  if (!s.ok()) return Convert("scanning blocks", &s);
  if (drop.Count() > 0) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ResumeAfterFailure();
    s = db_->Write(wo, &drop);
    if (!s.ok()) return Convert("dropping lost blocks", &s);
  }
  // Then files: any no committed block owns was being written, or deleted.
  std::error_code ec;
  int removed = 0;
  for (const auto& e : std::filesystem::directory_iterator(blocks_dir_, ec)) {
    BlockId id = 0;
    if (ParseFileName(e.path().filename().string(), &id) && kept.count(id)) continue;
    std::error_code rm;
    std::filesystem::remove(e.path(), rm);
    if (rm) return IoError(fmt::format("cannot remove {}: {}", e.path().string(), rm.message()));
    ++removed;
  }
  if (ec) return IoError(fmt::format("cannot list {}: {}", blocks_dir_.string(), ec.message()));
  if (removed > 0)
    spdlog::info("block store {}: removed {} unfinished block file(s)", Where(), removed);
  return Status::Ok();
}

std::filesystem::path BlockStore::BlockFilePath(uint64_t file) const {
  return blocks_dir_ / fmt::format("{:016x}", file);
}

void BlockStore::RemoveFile(BlockId id) {
  if (::unlink(BlockFilePath(id).c_str()) == 0 || errno == ENOENT) return;
  int err = errno;
  spdlog::warn("{}",
               FileError(fmt::format("removing the file of block {}", id), id, err).ToString());
  orphans_.push_back(id);
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
  // Under the lock from the check to the new file: a concurrent DeleteBlock
  // of the same id must not remove the new file.
  std::lock_guard<std::mutex> lock(mu_);
  if (writing_.count(id)) return AlreadyExists(fmt::format("block {} is being written", id));
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), MetaKey(id), &value);
  if (s.ok()) return AlreadyExists(fmt::format("block {} is stored here already", id));
  if (!s.IsNotFound()) return Convert("looking up a block", &s);
  COPSE_RETURN_IF_ERROR(CheckSpace());
  std::string path = BlockFilePath(id).string();
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  int fd = ::open(path.c_str(), kFlags, 0644);
  if (fd < 0 && errno == EEXIST) {
    // Nobody's: a deletion that could not remove it. Unlinked, not
    // truncated: a local reader may still have it open.
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      int err = errno;
      return FileError(fmt::format("removing a stale file of block {}", id), id, err);
    }
    fd = ::open(path.c_str(), kFlags, 0644);
  }
  if (fd < 0) {
    int err = errno;
    return FileError(fmt::format("creating the file of block {}", id), id, err);
  }
  Writing w;
  w.file = std::make_shared<File>(fd);
  w.no_sync = sync == BlockSync::kNoSync;
  writing_.emplace(id, std::move(w));
  return Status::Ok();
}

Status BlockStore::PutChunk(BlockId id, uint32_t index, std::span<const uint8_t> framed) {
  std::string what = fmt::format("chunk {} of block {}", index, id);
  COPSE_RETURN_IF_ERROR(VerifyFramedChunk(framed, what));
  size_t bytes = framed.size() - kChunkTrailer;
  std::shared_ptr<File> file;
  bool start_writeback = false;
  uint64_t allocate_to = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = writing_.find(id);
    if (it == writing_.end())
      return FailedPrecondition(fmt::format("block {} is not being written", id));
    const Writing& w = it->second;
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
    file = w.file;
    if (index % kGroupChunks == 0)
      allocate_to = RecordOffset(std::min(index + kGroupChunks, ChunkCount(options_.block_size)));
    start_writeback = options_.sync_on_close && !w.no_sync && (index + 1) % kGroupChunks == 0;
  }
  if (allocate_to > RecordOffset(index)) {
    // Past the end of the file, which keeps its size: the commit trims what
    // the block did not use. Where fallocate is not supported, the write
    // allocates as it goes.
    uint64_t from = RecordOffset(index);
    (void)::fallocate(file->fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(from),
                      static_cast<off_t>(allocate_to - from));
  }
  // The key, then the framed chunk straight from the caller's buffer.
  std::string key = ChunkKey(id, index);
  iovec iov[2] = {{key.data(), kChunkKeySize},
                  {const_cast<uint8_t*>(framed.data()), framed.size()}};
  ssize_t wrote =
      TransferAll([&](const iovec* v, int n, off_t at) { return ::pwritev(file->fd, v, n, at); },
                  iov, 2, RecordOffset(index));
  int err = errno;
  if (wrote != static_cast<ssize_t>(kChunkKeySize + framed.size()))
    return FileError("storing " + what, id, wrote < 0 ? err : EIO);
  if (start_writeback) {
    // Starts writing the group's records to disk, without waiting; a
    // failure shows at the commit's fdatasync.
    uint64_t from = RecordOffset(index + 1 - kGroupChunks);
    (void)::sync_file_range(file->fd, static_cast<off_t>(from),
                            static_cast<off_t>(RecordOffset(index + 1) - from),
                            SYNC_FILE_RANGE_WRITE);
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = writing_.find(id);
  if (it == writing_.end() || it->second.file != file)
    return FailedPrecondition(fmt::format("block {} was aborted while being written", id));
  Writing& w = it->second;
  w.allocated = std::max(w.allocated, allocate_to);
  w.next_index++;
  w.bytes += bytes;
  w.short_chunk_seen = bytes < kChunkSize;
  return Status::Ok();
}

Status BlockStore::CommitBlock(BlockId id, uint64_t size, uint32_t chunks) {
  std::shared_ptr<File> file;
  bool no_sync = false;
  uint64_t length = 0;  // the file's
  bool trim = false;
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
    file = it->second.file;
    no_sync = it->second.no_sync;
    length = FileLength(Meta{kStateCommitted, size, chunks});
    trim = it->second.allocated > length;
  }
  const bool sync = options_.sync_on_close && !no_sync;
  Status s;
  // Frees the space allocated past the block's end (the size stays).
  if (trim && ::ftruncate(file->fd, static_cast<off_t>(length)) != 0) {
    int err = errno;
    s = FileError(fmt::format("trimming the file of block {}", id), id, err);
  }
  // The data, and the new file's name, on disk before the record that
  // vouches for them.
  if (s.ok() && sync && ::fdatasync(file->fd) != 0) {
    int err = errno;
    s = FileError(fmt::format("syncing block {}", id), id, err);
  }
  if (s.ok() && sync && ::fsync(blocks_dir_fd_) != 0) {
    int err = errno;
    s = IoError(fmt::format("committing block {} on {}: syncing {}: {}", id, Where(),
                            blocks_dir_.string(), std::strerror(err)));
  }
  if (s.ok()) {
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    Meta m{no_sync ? kStateCommittedNoSync : kStateCommitted, size, chunks};
    ResumeAfterFailure();
    rocksdb::Status r = db_->Put(wo, MetaKey(id), EncodeMeta(m));
    s = Convert(fmt::format("committing block {}", id), &r);
  }
  if (!s.ok()) {
    AbortBlock(id);
    return s;
  }
  std::lock_guard<std::mutex> lock(mu_);
  writing_.erase(id);
  return Status::Ok();
}

void BlockStore::AbortBlock(BlockId id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!writing_.erase(id)) return;
  RemoveFile(id);
}

Result<StoredBlockInfo> BlockStore::Stat(BlockId id) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), MetaKey(id), &value);
  Meta m;
  if (s.IsNotFound() || (s.ok() && !DecodeMeta(value, &m))) {
    std::string where = options_.computer.empty() ? "" : " on computer " + options_.computer;
    return NotFound(fmt::format("block {} is not stored{}", id, where));
  }
  if (!s.ok()) return Convert("looking up a block", &s);
  return StoredBlockInfo{id, m.size, m.chunks, m.state == kStateCommittedNoSync};
}

Status BlockStore::ReadChunk(BlockId id, uint32_t index, std::vector<uint8_t>* framed) const {
  COPSE_ASSIGN_OR_RETURN(StoredBlockInfo info, Stat(id));
  std::string where = options_.computer.empty() ? "" : " on computer " + options_.computer;
  std::string what = fmt::format("chunk {} of block {}{}", index, id, where);
  if (index >= info.chunks)
    return InvalidArgument(fmt::format("{}: the block has {} chunks", what, info.chunks));
  std::string path = BlockFilePath(id).string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Corruption(fmt::format("{}: {} is missing", what, path));
    return FileError("opening the file of " + what, id, err);
  }
  size_t length = ChunkBytes(info.size, index) + kChunkTrailer;
  framed->resize(length);
  char key[kChunkKeySize];
  iovec iov[2] = {{key, kChunkKeySize}, {framed->data(), length}};
  ssize_t got =
      TransferAll([fd](const iovec* v, int n, off_t at) { return ::preadv(fd, v, n, at); }, iov, 2,
                  RecordOffset(index));
  int err = errno;
  ::close(fd);
  if (got < 0) return FileError("reading " + what, id, err);
  if (got != static_cast<ssize_t>(kChunkKeySize + length)) {
    return Corruption(fmt::format("{}: {} ends inside the chunk ({} of {} bytes)", what, path, got,
                                  kChunkKeySize + length));
  }
  if (std::memcmp(key, ChunkKey(id, index).data(), kChunkKeySize) != 0)
    return Corruption(fmt::format("{}: {} holds another chunk's key there", what, path));
  return VerifyFramedChunk(*framed, what);
}

Result<std::vector<ChunkLocation>> BlockStore::LocateChunks(BlockId id, uint32_t first) const {
  COPSE_ASSIGN_OR_RETURN(StoredBlockInfo info, Stat(id));
  if (first > info.chunks) {
    return InvalidArgument(
        fmt::format("block {} has {} chunks, asked from chunk {}", id, info.chunks, first));
  }
  std::vector<ChunkLocation> out;
  out.reserve(info.chunks - first);
  for (uint32_t i = first; i < info.chunks; ++i)
    out.push_back({id, RecordOffset(i) + kChunkKeySize, ChunkBytes(info.size, i) + kChunkTrailer});
  return out;
}

Status BlockStore::DeleteBlock(BlockId id) {
  // Under the lock: a BeginBlock of the same id creates its file after this
  // removed the old one, not before.
  std::lock_guard<std::mutex> lock(mu_);
  if (writing_.count(id)) return Status::Ok();  // nothing committed yet
  // The record first: a crash between the two leaves a file that Open
  // removes, never a record without its file.
  ResumeAfterFailure();
  rocksdb::Status s = db_->Delete(rocksdb::WriteOptions(), MetaKey(id));
  if (!s.ok()) return Convert(fmt::format("deleting block {}", id), &s);
  RemoveFile(id);
  return Status::Ok();
}

Result<std::vector<StoredBlockInfo>> BlockStore::List() const {
  std::vector<StoredBlockInfo> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek("b"); it->Valid() && it->key().starts_with("b"); it->Next()) {
    Meta m;
    if (it->key().size() != 9 || !DecodeMeta(it->value(), &m)) continue;
    out.push_back({GetBigEndian(it->key().data() + 1, 8), m.size, m.chunks,
                   m.state == kStateCommittedNoSync});
  }
  rocksdb::Status s = it->status();
  if (!s.ok()) return Convert("listing blocks", &s);
  return out;
}

Status BlockStore::CollectGarbage() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<BlockId> ids;
  ids.swap(orphans_);
  for (BlockId id : ids) {
    std::string value;
    if (writing_.count(id) || db_->Get(rocksdb::ReadOptions(), MetaKey(id), &value).ok())
      continue;  // the id was written again since
    RemoveFile(id);
  }
  if (orphans_.empty()) return Status::Ok();
  return IoError(fmt::format("{} block file(s) on {} cannot be removed, the first {}",
                             orphans_.size(), Where(), BlockFilePath(orphans_.front()).string()));
}

uint64_t BlockStore::BlockBytesOnDisk() const {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(blocks_dir_, ec)) {
    uint64_t n = e.file_size(ec);
    if (!ec) total += n;
  }
  return total;
}

Status BlockStore::CorruptChunkForTesting(BlockId id, uint32_t index,
                                          std::span<const uint8_t> value) {
  COPSE_ASSIGN_OR_RETURN(std::vector<ChunkLocation> where, LocateChunks(id, index));
  if (where.empty() || where[0].size != value.size())
    return InvalidArgument(
        fmt::format("chunk {} of block {} is not {} bytes", index, id, value.size()));
  int fd = ::open(BlockFilePath(id).c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return FileError(fmt::format("opening the file of block {}", id), id, err);
  }
  iovec iov{const_cast<uint8_t*>(value.data()), value.size()};
  ssize_t wrote =
      TransferAll([fd](const iovec* v, int n, off_t at) { return ::pwritev(fd, v, n, at); }, &iov,
                  1, where[0].offset);
  int err = errno;
  ::close(fd);
  if (wrote != static_cast<ssize_t>(value.size()))
    return FileError(fmt::format("corrupting chunk {} of block {}", index, id), id,
                     wrote < 0 ? err : EIO);
  return Status::Ok();
}

}  // namespace copse::dfs

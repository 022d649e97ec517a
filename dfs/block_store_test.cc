#include "dfs/block_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "dfs/block_store_testing.h"

namespace copse::dfs {
namespace {

class ScopedDir {
 public:
  ScopedDir() {
    char tmpl[] = "/tmp/copse-blockstore-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~ScopedDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::vector<uint8_t> Pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

class BlockStoreTest : public ::testing::Test {
 protected:
  BlockStoreOptions Options() {
    BlockStoreOptions o;
    o.dir = dir_.path() / "blocks";
    o.computer = "c00";
    o.block_size = block_size_;
    o.free_space = [this](const std::filesystem::path&) -> Result<uint64_t> { return free_; };
    o.sync_on_close = sync_on_close_;
    return o;
  }
  void Open() {
    store_.reset();
    auto s = BlockStore::Open(Options());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  // Writes `data` as block `id` and commits it.
  Status Write(BlockId id, const std::vector<uint8_t>& data, bool commit = true,
               BlockSync sync = BlockSync::kStore) {
    return dfs::testing::WriteBlock(*store_, id, data, commit, sync);
  }
  std::vector<uint8_t> Read(BlockId id) {
    std::vector<uint8_t> out, chunk;
    auto info = store_->Stat(id);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    if (!info.ok()) return out;
    for (uint32_t i = 0; i < info->chunks; ++i) {
      Status s = store_->ReadChunk(id, i, &chunk);
      EXPECT_TRUE(s.ok()) << s.ToString();
      out.insert(out.end(), chunk.begin(), chunk.end() - kChunkTrailer);
    }
    return out;
  }

  ScopedDir dir_;
  uint64_t free_ = uint64_t{1} << 40;
  bool sync_on_close_ = false;
  uint64_t block_size_ = 4 * kChunkSize;
  std::unique_ptr<BlockStore> store_;
};

TEST_F(BlockStoreTest, WritesAndReadsBlocksChunkByChunk) {
  Open();
  auto a = Pattern(3 * kChunkSize + 12345, 1), b = Pattern(100, 2);
  ASSERT_TRUE(Write(7, a).ok());
  ASSERT_TRUE(Write(9, b).ok());
  EXPECT_EQ(Read(7), a);
  EXPECT_EQ(Read(9), b);
  auto info = store_->Stat(7);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, a.size());
  EXPECT_EQ(info->chunks, 4u);
  auto list = store_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, 7u);
  EXPECT_EQ((*list)[1].size, 100u);
}

TEST_F(BlockStoreTest, CommittedBlocksSurviveReopen) {
  Open();
  auto a = Pattern(kChunkSize + 1, 3);
  ASSERT_TRUE(Write(1, a).ok());
  Open();
  EXPECT_EQ(Read(1), a);
}

TEST_F(BlockStoreTest, HalfWrittenBlocksAreInvisibleAndDroppedOnReopen) {
  Open();
  ASSERT_TRUE(Write(5, Pattern(2 * kChunkSize, 4), /*commit=*/false).ok());
  EXPECT_EQ(store_->Stat(5).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->List()->empty());
  EXPECT_TRUE(std::filesystem::exists(store_->BlockFilePath(5)));
  Open();  // the writer "crashed"
  EXPECT_EQ(store_->Stat(5).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(store_->BlockFilePath(5)));
  EXPECT_EQ(store_->BlockBytesOnDisk(), 0u);
  // The id is free again: a retry can write it from scratch.
  auto again = Pattern(10, 5);
  ASSERT_TRUE(Write(5, again).ok());
  EXPECT_EQ(Read(5), again);
}

TEST_F(BlockStoreTest, AbortingABlockRemovesItsFile) {
  Open();
  ASSERT_TRUE(Write(5, Pattern(kChunkSize + 1, 6), /*commit=*/false).ok());
  EXPECT_TRUE(std::filesystem::exists(store_->BlockFilePath(5)));
  store_->AbortBlock(5);
  EXPECT_FALSE(std::filesystem::exists(store_->BlockFilePath(5)));
  EXPECT_EQ(store_->BlockBytesOnDisk(), 0u);
  ASSERT_TRUE(Write(5, Pattern(10, 7)).ok());
  EXPECT_EQ(Read(5), Pattern(10, 7));
}

// A worker process killed after commits keeps every committed block, in
// either durability mode and however the block was committed (a no-sync
// block's file and record are in the page cache), and drops the block it was
// writing with its file. The "worker" is a child process that ends with
// _exit: no destructor, no Close.
TEST_F(BlockStoreTest, AKilledProcessKeepsCommittedBlocksAndDropsTheHalfWritten) {
  auto a = Pattern(3 * kChunkSize + 5, 11), b = Pattern(100, 12), c = Pattern(2 * kChunkSize, 13);
  for (bool sync : {true, false}) {
    SCOPED_TRACE(sync ? "sync_on_close" : "no sync_on_close");
    store_.reset();
    std::filesystem::remove_all(dir_.path() / "blocks");
    sync_on_close_ = sync;
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto s = BlockStore::Open(Options());
      if (!s.ok()) ::_exit(2);
      store_ = std::move(*s);
      bool ok = Write(1, a).ok() && Write(2, b, true, BlockSync::kNoSync).ok() &&
                Write(3, c, /*commit=*/false).ok() &&
                std::filesystem::exists(store_->BlockFilePath(3));
      ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "the child's writes failed";
    Open();
    EXPECT_EQ(Read(1), a);
    EXPECT_EQ(Read(2), b);
    EXPECT_TRUE(store_->Stat(2)->no_sync);
    EXPECT_FALSE(store_->Stat(1)->no_sync);
    EXPECT_EQ(store_->Stat(3).status().code(), StatusCode::kNotFound);
    EXPECT_FALSE(std::filesystem::exists(store_->BlockFilePath(3)));
    auto list = store_->List();
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(list->size(), 2u);
    // The dropped block's id can be written again.
    ASSERT_TRUE(Write(3, b).ok());
    EXPECT_EQ(Read(3), b);
  }
}

// Each block is one file: chunk i's record (key, bytes, CRC32C) at
// i * kChunkRecordSize, and LocateChunks points at the framed value in it.
TEST_F(BlockStoreTest, ABlockIsAFileOfKeyedChunkRecordsAtComputedPlaces) {
  sync_on_close_ = true;
  Open();
  auto a = Pattern(2 * kChunkSize + 9, 14);
  ASSERT_TRUE(Write(4, a).ok());
  EXPECT_EQ(std::filesystem::file_size(store_->BlockFilePath(4)), a.size() + 3 * 16);
  EXPECT_EQ(store_->BlockFilePath(4).filename(), "0000000000000004");
  EXPECT_EQ(store_->BlockBytesOnDisk(), a.size() + 3 * 16);
  auto where = store_->LocateChunks(4, 1);
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  ASSERT_EQ(where->size(), 2u);
  int fd = ::open(store_->BlockFilePath(4).c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  for (uint32_t i = 1; i <= 2; ++i) {
    const ChunkLocation& c = (*where)[i - 1];
    EXPECT_EQ(c.file, 4u);
    EXPECT_EQ(c.offset, i * BlockStore::kChunkRecordSize + kChunkKeySize);
    EXPECT_EQ(c.size, (i == 2 ? 9u : kChunkSize) + kChunkTrailer);
    std::vector<uint8_t> record(kChunkKeySize + c.size);
    ASSERT_EQ(::pread(fd, record.data(), record.size(), static_cast<off_t>(c.offset - 12)),
              static_cast<ssize_t>(record.size()));
    std::string key = ChunkKey(4, i);
    EXPECT_TRUE(std::equal(key.begin(), key.end(), record.begin()));
    std::span<const uint8_t> framed(record.data() + kChunkKeySize, c.size);
    EXPECT_TRUE(VerifyFramedChunk(framed, "chunk").ok());
    EXPECT_TRUE(
        std::equal(framed.begin(), framed.end() - kChunkTrailer, a.begin() + i * kChunkSize));
  }
  ::close(fd);
  EXPECT_EQ(store_->LocateChunks(4, 4).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->LocateChunks(5, 0).status().code(), StatusCode::kNotFound);
}

// The file is allocated ahead of the writes; the commit frees what the
// block did not use.
TEST_F(BlockStoreTest, ACommittedBlockKeepsNoSpaceBeyondItsEnd) {
  for (bool sync : {true, false}) {
    SCOPED_TRACE(sync ? "sync_on_close" : "no sync_on_close");
    sync_on_close_ = sync;
    Open();
    BlockId id = sync ? 1 : 2;
    ASSERT_TRUE(Write(id, Pattern(kChunkSize + 100, 37)).ok());
    struct stat st {};
    ASSERT_EQ(::stat(store_->BlockFilePath(id).c_str(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), kChunkSize + 100 + 2 * 16);
    EXPECT_LE(static_cast<uint64_t>(st.st_blocks) * 512, kChunkSize + 64 * 1024)
        << "space allocated past the end of the block";
    EXPECT_EQ(Read(id), Pattern(kChunkSize + 100, 37));
  }
}

// A block its commit syncs is handed to the disk every 8 chunks while it
// streams in; the block reads back whole, in both modes.
TEST_F(BlockStoreTest, ALargeBlockIsStoredWholeInBothModes) {
  for (bool sync : {true, false}) {
    SCOPED_TRACE(sync ? "sync_on_close" : "no sync_on_close");
    sync_on_close_ = sync;
    block_size_ = 20 * kChunkSize;
    Open();
    auto a = Pattern(17 * kChunkSize + 3, sync ? 40 : 41);
    ASSERT_TRUE(Write(sync ? 1 : 2, a).ok());
    Open();
    EXPECT_EQ(Read(sync ? 1 : 2), a);
  }
}

// A no-sync block (scratch data) is listed as such, and otherwise stored and
// read like any other, in both modes.
TEST_F(BlockStoreTest, NoSyncBlocksAreListedAsSuch) {
  sync_on_close_ = true;
  Open();
  auto a = Pattern(2 * kChunkSize + 7, 16), b = Pattern(100, 17);
  ASSERT_TRUE(Write(1, a, true, BlockSync::kNoSync).ok());
  ASSERT_TRUE(Write(2, b).ok());
  auto list = store_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_TRUE((*list)[0].no_sync);
  EXPECT_FALSE((*list)[1].no_sync);
  Open();
  EXPECT_EQ(Read(1), a);
  EXPECT_TRUE(store_->Stat(1)->no_sync);
  ASSERT_TRUE(store_->DeleteBlock(1).ok());
  ASSERT_TRUE(Write(1, b, true, BlockSync::kNoSync).ok());
  EXPECT_EQ(Read(1), b);
}

// Files no committed block owns are removed on Open: a half-written block's
// (above), and any other.
TEST_F(BlockStoreTest, OpenRemovesFilesWithoutACommittedBlock) {
  Open();
  ASSERT_TRUE(Write(1, Pattern(100, 30)).ok());
  std::filesystem::path blocks = store_->BlockFilePath(1).parent_path();
  for (const char* name : {"00000000000000ff", "stray.tmp"}) {
    std::ofstream(blocks / name) << "left over";
  }
  Open();
  EXPECT_FALSE(std::filesystem::exists(blocks / "00000000000000ff"));
  EXPECT_FALSE(std::filesystem::exists(blocks / "stray.tmp"));
  EXPECT_EQ(Read(1), Pattern(100, 30));
  // A file with a block's name that nobody owns does not stop that block.
  std::ofstream(blocks / "0000000000000002") << "left over";
  ASSERT_TRUE(Write(2, Pattern(10, 31)).ok());
  EXPECT_EQ(Read(2), Pattern(10, 31));
}

// A committed block whose file is missing or shorter than its record says
// (its data did not reach the disk before a power failure) is dropped on
// Open, and its id can be written again; the others stay.
TEST_F(BlockStoreTest, OpenDropsCommittedBlocksWhoseFileIsShortOrMissing) {
  Open();
  auto a = Pattern(2 * kChunkSize, 32);
  for (BlockId id : {1, 2, 3}) ASSERT_TRUE(Write(id, a).ok());
  std::filesystem::path one = store_->BlockFilePath(1);
  store_.reset();
  std::filesystem::resize_file(one, std::filesystem::file_size(one) - 1);
  std::filesystem::remove(one.parent_path() / "0000000000000002");
  Open();
  EXPECT_EQ(store_->Stat(1).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat(2).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(one));
  EXPECT_EQ(Read(3), a);
  ASSERT_EQ(store_->List()->size(), 1u);
  Open();  // the drop was recorded
  ASSERT_EQ(store_->List()->size(), 1u);
  ASSERT_TRUE(Write(1, Pattern(5, 33)).ok());
  EXPECT_EQ(Read(1), Pattern(5, 33));
}

TEST_F(BlockStoreTest, RejectsBadWrites) {
  Open();
  ASSERT_TRUE(store_->BeginBlock(1).ok());
  EXPECT_EQ(store_->BeginBlock(1).code(), StatusCode::kAlreadyExists);
  std::vector<uint8_t> chunk = Pattern(100, 6);
  FrameChunk(&chunk);
  EXPECT_EQ(store_->PutChunk(1, 1, chunk).code(), StatusCode::kInvalidArgument);  // not next
  chunk[3] ^= 1;
  Status s = store_->PutChunk(1, 0, chunk);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  chunk[3] ^= 1;
  ASSERT_TRUE(store_->PutChunk(1, 0, chunk).ok());
  // A short chunk must be the last one.
  EXPECT_EQ(store_->PutChunk(1, 1, chunk).code(), StatusCode::kInvalidArgument);
  // The commit must describe what arrived.
  s = store_->CommitBlock(1, 99, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("100 bytes in 1 chunks arrived"), std::string::npos) << s.message();
  EXPECT_EQ(store_->PutChunk(2, 0, chunk).code(), StatusCode::kFailedPrecondition);
  // More than a block's size.
  ASSERT_TRUE(store_->BeginBlock(3).ok());
  std::vector<uint8_t> full = Pattern(kChunkSize, 7);
  FrameChunk(&full);
  for (uint32_t i = 0; i < 4; ++i) ASSERT_TRUE(store_->PutChunk(3, i, full).ok());
  EXPECT_EQ(store_->PutChunk(3, 4, full).code(), StatusCode::kInvalidArgument);
}

TEST_F(BlockStoreTest, CorruptChunkIsDetectedOnRead) {
  Open();
  auto a = Pattern(2 * kChunkSize, 8);
  ASSERT_TRUE(Write(4, a).ok());
  std::vector<uint8_t> bad(a.begin() + kChunkSize, a.end());
  FrameChunk(&bad);
  bad[1000] ^= 0x40;  // one flipped bit on "disk"
  ASSERT_TRUE(store_->CorruptChunkForTesting(4, 1, bad).ok());
  std::vector<uint8_t> out;
  EXPECT_TRUE(store_->ReadChunk(4, 0, &out).ok());
  Status s = store_->ReadChunk(4, 1, &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("chunk 1 of block 4 on computer c00"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("checksum mismatch"), std::string::npos);
  // Another chunk's record in its place: the key stored before it tells.
  std::filesystem::path file = store_->BlockFilePath(4);
  std::vector<uint8_t> record(BlockStore::kChunkRecordSize);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.read(reinterpret_cast<char*>(record.data()), static_cast<std::streamsize>(record.size()));
    f.seekp(static_cast<std::streamoff>(BlockStore::kChunkRecordSize));
    f.write(reinterpret_cast<const char*>(record.data()),
            static_cast<std::streamsize>(record.size()));
  }
  s = store_->ReadChunk(4, 1, &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("another chunk's key"), std::string::npos) << s.message();
  // A file cut short, or gone.
  std::filesystem::resize_file(file, BlockStore::kChunkRecordSize + 100);
  s = store_->ReadChunk(4, 1, &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("ends inside the chunk"), std::string::npos) << s.message();
  std::filesystem::remove(file);
  s = store_->ReadChunk(4, 0, &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("is missing"), std::string::npos) << s.message();
  // Past the last chunk is a caller's mistake, not corruption.
  EXPECT_EQ(store_->ReadChunk(4, 2, &out).code(), StatusCode::kInvalidArgument);
}

TEST_F(BlockStoreTest, DiskFullRefusesNewBlocks) {
  Open();
  free_ = 3 * kChunkSize;  // less than one block
  Status s = store_->BeginBlock(1);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("disk full on computer c00"), std::string::npos) << s.message();
  free_ = 100 * kChunkSize;
  EXPECT_TRUE(store_->BeginBlock(1).ok());
}

TEST_F(BlockStoreTest, ReserveCountsAsFull) {
  BlockStoreOptions o = Options();
  o.reserve_bytes = 1000 * kChunkSize;
  free_ = 500 * kChunkSize;
  auto store = BlockStore::Open(o);
  ASSERT_TRUE(store.ok());
  Status s = (*store)->BeginBlock(1);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("1000 MiB must stay free"), std::string::npos) << s.message();
}

TEST_F(BlockStoreTest, DeletingABlockFreesItsFileAtOnce) {
  Open();
  for (BlockId id = 1; id <= 4; ++id) ASSERT_TRUE(Write(id, Pattern(2 * kChunkSize, id)).ok());
  uint64_t before = store_->BlockBytesOnDisk();
  EXPECT_EQ(before, 4 * (2 * kChunkSize + 2 * 16));
  for (BlockId id : {1, 2, 3}) ASSERT_TRUE(store_->DeleteBlock(id).ok());
  EXPECT_EQ(store_->Stat(2).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(store_->BlockFilePath(2)));
  EXPECT_EQ(store_->BlockBytesOnDisk(), before / 4);
  EXPECT_TRUE(store_->CollectGarbage().ok());
  EXPECT_TRUE(store_->DeleteBlock(9).ok());  // absent: no-op
  EXPECT_EQ(Read(4), Pattern(2 * kChunkSize, 4));
  ASSERT_EQ(store_->List()->size(), 1u);
  Open();
  ASSERT_EQ(store_->List()->size(), 1u);
}

// DeleteBlock leaves a block being written alone (nothing is committed yet).
TEST_F(BlockStoreTest, DeletingABlockBeingWrittenLeavesIt) {
  Open();
  auto a = Pattern(kChunkSize + 3, 34);
  ASSERT_TRUE(store_->BeginBlock(6).ok());
  ASSERT_TRUE(store_->DeleteBlock(6).ok());
  std::vector<uint8_t> chunk(a.begin(), a.begin() + kChunkSize),
      rest(a.begin() + kChunkSize, a.end());
  FrameChunk(&chunk);
  FrameChunk(&rest);
  ASSERT_TRUE(store_->PutChunk(6, 0, chunk).ok());
  ASSERT_TRUE(store_->PutChunk(6, 1, rest).ok());
  ASSERT_TRUE(store_->CommitBlock(6, a.size(), 2).ok());
  EXPECT_EQ(Read(6), a);
}

// A block's file is replaced, never rewritten: a descriptor opened on a
// deleted block (a local reader's) keeps reading what it was handed after
// the id is written again, while the store reads the new block.
TEST_F(BlockStoreTest, ARewrittenIdGetsANewFile) {
  Open();
  auto a = Pattern(kChunkSize, 35), b = Pattern(kChunkSize, 36);
  ASSERT_TRUE(Write(5, a).ok());
  int fd = ::open(store_->BlockFilePath(5).c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(store_->DeleteBlock(5).ok());
  ASSERT_TRUE(Write(5, b).ok());
  std::vector<uint8_t> old(kChunkSize);
  ASSERT_EQ(::pread(fd, old.data(), old.size(), kChunkKeySize), static_cast<ssize_t>(kChunkSize));
  ::close(fd);
  EXPECT_EQ(old, a);
  EXPECT_EQ(Read(5), b);
}

// A store directory of the earlier layout (chunks in a RocksDB column family
// with blob files) is refused, naming the directory.
TEST_F(BlockStoreTest, AnOldLayoutIsRefused) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {"chunks", rocksdb::ColumnFamilyOptions()}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, Options().dir.string(), families, &handles, &db).ok());
  for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
  delete db;
  auto s = BlockStore::Open(Options());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find(Options().dir.string() + " has the old layout"),
            std::string::npos)
      << s.status().message();
}

TEST_F(BlockStoreTest, SecondOpenOfTheSameDirIsRefused) {
  Open();
  auto second = BlockStore::Open(Options());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("in use by another process"), std::string::npos);
}

}  // namespace
}  // namespace copse::dfs

#include "dfs/block_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>

#include "common/subprocess.h"
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
    o.block_size = 4 * kChunkSize;
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
  Open();  // the writer "crashed"
  EXPECT_EQ(store_->Stat(5).status().code(), StatusCode::kNotFound);
  // The id is free again: a retry can write it from scratch.
  auto again = Pattern(10, 5);
  ASSERT_TRUE(Write(5, again).ok());
  EXPECT_EQ(Read(5), again);
}

// sync_on_close false: a worker process killed after commits keeps every
// committed block (RocksDB replays its write-ahead log) and drops the block it
// was writing. The "worker" is a child process that ends with _exit: no
// destructor, no Close, no flush.
TEST_F(BlockStoreTest, AKilledProcessKeepsCommittedBlocksFromTheLog) {
  auto a = Pattern(3 * kChunkSize + 5, 11), b = Pattern(100, 12), c = Pattern(2 * kChunkSize, 13);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto s = BlockStore::Open(Options());
    if (!s.ok()) ::_exit(2);
    store_ = std::move(*s);
    bool ok = Write(1, a).ok() && Write(2, b).ok() && Write(3, c, /*commit=*/false).ok();
    // Nothing reached a blob file: the blocks live in the memtable and the log.
    ok = ok && store_->BlobBytesOnDisk() == 0;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child's writes failed";
  Open();
  EXPECT_EQ(Read(1), a);
  EXPECT_EQ(Read(2), b);
  EXPECT_EQ(store_->Stat(3).status().code(), StatusCode::kNotFound);
  auto list = store_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  // The replayed blocks were flushed on open: their chunks are located.
  auto where = store_->LocateChunks(1, 0);
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  EXPECT_EQ(where->size(), 4u);
  // The dropped block's chunks are gone; its id can be written again.
  std::vector<uint8_t> chunk;
  EXPECT_FALSE(store_->ReadChunk(3, 0, &chunk).ok());
  ASSERT_TRUE(Write(3, b).ok());
  EXPECT_EQ(Read(3), b);
}

// sync_on_close false: a just-committed block is still in a memtable. The data
// port's read (ReadChunk) gets it through RocksDB; LocateChunks (the local read
// path) flushes it to its blob files and then knows where every chunk is.
TEST_F(BlockStoreTest, AJustCommittedBlockIsReadFromTheMemtableAndLocatedAfterAFlush) {
  Open();
  auto a = Pattern(2 * kChunkSize + 9, 14);
  ASSERT_TRUE(Write(4, a).ok());
  EXPECT_EQ(store_->BlobBytesOnDisk(), 0u);
  EXPECT_EQ(Read(4), a);
  EXPECT_EQ(store_->BlobBytesOnDisk(), 0u);
  auto where = store_->LocateChunks(4, 1);
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  ASSERT_EQ(where->size(), 2u);
  EXPECT_EQ((*where)[1].size, 9u + kChunkTrailer);
  EXPECT_GT(store_->BlobBytesOnDisk(), 0u);
  EXPECT_EQ(Read(4), a);  // now straight from the blob file
}

// sync_on_close true: the block is in its blob files when Commit returns.
TEST_F(BlockStoreTest, SyncOnCloseFlushesTheBlockOnCommit) {
  sync_on_close_ = true;
  Open();
  auto a = Pattern(kChunkSize + 3, 15);
  ASSERT_TRUE(Write(6, a).ok());
  EXPECT_GE(store_->BlobBytesOnDisk(), a.size());
  EXPECT_EQ(Read(6), a);
  Open();
  EXPECT_EQ(Read(6), a);
}

// A no-sync block (scratch data) commits without a flush or sync even when
// the store syncs every other block on commit.
TEST_F(BlockStoreTest, NoSyncBlockCommitsWithoutAFlush) {
  sync_on_close_ = true;
  Open();
  auto a = Pattern(2 * kChunkSize + 7, 16), b = Pattern(100, 17);
  ASSERT_TRUE(Write(1, a, true, BlockSync::kNoSync).ok());
  EXPECT_EQ(store_->BlobBytesOnDisk(), 0u) << "nothing was flushed";
  auto info = store_->Stat(1);
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->no_sync);
  EXPECT_EQ(Read(1), a);
  ASSERT_TRUE(Write(2, b).ok());  // synced: flushes everything before it too
  EXPECT_GE(store_->BlobBytesOnDisk(), a.size());
  EXPECT_FALSE(store_->Stat(2)->no_sync);
  auto list = store_->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_TRUE((*list)[0].no_sync);
  EXPECT_FALSE((*list)[1].no_sync);
  Open();
  EXPECT_EQ(Read(1), a);
  EXPECT_TRUE(store_->Stat(1)->no_sync);
  // Deleting it deletes its commit marker too: the id can be written again.
  ASSERT_TRUE(store_->DeleteBlock(1).ok());
  ASSERT_TRUE(Write(1, b, true, BlockSync::kNoSync).ok());
  EXPECT_EQ(Read(1), b);
}

// A worker process killed after committing no-sync blocks keeps those a flush
// carried to disk (here, with the synced block committed after them) and
// drops the rest whole: their committed state is in the log, their chunks
// were only in a memtable. The "worker" is BlockStoreKilledWriter below, run
// in a process of its own that ends with _exit (no destructor, no Close, no
// flush), in both durability modes. It is a fresh process rather than a
// forked copy of this one: RocksDB's shared thread pools would count the
// threads earlier tests started, which a fork does not copy, and nothing
// would flush.
TEST_F(BlockStoreTest, AKilledProcessKeepsOnlyTheNoSyncBlocksAFlushCarried) {
  for (bool sync : {true, false}) {
    SCOPED_TRACE(sync ? "sync_on_close" : "no sync_on_close");
    store_.reset();
    std::filesystem::remove_all(dir_.path() / "blocks");
    sync_on_close_ = sync;
    SpawnOptions child;
    child.program = std::filesystem::read_symlink("/proc/self/exe");
    child.args = {"--gtest_also_run_disabled_tests",
                  "--gtest_filter=BlockStoreKilledWriter.DISABLED_WritesAndDies"};
    child.env = std::vector<std::string>{};
    for (char** e = environ; *e; ++e) child.env->push_back(*e);
    child.env->push_back("COPSE_TEST_BLOCKS_DIR=" + Options().dir.string());
    child.env->push_back(std::string("COPSE_TEST_SYNC_ON_CLOSE=") + (sync ? "1" : "0"));
    child.out = child.err = SpawnOptions::Output::kPipe;
    auto ran = RunProcess(child, std::chrono::seconds(120));
    ASSERT_TRUE(ran.ok()) << ran.status().ToString();
    ASSERT_TRUE(ran->status.ok()) << ran->status.ToString() << "\n" << ran->out << ran->err;
    Open();
    EXPECT_EQ(Read(1), Pattern(kChunkSize + 5, 18));
    EXPECT_EQ(Read(2), Pattern(300, 19));
    EXPECT_EQ(store_->Stat(3).status().code(), StatusCode::kNotFound);
    auto list = store_->List();
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(list->size(), 2u);
    auto again = Pattern(10, 21);
    ASSERT_TRUE(Write(3, again, true, BlockSync::kNoSync).ok());
    EXPECT_EQ(Read(3), again);
  }
}

// The writer AKilledProcessKeepsOnlyTheNoSyncBlocksAFlushCarried starts: a
// no-sync block, a synced one and a flush, another no-sync block, then _exit.
TEST(BlockStoreKilledWriter, DISABLED_WritesAndDies) {
  const char* dir = std::getenv("COPSE_TEST_BLOCKS_DIR");
  const char* sync = std::getenv("COPSE_TEST_SYNC_ON_CLOSE");
  if (!dir || !sync) GTEST_SKIP() << "run by AKilledProcessKeepsOnlyTheNoSyncBlocksAFlushCarried";
  BlockStoreOptions o;
  o.dir = dir;
  o.block_size = 4 * kChunkSize;
  o.sync_on_close = std::string(sync) == "1";
  auto s = BlockStore::Open(o);
  if (!s.ok()) ::_exit(2);
  BlockStore& store = **s;
  using dfs::testing::WriteBlock;
  bool ok = WriteBlock(store, 1, Pattern(kChunkSize + 5, 18), true, BlockSync::kNoSync).ok() &&
            WriteBlock(store, 2, Pattern(300, 19)).ok() &&
            store.LocateChunks(2, 0).ok() &&  // flushes the chunks of 1 and 2
            WriteBlock(store, 3, Pattern(2 * kChunkSize, 20), true, BlockSync::kNoSync).ok() &&
            store.Stat(3).ok();
  ::_exit(ok ? 0 : 1);
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

TEST_F(BlockStoreTest, DeletedBlocksLeaveAndGarbageCollectionFreesTheirBlobFiles) {
  sync_on_close_ = true;  // the blocks are in blob files once committed
  Open();
  for (BlockId id = 1; id <= 4; ++id) ASSERT_TRUE(Write(id, Pattern(2 * kChunkSize, id)).ok());
  uint64_t before = store_->BlobBytesOnDisk();
  EXPECT_GE(before, 8 * kChunkSize);
  for (BlockId id : {1, 2, 3}) ASSERT_TRUE(store_->DeleteBlock(id).ok());
  EXPECT_EQ(store_->Stat(2).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->CollectGarbage().ok());
  uint64_t after = store_->BlobBytesOnDisk();
  EXPECT_LE(after, before - 6 * kChunkSize) << before << " -> " << after;
  EXPECT_EQ(Read(4), Pattern(2 * kChunkSize, 4));
  ASSERT_EQ(store_->List()->size(), 1u);
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

#include "dfs/namespace.h"

#include <gtest/gtest.h>

#include "dfs/namespace_testing.h"
#include "dfs/paths.h"

namespace copse::dfs {
namespace {

using std::chrono::seconds;

using testing::Live;

class NamespaceTest : public ::testing::Test {
 protected:
  NamespaceTest() : ns_(Options(), store_) { EXPECT_TRUE(ns_.Load(now_).ok()); }

  static NamespaceOptions Options() { return testing::SmallNamespace(); }

  CreateResult Create(const std::string& path, int partitions, const std::string& writer = "c00",
                      const std::string& job = "") {
    CreateRequest req;
    req.path = path;
    req.partitions = partitions;
    req.writer = writer;
    req.scratch_job = job;
    auto r = ns_.Create(req, Live(), rng_, now_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : CreateResult{};
  }

  // Allocates and commits one block of `size` bytes on its targets.
  Result<bool> WritePartition(FileId file, int partition, uint64_t size) {
    COPSE_ASSIGN_OR_RETURN(Allocation a,
                           ns_.AllocateBlock({file, partition, {}}, Live(), rng_, now_));
    return ns_.CommitPartition(file, partition, {{a.id, size, a.targets}}, now_, &deletions_);
  }

  MemMetaStore store_;
  Namespace ns_;
  std::mt19937_64 rng_{1};
  Timestamp now_{seconds(100)};
  Deletions deletions_;
};

TEST_F(NamespaceTest, FileBecomesVisibleOnlyWhenEveryPartitionIsCommitted) {
  CreateResult f = Create("/data/words", 2);
  EXPECT_EQ(f.replication, 3);
  EXPECT_EQ(ns_.Stat("/data/words").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ns_.List("/").value().size(), 0u);
  auto first = WritePartition(f.id, 0, 700);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(*first);
  EXPECT_EQ(ns_.Stat("/data/words").status().code(), StatusCode::kNotFound);
  auto second = WritePartition(f.id, 1, 300);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(*second);
  auto st = ns_.Stat("/data/words");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->size, 1000u);
  ASSERT_EQ(st->partitions.size(), 2u);
  ASSERT_EQ(st->partitions[0].blocks.size(), 1u);
  EXPECT_EQ(st->partitions[0].blocks[0].replicas.size(), 3u);
  EXPECT_EQ(st->partitions[0].blocks[0].replicas[0], "c00");  // the writer
  auto root = ns_.List("/");
  ASSERT_TRUE(root.ok());
  ASSERT_EQ(root->size(), 1u);
  EXPECT_TRUE((*root)[0].is_dir);
  EXPECT_EQ((*root)[0].path, "/data");
  auto dir = ns_.List("/data");
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(dir->size(), 1u);
  EXPECT_EQ((*dir)[0].path, "/data/words");
  EXPECT_EQ((*dir)[0].partitions, 2);
}

TEST_F(NamespaceTest, NamespaceSurvivesARestart) {
  CreateResult f = Create("/a", 1);
  ASSERT_TRUE(WritePartition(f.id, 0, 10).ok());
  CreateResult pending = Create("/b", 1);
  Namespace again(Options(), store_);
  ASSERT_TRUE(again.Load(now_).ok());
  auto st = again.Stat("/a");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->partitions[0].blocks[0].replicas, ns_.Stat("/a")->partitions[0].blocks[0].replicas);
  // The pending write can go on against the restarted namespace...
  auto a = again.AllocateBlock({pending.id, 0, {}}, Live(), rng_, now_);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_GT(a->id, st->partitions[0].blocks[0].id);  // ids are never reused
  ASSERT_TRUE(again.CommitPartition(pending.id, 0, {{a->id, 5, {"c01"}}}, now_, &deletions_).ok());
  EXPECT_TRUE(again.Stat("/b").ok());
  // ... and new files get fresh ids.
  CreateRequest req;
  req.path = "/c";
  auto c = again.Create(req, Live(), rng_, now_);
  ASSERT_TRUE(c.ok());
  EXPECT_GT(c->id, pending.id);
}

// The id counters are stored ahead of use, so most changes do not rewrite
// them, and a namespace restarted from the store never hands out an id it
// gave out before, even one whose change was never stored.
TEST_F(NamespaceTest, IdsAreReservedAheadAndNeverReusedAfterARestart) {
  CreateResult f = Create("/a", 1);
  ASSERT_TRUE(WritePartition(f.id, 0, 10).ok());
  CreateResult pending = Create("/b", 1);
  auto last = ns_.AllocateBlock({pending.id, 0, {}}, Live(), rng_, now_);
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  Namespace again(Options(), store_);
  ASSERT_TRUE(again.Load(now_).ok());
  CreateRequest req;
  req.path = "/c";
  auto c = again.Create(req, Live(), rng_, now_);
  ASSERT_TRUE(c.ok());
  EXPECT_GT(c->id, pending.id + 1000);  // continues from the reserve
  auto b = again.AllocateBlock({c->id, 0, {}}, Live(), rng_, now_);
  ASSERT_TRUE(b.ok());
  EXPECT_GT(b->id, last->id + 1000);
}

TEST_F(NamespaceTest, AFailedStoreWriteChangesNothing) {
  CreateResult f = Create("/a", 1);
  store_.FailNextApply(IoError("disk on fire"));
  auto a = ns_.AllocateBlock({f.id, 0, {}}, Live(), rng_, now_);
  EXPECT_EQ(a.status().code(), StatusCode::kIoError);
  EXPECT_EQ(ns_.block_count(), 0u);
  store_.FailNextApply(IoError("disk on fire"));
  CreateRequest req;
  req.path = "/b";
  EXPECT_FALSE(ns_.Create(req, Live(), rng_, now_).ok());
  EXPECT_EQ(ns_.file_count(), 1u);
}

TEST_F(NamespaceTest, AbandonedAndExpiredWritesLeaveNothing) {
  CreateResult f = Create("/a", 2);
  ASSERT_TRUE(WritePartition(f.id, 0, 10).ok());
  auto stored = ns_.AllocateBlock({f.id, 1, {}}, Live(), rng_, now_);
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(ns_.BlockStored("c11", stored->id, 10, &deletions_).ok());
  ASSERT_TRUE(ns_.Abandon(f.id, &deletions_).ok());
  EXPECT_EQ(ns_.block_count(), 0u);
  EXPECT_EQ(ns_.file_count(), 0u);
  EXPECT_TRUE(deletions_["c11"].count(stored->id));
  EXPECT_EQ(deletions_["c00"].size(), 1u);  // partition 0's block
  // The path is free again.
  CreateResult g = Create("/a", 1);
  // A writer that goes quiet is dropped after the grace period, not before.
  ASSERT_TRUE(ns_.AllocateBlock({g.id, 0, {}}, Live(), rng_, now_).ok());
  ASSERT_TRUE(ns_.CollectExpired(now_ + seconds(60), &deletions_).ok());
  EXPECT_EQ(ns_.file_count(), 1u);
  ASSERT_TRUE(ns_.CollectExpired(now_ + seconds(61), &deletions_).ok());
  EXPECT_EQ(ns_.file_count(), 0u);
  EXPECT_EQ(ns_.block_count(), 0u);
}

TEST_F(NamespaceTest, RetriedBlocksAreDroppedOnCommit) {
  CreateResult f = Create("/a", 1);
  auto first = ns_.AllocateBlock({f.id, 0, {}}, Live(), rng_, now_);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(ns_.BlockStored("c10", first->id, 10, &deletions_).ok());
  // The first pipeline failed at its head; the writer retries without it.
  auto second = ns_.AllocateBlock({f.id, 0, {first->targets[0]}}, Live(), rng_, now_);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(std::count(second->targets.begin(), second->targets.end(), first->targets[0]), 0);
  EXPECT_EQ(second->targets.size(), 3u);
  ASSERT_TRUE(
      ns_.CommitPartition(f.id, 0, {{second->id, 10, second->targets}}, now_, &deletions_).ok());
  EXPECT_TRUE(deletions_["c10"].count(first->id));
  EXPECT_EQ(ns_.block_count(), 1u);
}

TEST_F(NamespaceTest, CommitChecksItsBlocks) {
  CreateResult f = Create("/a", 1);
  CreateResult g = Create("/b", 1);
  auto a = ns_.AllocateBlock({f.id, 0, {}}, Live(), rng_, now_);
  auto b = ns_.AllocateBlock({g.id, 0, {}}, Live(), rng_, now_);
  ASSERT_TRUE(a.ok() && b.ok());
  auto foreign = ns_.CommitPartition(f.id, 0, {{b->id, 10, {"c00"}}}, now_, &deletions_);
  EXPECT_EQ(foreign.status().code(), StatusCode::kInvalidArgument);
  auto too_big = ns_.CommitPartition(f.id, 0, {{a->id, 1001, {"c00"}}}, now_, &deletions_);
  EXPECT_EQ(too_big.status().code(), StatusCode::kInvalidArgument);
  auto no_replica = ns_.CommitPartition(f.id, 0, {{a->id, 10, {}}}, now_, &deletions_);
  EXPECT_EQ(no_replica.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ns_.CommitPartition(f.id, 3, {}, now_, &deletions_).status().code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(ns_.CommitPartition(f.id, 0, {{a->id, 10, {"c00"}}}, now_, &deletions_).ok());
  EXPECT_EQ(ns_.CommitPartition(f.id, 0, {}, now_, &deletions_).status().code(),
            StatusCode::kNotFound);  // the file is complete
}

TEST_F(NamespaceTest, EmptyPartitionsCommitWithoutBlocks) {
  CreateResult f = Create("/a", 2);
  ASSERT_TRUE(ns_.CommitPartition(f.id, 0, {}, now_, &deletions_).ok());
  ASSERT_TRUE(WritePartition(f.id, 1, 5).ok());
  auto st = ns_.Stat("/a");
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->partitions[0].blocks.empty());
  EXPECT_EQ(st->size, 5u);
}

TEST_F(NamespaceTest, PathsAreCheckedAndFilesAreNotDirectories) {
  for (const char* bad : {"relative", "/a//b", "/a/", "/a/../b", "/./a", "/"}) {
    CreateRequest req;
    req.path = bad;
    EXPECT_EQ(ns_.Create(req, Live(), rng_, now_).status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
  CreateResult f = Create("/x/y", 1);
  ASSERT_TRUE(WritePartition(f.id, 0, 1).ok());
  CreateRequest req;
  req.path = "/x/y";
  EXPECT_EQ(ns_.Create(req, Live(), rng_, now_).status().code(), StatusCode::kAlreadyExists);
  req.path = "/x";
  EXPECT_NE(ns_.Create(req, Live(), rng_, now_).status().message().find("it is a directory"),
            std::string::npos);
  req.path = "/x/y/z";
  EXPECT_NE(ns_.Create(req, Live(), rng_, now_).status().message().find("/x/y is a file"),
            std::string::npos);
  req.path = "/.scratch/j/x";
  EXPECT_NE(ns_.Create(req, Live(), rng_, now_).status().message().find("reserved"),
            std::string::npos);
  req.path = "/big";
  req.replication = 7;
  EXPECT_NE(ns_.Create(req, Live(), rng_, now_)
                .status()
                .message()
                .find("not enough computers for the requested replication"),
            std::string::npos);
  EXPECT_EQ(ns_.Stat("/x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ns_.Stat("/nope").status().message(), "no such file: /nope");
  EXPECT_EQ(ns_.List("/nope").status().code(), StatusCode::kNotFound);
}

TEST_F(NamespaceTest, DeleteRemovesTheFileAndAsksReplicasToDropItsBlocks) {
  CreateResult f = Create("/a", 1);
  ASSERT_TRUE(WritePartition(f.id, 0, 10).ok());
  auto st = ns_.Stat("/a");
  ASSERT_TRUE(ns_.Delete("/a", &deletions_).ok());
  for (const std::string& r : st->partitions[0].blocks[0].replicas)
    EXPECT_TRUE(deletions_[r].count(st->partitions[0].blocks[0].id)) << r;
  EXPECT_EQ(ns_.Stat("/a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ns_.Delete("/a", &deletions_).code(), StatusCode::kNotFound);
  EXPECT_EQ(ns_.block_count(), 0u);
}

TEST_F(NamespaceTest, ScratchPartitionsAreReadableOneByOneAndDieWithTheirJob) {
  CreateRequest req;
  req.path = ScratchPath("job7", "stage1.v0");
  req.partitions = 3;
  req.scratch_job = "job7";
  EXPECT_NE(ns_.Create(req, Live(), rng_, now_).status().message().find("use --computer"),
            std::string::npos);
  req.writer = "c11";
  req.replication = 3;  // ignored: scratch data has one replica, on the writer
  auto f = ns_.Create(req, Live(), rng_, now_);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->replication, 1);
  auto a = ns_.AllocateBlock({f->id, 1, {}}, Live(), rng_, now_);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->targets, std::vector<std::string>{"c11"});
  ASSERT_TRUE(ns_.CommitPartition(f->id, 1, {{a->id, 10, {"c11"}}}, now_, &deletions_).ok());
  auto st = ns_.Stat(req.path);
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->partitions[0].committed);
  EXPECT_TRUE(st->partitions[1].committed);
  EXPECT_EQ(st->partitions[1].blocks[0].replicas, std::vector<std::string>{"c11"});
  // A reader of one partition gets that partition's blocks, and the sizes
  // and states of all.
  auto one = ns_.Stat(req.path, 1);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->partitions.size(), 3u);
  EXPECT_EQ(one->partitions[1].blocks.size(), 1u);
  EXPECT_EQ(one->partitions[1].size, 10u);
  EXPECT_EQ(one->size, 10u);
  auto other = ns_.Stat(req.path, 0);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->partitions[1].blocks.empty());
  EXPECT_EQ(other->partitions[1].size, 10u);
  EXPECT_TRUE(other->partitions[1].committed);
  // Re-replication leaves scratch blocks alone: they are not listed.
  for (const ReplicatedBlock& rb : ns_.CommittedBlocks()) EXPECT_NE(rb.id, a->id);
  // A partition whose writer is gone cannot be written.
  auto dead = ns_.AllocateBlock({f->id, 2, {}}, Live({"c11"}), rng_, now_);
  EXPECT_EQ(dead.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(dead.status().message().find("kept on computer c11"), std::string::npos);
  // Uncommitted scratch blocks are collected after the grace period only.
  auto b = ns_.AllocateBlock({f->id, 0, {}}, Live(), rng_, now_);
  ASSERT_TRUE(ns_.BlockStored("c11", b->id, 4, &deletions_).ok());
  ASSERT_TRUE(ns_.CollectExpired(now_ + seconds(30), &deletions_).ok());
  EXPECT_EQ(ns_.block_count(), 2u);
  ASSERT_TRUE(ns_.CollectExpired(now_ + seconds(61), &deletions_).ok());
  EXPECT_EQ(ns_.block_count(), 1u);
  EXPECT_TRUE(deletions_["c11"].count(b->id));
  EXPECT_TRUE(ns_.Stat(req.path).ok());  // committed partitions stay
  auto gone = ns_.DeleteJob("job7", &deletions_);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(*gone, 1);
  EXPECT_EQ(ns_.Stat(req.path).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(deletions_["c11"].count(a->id));
}

TEST_F(NamespaceTest, BlockReportsReconcileReplicas) {
  CreateResult f = Create("/a", 1);
  auto a = ns_.AllocateBlock({f.id, 0, {}}, Live(), rng_, now_);
  ASSERT_TRUE(ns_.CommitPartition(f.id, 0, {{a->id, 10, {"c00", "c10"}}}, now_, &deletions_).ok());
  // c10 lost the block, c12 has a copy nobody recorded, c00 has a stranger.
  ASSERT_TRUE(ns_.ReportBlocks("c10", {}, &deletions_).ok());
  ASSERT_TRUE(ns_.ReportBlocks("c12", {{a->id, 10}}, &deletions_).ok());
  ASSERT_TRUE(ns_.ReportBlocks("c00", {{a->id, 10}, {999, 5}}, &deletions_).ok());
  EXPECT_EQ(ns_.ReplicasOf(a->id), (std::vector<std::string>{"c00", "c12"}));
  EXPECT_EQ(deletions_["c00"], std::set<BlockId>{999});
  // A copy whose size disagrees is bad.
  ASSERT_TRUE(ns_.ReportBlocks("c12", {{a->id, 11}}, &deletions_).ok());
  EXPECT_EQ(ns_.ReplicasOf(a->id), std::vector<std::string>{"c00"});
  EXPECT_TRUE(deletions_["c12"].count(a->id));
  ASSERT_TRUE(ns_.DropReplica(a->id, "c00").ok());
  EXPECT_TRUE(ns_.ReplicasOf(a->id).empty());
  // And it all persists.
  Namespace again(Options(), store_);
  ASSERT_TRUE(again.Load(now_).ok());
  EXPECT_TRUE(again.ReplicasOf(a->id).empty());
}

TEST_F(NamespaceTest, ColocateAndConfineRecordTheirPlacement) {
  CreateResult f = Create("/left", 3);
  for (int p = 0; p < 3; ++p) ASSERT_TRUE(WritePartition(f.id, p, 10).ok());
  CreateRequest req;
  req.path = "/right";
  req.partitions = 3;
  req.placement = *ParsePlacementMode("colocate /left");
  auto g = ns_.Create(req, Live(), rng_, now_);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (int p = 0; p < 3; ++p) {
    auto a = ns_.AllocateBlock({g->id, p, {}}, Live(), rng_, now_);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->targets, ns_.Stat("/left")->partitions[static_cast<size_t>(p)].blocks[0].replicas);
  }
  req.path = "/nowhere";
  req.placement = *ParsePlacementMode("colocate /missing");
  EXPECT_EQ(ns_.Create(req, Live(), rng_, now_).status().code(), StatusCode::kNotFound);
  req.path = "/confined";
  req.placement = *ParsePlacementMode("confine 3 r1");
  auto c = ns_.Create(req, Live(), rng_, now_);
  ASSERT_TRUE(c.ok());
  // A failed computer is replaced inside the rack.
  auto a = ns_.AllocateBlock({c->id, 0, {"c10"}}, Live(), rng_, now_);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->targets.size(), 2u);  // only c11 and c12 remain in r1
  for (const auto& t : a->targets) EXPECT_EQ(t[1], '1');
  ASSERT_TRUE(ns_.CommitPartition(c->id, 0, {{a->id, 3, a->targets}}, now_, &deletions_).ok());
  auto blocks = ns_.CommittedBlocks();
  auto it = std::find_if(blocks.begin(), blocks.end(),
                         [&](const ReplicatedBlock& b) { return b.id == a->id; });
  ASSERT_NE(it, blocks.end());
  EXPECT_EQ(it->confine_rack, "r1");
  EXPECT_EQ(it->replication, 3);
}

}  // namespace
}  // namespace copse::dfs

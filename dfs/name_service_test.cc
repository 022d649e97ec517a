// NameService's calls for the execution engine, with a fake WorkerSender and
// explicit times: what they drop reaches the workers as deletions.
#include "dfs/name_service.h"

#include <gtest/gtest.h>

#include "dfs/paths.h"

namespace copse::dfs {
namespace {

using std::chrono::seconds;

class FakeSender final : public WorkerSender {
 public:
  bool DeleteBlocks(const std::string& computer, const std::vector<BlockId>& blocks) override {
    deleted[computer].insert(blocks.begin(), blocks.end());
    return true;
  }
  bool Replicate(const std::string&, BlockId, uint64_t, const std::vector<Endpoint>&) override {
    return true;
  }
  std::map<std::string, std::set<BlockId>> deleted;
};

ClusterConfig TwoRacks() {
  ClusterConfig c;
  c.replication = 2;
  c.block_size_bytes = 2 << 20;
  for (const char* name : {"c00", "c01", "c10", "c11"}) {
    ComputerConfig cc;
    cc.name = name;
    cc.rack = std::string("r") + name[1];
    cc.host = "127.0.0.1";
    c.computers.push_back(cc);
  }
  return c;
}

class NameServiceJobsTest : public ::testing::Test {
 protected:
  NameServiceJobsTest() : names_(config_, store_, sender_, NameServiceOptions{}) {
    EXPECT_TRUE(names_.Load(now_).ok());
    for (const ComputerConfig& c : config_.computers) {
      names_.OnComputerUp(c.name, now_);
      EXPECT_TRUE(names_.OnBlockReport(c.name, {}).ok());
    }
  }

  // Run `run` on c10 writes one block of `partition` and the worker reports it.
  Result<BlockId> WriteBlock(FileId file, int partition, RunId run) {
    COPSE_ASSIGN_OR_RETURN(BlockAllocation a,
                           names_.AllocateBlock({file, partition, {}, "c10", run}, now_));
    COPSE_RETURN_IF_ERROR(names_.OnBlockReceived(a.targets[0].computer, a.id, 5));
    return a.id;
  }

  ClusterConfig config_ = TwoRacks();
  MemMetaStore store_;
  FakeSender sender_;
  NameService names_;
  Timestamp now_{seconds(100)};
};

TEST_F(NameServiceJobsTest, JobOutputsArePublishedOrDroppedAsAWhole) {
  CreateRequest req;
  req.path = "/out";
  req.partitions = 2;
  req.writer = "c00";
  req.output_job = "job1";
  auto out = names_.Create(req, now_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->replication, 2);
  auto open = names_.OpenOutput("/out");
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  EXPECT_EQ(open->id, out->id);
  EXPECT_EQ(open->partitions, 2);
  EXPECT_EQ(open->block_size, 2u << 20);
  EXPECT_EQ(open->job, "job1");

  auto a = WriteBlock(out->id, 0, {7, 0});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto loser = WriteBlock(out->id, 0, {8, 0});
  ASSERT_TRUE(loser.ok());
  auto won = names_.CommitPartition(out->id, 0, {{*a, 5, {"c10"}}}, now_);
  ASSERT_TRUE(won.ok()) << won.status().ToString();
  EXPECT_TRUE(sender_.deleted["c10"].count(*loser)) << "the losing run's block is deleted";
  EXPECT_EQ(names_.CommitPartition(out->id, 0, {{*loser, 5, {"c10"}}}, now_).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(names_.PublishJobOutputs("job1").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(names_.PendingOutputJobs(), std::vector<std::string>{"job1"});

  auto dropped = names_.DropJobOutputs("job1");
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, 1);
  EXPECT_TRUE(sender_.deleted["c10"].count(*a));
  EXPECT_TRUE(names_.PendingOutputJobs().empty());
  EXPECT_EQ(names_.PublishJobOutputs("job1").value(), 0);
}

TEST_F(NameServiceJobsTest, AbandonRunDeletesWhatTheRunLeft) {
  CreateRequest req;
  req.path = ScratchPath("job2", "map.v0");
  req.partitions = 3;
  req.writer = "c10";
  req.scratch_job = "job2";
  req.run = {9, 1};
  auto f = names_.Create(req, now_);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(names_.ScratchJobs(), std::vector<std::string>{"job2"});
  auto b = WriteBlock(f->id, 0, {9, 1});
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(names_.CommitPartitions(f->id, {{0, {{*b, 5, {"c10"}}}}, {1, {}}}, now_).ok());
  auto other_attempt = names_.AbandonRun(9, 2);
  ASSERT_TRUE(other_attempt.ok());
  EXPECT_EQ(other_attempt->files, 0) << "another attempt of the task wrote nothing";
  auto dropped = names_.AbandonRun(9, 1);
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_EQ(dropped->files, 1);
  EXPECT_TRUE(sender_.deleted["c10"].count(*b));
  EXPECT_TRUE(names_.ScratchJobs().empty());
  // A late report of the block is answered with its deletion.
  sender_.deleted.clear();
  ASSERT_TRUE(names_.OnBlockReceived("c10", *b, 5).ok());
  EXPECT_TRUE(sender_.deleted["c10"].count(*b));
}

// Draining a computer: no new replica goes there, its blocks count as short
// until copied to computers that stay, and Drain() says what would be lost.
TEST_F(NameServiceJobsTest, DrainingComputerGetsNoReplicasAndItsBlocksAreCopied) {
  struct Sender final : WorkerSender {
    bool DeleteBlocks(const std::string&, const std::vector<BlockId>&) override { return true; }
    bool Replicate(const std::string& computer, BlockId block, uint64_t,
                   const std::vector<Endpoint>& sources) override {
      copies.push_back({computer, block, sources.front().computer});
      return true;
    }
    struct Copy {
      std::string target;
      BlockId block;
      std::string source;
    };
    std::vector<Copy> copies;
  } sender;
  MemMetaStore store;
  ClusterConfig config = TwoRacks();
  config.replication = 1;
  NameService names(config, store, sender, NameServiceOptions{});
  ASSERT_TRUE(names.Load(now_).ok());
  for (const ComputerConfig& c : config.computers) {
    names.OnComputerUp(c.name, now_);
    ASSERT_TRUE(names.OnBlockReport(c.name, {}).ok());
  }
  CreateRequest req;
  req.path = "/data";
  req.partitions = 1;
  req.writer = "c10";
  auto file = names.Create(req, now_);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto a = names.AllocateBlock({file->id, 0, {}, "c10", {}}, now_);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->targets[0].computer, "c10");  // the writer's computer
  ASSERT_TRUE(names.OnBlockReceived("c10", a->id, 5).ok());
  ASSERT_TRUE(names.CommitPartition(file->id, 0, {{a->id, 5, {"c10"}}}, now_).ok());
  EXPECT_EQ(names.Drain("c10").sole_blocks, 0);  // not draining: it stays

  names.SetDraining("c10", true);
  EXPECT_TRUE(names.IsDraining("c10"));
  DrainProgress p = names.Drain("c10");
  EXPECT_EQ(p.blocks, 1);
  EXPECT_EQ(p.sole_blocks, 1);
  EXPECT_EQ(p.short_blocks, 1);
  EXPECT_EQ(names.UnderReplicatedBlocks(), 1);
  // A new block written from c10 is placed elsewhere.
  req.path = "/data2";
  auto file2 = names.Create(req, now_);
  ASSERT_TRUE(file2.ok()) << file2.status().ToString();
  for (int i = 0; i < 20; ++i) {
    auto b = names.AllocateBlock({file2->id, 0, {}, "c10", {}}, now_);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_NE(b->targets[0].computer, "c10");
  }
  names.Tick(now_);
  ASSERT_EQ(sender.copies.size(), 1u);
  EXPECT_EQ(sender.copies[0].block, a->id);
  EXPECT_EQ(sender.copies[0].source, "c10");
  EXPECT_NE(sender.copies[0].target, "c10");
  ASSERT_TRUE(names.OnBlockReceived(sender.copies[0].target, a->id, 5).ok());
  names.OnReplicationDone(sender.copies[0].target, a->id, true, "");
  p = names.Drain("c10");
  EXPECT_EQ(p.sole_blocks, 0);
  EXPECT_EQ(p.short_blocks, 0);
  EXPECT_EQ(p.blocks, 1);  // its copy stays while it drains
  names.Tick(now_);
  EXPECT_EQ(sender.copies.size(), 1u);
  EXPECT_EQ(names.ns().ReplicasOf(a->id).size(), 2u);

  // Undrained, its copy counts again and the surplus is trimmed.
  names.SetDraining("c10", false);
  names.Tick(now_);
  EXPECT_EQ(names.ns().ReplicasOf(a->id).size(), 1u);
  EXPECT_EQ(names.UnderReplicatedBlocks(), 0);
}

}  // namespace
}  // namespace copse::dfs

// The Namespace's operations for the execution engine: job outputs, writer
// identity and abandoned runs (dfs/namespace_jobs.cc).
#include <gtest/gtest.h>

#include "dfs/namespace.h"
#include "dfs/namespace_testing.h"
#include "dfs/paths.h"

namespace copse::dfs {
namespace {

using std::chrono::seconds;

using testing::Live;

constexpr RunId kRoot{1, 0};
constexpr RunId kRunA{10, 0};
constexpr RunId kRunB{11, 2};

class NamespaceJobsTest : public ::testing::Test {
 protected:
  NamespaceJobsTest() : ns_(Options(), store_) { EXPECT_TRUE(ns_.Load(now_).ok()); }

  static NamespaceOptions Options() { return testing::SmallNamespace(); }

  // A pending output file of `job`, created by the job's root on c00.
  FileId CreateOutput(const std::string& path, int partitions, const std::string& job = "job1") {
    CreateRequest req;
    req.path = path;
    req.partitions = partitions;
    req.writer = "c00";
    req.output_job = job;
    req.run = kRoot;
    auto r = ns_.Create(req, Live(), rng_, now_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->id : 0;
  }

  FileId CreateScratch(const std::string& name, int partitions, RunId run,
                       const std::string& job = "job1") {
    CreateRequest req;
    req.path = ScratchPath(job, name);
    req.partitions = partitions;
    req.writer = "c11";
    req.scratch_job = job;
    req.run = run;
    auto r = ns_.Create(req, Live(), rng_, now_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->id : 0;
  }

  Result<Allocation> Allocate(FileId file, int partition, RunId run,
                              const std::string& writer = "c11") {
    return ns_.AllocateBlock({file, partition, {}, writer, run}, Live(), rng_, now_);
  }

  // Run `run` writes one block of `size` bytes into `partition`, which its
  // worker reports, and commits it.
  Result<bool> WritePartition(FileId file, int partition, RunId run, uint64_t size = 10) {
    COPSE_ASSIGN_OR_RETURN(Allocation a, Allocate(file, partition, run));
    COPSE_RETURN_IF_ERROR(ns_.BlockStored(a.targets[0], a.id, size, &deletions_));
    return ns_.CommitPartition(file, partition, {{a.id, size, a.targets}}, now_, &deletions_);
  }

  bool Deleted(BlockId id) const {
    for (const auto& [computer, ids] : deletions_)
      if (ids.count(id)) return true;
    return false;
  }

  MemMetaStore store_;
  Namespace ns_;
  std::mt19937_64 rng_{1};
  Timestamp now_{seconds(100)};
  Deletions deletions_;
};

TEST_F(NamespaceJobsTest, OutputFileIsInvisibleUntilPublished) {
  FileId out = CreateOutput("/out/sorted", 3);
  EXPECT_EQ(ns_.Stat("/out/sorted").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ns_.List("/").value().size(), 0u);
  auto open = ns_.OpenOutput("/out/sorted");
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  EXPECT_EQ(open->id, out);
  EXPECT_EQ(open->partitions.size(), 3u);
  EXPECT_EQ(open->replication, 3);
  EXPECT_EQ(open->output_job, "job1");
  EXPECT_EQ(ns_.PendingOutputJobs(), std::vector<std::string>{"job1"});

  // A vertex run on c11 writes its partition there first, as any writer would.
  auto a = Allocate(out, 0, kRunA, "c11");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->targets.front(), "c11");
  EXPECT_EQ(a->targets.size(), 3u);
  ASSERT_TRUE(ns_.CommitPartition(out, 0, {{a->id, 10, a->targets}}, now_, &deletions_).ok());
  ASSERT_TRUE(WritePartition(out, 1, kRunB).ok());
  auto last = WritePartition(out, 2, kRunA);
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_FALSE(*last) << "a job's output is not visible when its last partition commits";
  EXPECT_EQ(ns_.Stat("/out/sorted").status().code(), StatusCode::kNotFound);
  // Its path is taken all the same.
  CreateRequest again;
  again.path = "/out/sorted";
  EXPECT_EQ(ns_.Create(again, Live(), rng_, now_).status().code(), StatusCode::kAlreadyExists);
  again.output_job = "job1";
  EXPECT_EQ(ns_.Create(again, Live(), rng_, now_).status().code(), StatusCode::kAlreadyExists);

  auto published = ns_.PublishJobOutputs("job1");
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  EXPECT_EQ(*published, 1);
  auto st = ns_.Stat("/out/sorted");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->size, 30u);
  EXPECT_TRUE(st->output_job.empty());
  EXPECT_EQ(ns_.List("/out").value().size(), 1u);
  EXPECT_TRUE(ns_.PendingOutputJobs().empty());
  EXPECT_EQ(ns_.OpenOutput("/out/sorted").status().code(), StatusCode::kNotFound);
  // Publishing again finds nothing left to publish.
  EXPECT_EQ(ns_.PublishJobOutputs("job1").value(), 0);
}

TEST_F(NamespaceJobsTest, TheFirstCommitOfAPartitionWins) {
  FileId out = CreateOutput("/out", 2);
  // Two runs of the same vertex (a duplicate of a straggler) write partition 0.
  auto a = Allocate(out, 0, kRunA, "c01");
  auto b = Allocate(out, 0, kRunB, "c12");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(ns_.BlockStored("c12", b->id, 7, &deletions_).ok());
  ASSERT_TRUE(ns_.CommitPartition(out, 0, {{a->id, 10, a->targets}}, now_, &deletions_).ok());
  // The loser's block is dropped with the winner's commit.
  EXPECT_TRUE(deletions_["c12"].count(b->id));
  auto lost = ns_.CommitPartition(out, 0, {{b->id, 7, b->targets}}, now_, &deletions_);
  EXPECT_EQ(lost.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(lost.status().message(), "partition 0 of /out was committed by another run");
  EXPECT_EQ(Allocate(out, 0, kRunB).status().code(), StatusCode::kAlreadyExists);
  // A copy of the dropped block that reaches another worker later is deleted there.
  deletions_.clear();
  ASSERT_TRUE(ns_.BlockStored("c10", b->id, 7, &deletions_).ok());
  EXPECT_TRUE(deletions_["c10"].count(b->id));
  ASSERT_TRUE(ns_.ReportBlocks("c02", {{b->id, 7}}, &deletions_).ok());
  EXPECT_TRUE(deletions_["c02"].count(b->id));

  ASSERT_TRUE(WritePartition(out, 1, kRunB).ok());
  ASSERT_TRUE(ns_.PublishJobOutputs("job1").ok());
  auto st = ns_.Stat("/out");
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->partitions[0].blocks.size(), 1u);
  EXPECT_EQ(st->partitions[0].blocks[0].id, a->id);
}

TEST_F(NamespaceJobsTest, PublishIsAllOrNothing) {
  FileId left = CreateOutput("/out/a", 2, "job2");
  FileId right = CreateOutput("/out/b", 2, "job2");
  FileId other = CreateOutput("/other", 1, "job3");
  ASSERT_TRUE(WritePartition(left, 0, kRunA).ok());
  ASSERT_TRUE(WritePartition(left, 1, kRunA).ok());
  ASSERT_TRUE(WritePartition(right, 0, kRunB).ok());
  ASSERT_TRUE(WritePartition(other, 0, kRunB).ok());
  // A straggler's block of a committed partition never commits.
  auto straggler = Allocate(right, 1, kRunA);
  ASSERT_TRUE(straggler.ok());
  ASSERT_TRUE(ns_.BlockStored("c11", straggler->id, 5, &deletions_).ok());

  auto failed = ns_.PublishJobOutputs("job2");
  EXPECT_EQ(failed.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(failed.status().message(),
            "cannot publish the outputs of job job2: partition 1 of /out/b is not committed");
  EXPECT_EQ(ns_.Stat("/out/a").status().code(), StatusCode::kNotFound) << "nothing is published";
  EXPECT_EQ(ns_.PendingOutputJobs(), (std::vector<std::string>{"job2", "job3"}));

  auto b = Allocate(right, 1, kRunB);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(ns_.CommitPartition(right, 1, {{b->id, 8, b->targets}}, now_, &deletions_).ok());
  EXPECT_TRUE(Deleted(straggler->id)) << "a partition's commit drops its other blocks";
  // Both files become visible in one store write.
  store_.FailNextApply(IoError("disk on fire"));
  EXPECT_EQ(ns_.PublishJobOutputs("job2").status().code(), StatusCode::kIoError);
  EXPECT_EQ(ns_.Stat("/out/a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ns_.Stat("/out/b").status().code(), StatusCode::kNotFound);
  ASSERT_EQ(ns_.PublishJobOutputs("job2").value(), 2);
  EXPECT_TRUE(ns_.Stat("/out/a").ok());
  EXPECT_EQ(ns_.Stat("/out/b").value().size, 18u);
  EXPECT_EQ(ns_.Stat("/other").status().code(), StatusCode::kNotFound) << "another job's output";
  EXPECT_EQ(ns_.PendingOutputJobs(), std::vector<std::string>{"job3"});
}

TEST_F(NamespaceJobsTest, DropJobOutputsRemovesEverything) {
  FileId out = CreateOutput("/out", 2);
  ASSERT_TRUE(WritePartition(out, 0, kRunA).ok());
  auto pending = Allocate(out, 1, kRunB);
  ASSERT_TRUE(pending.ok());
  ASSERT_TRUE(ns_.BlockStored("c11", pending->id, 3, &deletions_).ok());
  BlockId committed = ns_.OpenOutput("/out").value().partitions[0].blocks[0].id;
  auto dropped = ns_.DropJobOutputs("job1", &deletions_);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, 1);
  EXPECT_EQ(ns_.file_count(), 0u);
  EXPECT_EQ(ns_.block_count(), 0u);
  EXPECT_TRUE(Deleted(committed));
  EXPECT_TRUE(deletions_["c11"].count(pending->id));
  EXPECT_TRUE(ns_.PendingOutputJobs().empty());
  EXPECT_EQ(ns_.PublishJobOutputs("job1").value(), 0);
  CreateOutput("/out", 1);  // the path is free again
  EXPECT_EQ(ns_.DropJobOutputs("bad name", &deletions_).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(NamespaceJobsTest, PendingOutputsAreNeverCollectedByTheGracePeriod) {
  FileId out = CreateOutput("/out", 2);
  ASSERT_TRUE(WritePartition(out, 0, kRunA).ok());
  auto a = Allocate(out, 1, kRunB);
  ASSERT_TRUE(a.ok());
  CreateRequest plain;
  plain.path = "/plain";
  ASSERT_TRUE(ns_.Create(plain, Live(), rng_, now_).ok());
  ASSERT_TRUE(ns_.CollectExpired(now_ + seconds(3600), &deletions_).ok());
  EXPECT_EQ(ns_.file_count(), 1u) << "the plain write is collected, the job's output is not";
  EXPECT_EQ(ns_.block_count(), 2u);
  ASSERT_TRUE(ns_.CommitPartition(out, 1, {{a->id, 4, a->targets}}, now_, &deletions_).ok());
  EXPECT_EQ(ns_.PublishJobOutputs("job1").value(), 1);
}

TEST_F(NamespaceJobsTest, AbandonRunDropsOnlyWhatTheRunLeftUnfinished) {
  FileId unfinished = CreateScratch("s.v0", 2, kRunA);
  ASSERT_TRUE(WritePartition(unfinished, 0, kRunA).ok());
  auto half = Allocate(unfinished, 1, kRunA);
  ASSERT_TRUE(half.ok());
  FileId finished = CreateScratch("t.v0", 1, kRunA);
  ASSERT_TRUE(WritePartition(finished, 0, kRunA).ok());
  FileId others = CreateScratch("s.v1", 1, kRunB);
  ASSERT_TRUE(Allocate(others, 0, kRunB).ok());
  FileId out = CreateOutput("/out", 3);
  ASSERT_TRUE(WritePartition(out, 0, kRunA).ok());
  auto mine = Allocate(out, 1, kRunA);
  auto theirs = Allocate(out, 2, kRunB);
  ASSERT_TRUE(mine.ok() && theirs.ok());
  ASSERT_TRUE(ns_.BlockStored("c11", mine->id, 3, &deletions_).ok());
  BlockId committed = ns_.Stat(ScratchPath("job1", "s.v0")).value().partitions[0].blocks[0].id;

  EXPECT_EQ(ns_.AbandonRun(RunId{}, &deletions_).status().code(), StatusCode::kInvalidArgument);
  auto dropped = ns_.AbandonRun(kRunA, &deletions_);
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_EQ(dropped->files, 1);
  EXPECT_EQ(dropped->blocks, 1);
  // The unfinished scratch file is gone with its committed and uncommitted blocks.
  EXPECT_EQ(ns_.Stat(ScratchPath("job1", "s.v0")).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Deleted(committed));
  EXPECT_TRUE(deletions_["c11"].count(mine->id));
  // What it finished, other runs' files and the output's committed partition stay.
  EXPECT_TRUE(ns_.Stat(ScratchPath("job1", "t.v0")).ok());
  EXPECT_TRUE(ns_.Stat(ScratchPath("job1", "s.v1")).ok());
  auto view = ns_.OpenOutput("/out");
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->partitions[0].committed);
  EXPECT_FALSE(view->partitions[1].committed);
  // Run B's block is still there to commit; run A's is not.
  EXPECT_EQ(ns_.CommitPartition(out, 1, {{mine->id, 3, mine->targets}}, now_, &deletions_)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      ns_.CommitPartition(out, 2, {{theirs->id, 3, theirs->targets}}, now_, &deletions_).ok());
  // Nothing is left of run A to drop.
  EXPECT_EQ(ns_.AbandonRun(kRunA, &deletions_).value().files, 0);
}

TEST_F(NamespaceJobsTest, WriterIdentityAndOutputsSurviveARestart) {
  FileId scratch = CreateScratch("s.v0", 2, kRunA);
  ASSERT_TRUE(WritePartition(scratch, 0, kRunA).ok());
  FileId out = CreateOutput("/out", 2);
  ASSERT_TRUE(WritePartition(out, 0, kRunB).ok());
  auto pending = Allocate(out, 1, kRunA);
  ASSERT_TRUE(pending.ok());

  Namespace again(Options(), store_);  // a restarted master
  ASSERT_TRUE(again.Load(now_).ok());
  EXPECT_EQ(again.PendingOutputJobs(), std::vector<std::string>{"job1"});
  EXPECT_EQ(again.ScratchJobs(), std::vector<std::string>{"job1"});
  auto view = again.OpenOutput("/out");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->run, kRoot);
  EXPECT_TRUE(view->partitions[0].committed);
  EXPECT_EQ(again.Stat("/out").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(again.Stat(ScratchPath("job1", "s.v0")).value().run, kRunA);
  // It still knows which run wrote what.
  auto dropped = again.AbandonRun(kRunA, &deletions_);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(dropped->files, 1);
  EXPECT_EQ(dropped->blocks, 1);
  // ... and which partitions are committed already.
  EXPECT_EQ(again.CommitPartition(out, 0, {}, now_, &deletions_).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(again.CollectExpired(now_ + seconds(3600), &deletions_).ok());
  EXPECT_TRUE(again.OpenOutput("/out").ok());
  ASSERT_TRUE(again.CommitPartition(out, 1, {}, now_, &deletions_).ok());
  EXPECT_EQ(again.PublishJobOutputs("job1").value(), 1);
  EXPECT_TRUE(again.Stat("/out").ok());
}

TEST_F(NamespaceJobsTest, SeveralPartitionsCommitTogetherOrNotAtAll) {
  FileId f = CreateScratch("buckets.v0", 4, kRunA);
  std::vector<PartitionCommit> commits;
  for (int p = 0; p < 3; ++p) {
    auto a = Allocate(f, p, kRunA);
    ASSERT_TRUE(a.ok());
    commits.push_back({p, {{a->id, 100u + static_cast<uint64_t>(p), a->targets}}});
  }
  commits.push_back({3, {}});  // an empty bucket
  std::vector<PartitionCommit> bad = commits;
  bad[2].blocks[0].size = 5000;  // larger than a block
  EXPECT_EQ(ns_.CommitPartitions(f, bad, now_, &deletions_).status().code(),
            StatusCode::kInvalidArgument);
  auto st = ns_.Stat(ScratchPath("job1", "buckets.v0"));
  ASSERT_TRUE(st.ok());
  for (const PartitionView& p : st->partitions) EXPECT_FALSE(p.committed);
  std::vector<PartitionCommit> twice = {{0, {}}, {0, {}}};
  EXPECT_EQ(ns_.CommitPartitions(f, twice, now_, &deletions_).status().code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(ns_.CommitPartitions(f, commits, now_, &deletions_).ok());
  st = ns_.Stat(ScratchPath("job1", "buckets.v0"));
  for (const PartitionView& p : st->partitions) EXPECT_TRUE(p.committed);
  EXPECT_EQ(st->size, 303u);
  EXPECT_TRUE(st->partitions[3].blocks.empty());
}

// A writer of an unfinished scratch file (a bucket writer that failed) drops
// it at once; a finished one is the job's.
TEST_F(NamespaceJobsTest, AnUnfinishedScratchFileCanBeAbandoned) {
  FileId unfinished = CreateScratch("u.v0", 2, kRunA);
  ASSERT_TRUE(WritePartition(unfinished, 0, kRunA).ok());
  FileId finished = CreateScratch("f.v0", 1, kRunA);
  ASSERT_TRUE(WritePartition(finished, 0, kRunA).ok());
  ASSERT_TRUE(ns_.Abandon(unfinished, &deletions_).ok());
  EXPECT_EQ(ns_.Stat(ScratchPath("job1", "u.v0")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ns_.Abandon(finished, &deletions_).code(), StatusCode::kNotFound);
  EXPECT_TRUE(ns_.Stat(ScratchPath("job1", "f.v0")).ok());
}

TEST_F(NamespaceJobsTest, OutputsAreCheckedWhenCreated) {
  CreateRequest req;
  req.path = ScratchPath("job1", "x");
  req.writer = "c00";
  req.scratch_job = "job1";
  req.output_job = "job1";
  EXPECT_EQ(ns_.Create(req, Live(), rng_, now_).status().code(), StatusCode::kInvalidArgument);
  req.scratch_job.clear();
  EXPECT_NE(ns_.Create(req, Live(), rng_, now_).status().message().find("reserved"),
            std::string::npos);
  req.path = "/out";
  req.output_job = "job 1";
  EXPECT_EQ(ns_.Create(req, Live(), rng_, now_).status().code(), StatusCode::kInvalidArgument);
  FileId out = CreateOutput("/out", 1);
  // Only the job drops its outputs; a writer's Abandon does not.
  EXPECT_EQ(ns_.Abandon(out, &deletions_).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ns_.Delete("/out", &deletions_).code(), StatusCode::kNotFound);
  EXPECT_EQ(ns_.OpenOutput("/nope").status().code(), StatusCode::kNotFound);
  CreateRequest plain;
  plain.path = "/plain";
  ASSERT_TRUE(ns_.Create(plain, Live(), rng_, now_).ok());
  EXPECT_EQ(ns_.OpenOutput("/plain").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace copse::dfs

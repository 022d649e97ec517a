#include "rootjob/job_manager.h"

#include <gtest/gtest.h>

namespace copse::rootjob {
namespace {

// The state machine, every state against every event: the table below is
// the machine's whole definition, and NextVertexState must agree with it.
TEST(VertexStateMachineTest, EveryStateOnEveryEvent) {
  using S = VertexState;
  using E = VertexEvent;
  struct Row {
    S from;
    E event;
    VertexFacts facts;
    S to;
  };
  const VertexFacts none{}, ready{true, false, false}, live{false, true, false},
      running{false, true, true};
  const Row rows[] = {
      // Inputs appear or go: only waiting and ready vertices follow them.
      {S::kWaiting, E::kInputsChanged, ready, S::kReady},
      {S::kWaiting, E::kInputsChanged, none, S::kWaiting},
      {S::kReady, E::kInputsChanged, none, S::kWaiting},
      {S::kReady, E::kInputsChanged, ready, S::kReady},
      {S::kSubmitted, E::kInputsChanged, none, S::kSubmitted},
      {S::kRunning, E::kInputsChanged, none, S::kRunning},
      {S::kDone, E::kInputsChanged, none, S::kDone},
      {S::kFailed, E::kInputsChanged, ready, S::kFailed},
      // A run is issued: first runs from ready, duplicates beside live runs.
      {S::kReady, E::kIssued, live, S::kSubmitted},
      {S::kSubmitted, E::kIssued, live, S::kSubmitted},
      {S::kRunning, E::kIssued, running, S::kRunning},
      {S::kWaiting, E::kIssued, live, S::kWaiting},
      {S::kDone, E::kIssued, live, S::kDone},
      {S::kFailed, E::kIssued, live, S::kFailed},
      // A run starts.
      {S::kSubmitted, E::kStarted, running, S::kRunning},
      {S::kRunning, E::kStarted, running, S::kRunning},
      {S::kReady, E::kStarted, running, S::kReady},
      {S::kDone, E::kStarted, running, S::kDone},
      // A run ends or is preempted: running while another still runs.
      {S::kRunning, E::kRunStopped, running, S::kRunning},
      {S::kRunning, E::kRunStopped, live, S::kSubmitted},
      {S::kRunning, E::kRunStopped, none, S::kSubmitted},
      {S::kSubmitted, E::kRunStopped, running, S::kRunning},
      {S::kSubmitted, E::kRunStopped, none, S::kSubmitted},
      {S::kDone, E::kRunStopped, none, S::kDone},
      {S::kFailed, E::kRunStopped, none, S::kFailed},
      {S::kWaiting, E::kRunStopped, none, S::kWaiting},
      // Requeued: back to waiting or ready once no run is live.
      {S::kSubmitted, E::kRequeued, none, S::kWaiting},
      {S::kSubmitted, E::kRequeued, ready, S::kReady},
      {S::kRunning, E::kRequeued, ready, S::kReady},
      {S::kSubmitted, E::kRequeued, live, S::kSubmitted},
      {S::kRunning, E::kRequeued, running, S::kRunning},
      {S::kDone, E::kRequeued, ready, S::kDone},
      {S::kFailed, E::kRequeued, ready, S::kFailed},
      {S::kWaiting, E::kRequeued, ready, S::kReady},
      // Completed and failed for good, from wherever the run was.
      {S::kRunning, E::kCompleted, none, S::kDone},
      {S::kSubmitted, E::kCompleted, live, S::kDone},
      {S::kRunning, E::kFailedForGood, none, S::kFailed},
      {S::kSubmitted, E::kFailedForGood, none, S::kFailed},
      // The output is lost: a done vertex runs again when it can.
      {S::kDone, E::kOutputLost, ready, S::kReady},
      {S::kDone, E::kOutputLost, none, S::kWaiting},
      {S::kRunning, E::kOutputLost, running, S::kRunning},
      {S::kFailed, E::kOutputLost, ready, S::kFailed},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(NextVertexState(r.from, r.event, r.facts), r.to)
        << VertexStateName(r.from) << " on event " << static_cast<int>(r.event) << " (ready "
        << r.facts.ready << ", live " << r.facts.any_live << ", running " << r.facts.any_running
        << ")";
    // Readiness is asked for exactly where the answer depends on it.
    VertexFacts flipped = r.facts;
    flipped.ready = !flipped.ready;
    const bool depends = NextVertexState(r.from, r.event, flipped) != r.to;
    if (depends) {
      EXPECT_TRUE(NeedsReadiness(r.from, r.event, r.facts))
          << VertexStateName(r.from) << " on event " << static_cast<int>(r.event);
    }
  }
  // No event leads from a state the machine does not know to another.
  for (int e = 0; e <= static_cast<int>(E::kOutputLost); ++e) {
    for (int st = 0; st <= static_cast<int>(S::kFailed); ++st) {
      S to = NextVertexState(static_cast<S>(st), static_cast<E>(e), running);
      EXPECT_LE(static_cast<int>(to), static_cast<int>(S::kFailed));
    }
  }
}

constexpr Timestamp Sec(double s) { return Timestamp{static_cast<int64_t>(s * 1e6)}; }

FileReplicas OneReplicaEach(const JobDag& d) {
  FileReplicas r;
  for (const FileSpec& f : d.files) {
    std::vector<std::vector<int>> parts;
    for (int p = 0; p < f.partitions; ++p) parts.push_back({p});
    r.push_back(parts);
  }
  return r;
}

// Completes `r` on `computer` (started at `start`), as the simulator does.
void Finish(JobManager& m, RunId r, int computer, int64_t bytes, double start = 0, double end = 1) {
  ASSERT_TRUE(m.Started(r, 1, computer, Sec(start)));
  ASSERT_TRUE(m.Completed(r, 1, computer, bytes, {}, Sec(end)));
}

// Sort's shape (apps/catalog.h): sample (gathers 1% of every partition)
// -> partition (pointwise, the sample broadcast) -> sort (all-to-all).
JobDag SortDag(int n) {
  JobDag d{"Sort", "sort", {{"records", n, 4'000'000'000}}, {}};
  d.stages.push_back({"sample", 1, {{true, 0, Connection::kGather, 0.01}}, 0, 0.001});
  d.stages.push_back(
      {"partition",
       n,
       {{true, 0, Connection::kPointwise, 1.0}, {false, 0, Connection::kBroadcast, 1.0}},
       0,
       1.0});
  d.stages.push_back({"sort", n, {{false, 1, Connection::kAllToAll, 1.0}}, 0, 1.0});
  return d;
}

// PageRank's shape: three iterations of phase1 (its graph partition and the
// previous ranks, pointwise) -> phase2 (all-to-all).
JobDag PageRankDag(int n) {
  JobDag d{"PR", "pagerank", {{"graph", n, 1'000'000'000}}, {}};
  for (int it = 0; it < 3; ++it) {
    Stage p1{"phase1", n, {{true, 0, Connection::kPointwise, 1.0}}, 625'000'000, 0.0};
    if (it > 0)
      p1.inputs.push_back(
          {false, static_cast<int>(d.stages.size()) - 1, Connection::kPointwise, 1.0});
    d.stages.push_back(p1);
    d.stages.push_back(
        {"phase2",
         n,
         {{false, static_cast<int>(d.stages.size()) - 1, Connection::kAllToAll, 1.0}},
         10'000'000,
         0.0});
  }
  return d;
}

TEST(JobManagerTest, SortRunsSampleThenPartitionThenSort) {
  Result<JobDag> dag = SortDag(4);
  ASSERT_TRUE(dag.ok()) << dag.status().ToString();
  JobManager m(*dag, OneReplicaEach(*dag));
  EXPECT_EQ(m.buckets(1), 4);  // partition writes a bucket per sort vertex
  EXPECT_EQ(m.buckets(2), 1);
  std::vector<RunId> ready = m.TakeSubmissions(Sec(0));
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0], (RunId{{0, 0}, 1}));
  EXPECT_EQ(m.vertex({0, 0}).state, VertexState::kSubmitted);
  EXPECT_EQ(m.vertex({1, 0}).state, VertexState::kWaiting);
  // The sample reads 1% of each of the four 4 GB partitions.
  const std::vector<InputPiece>& in = m.Inputs(ready[0]);
  ASSERT_EQ(in.size(), 4u);
  EXPECT_EQ(in[2].bytes, 40'000'000);
  EXPECT_EQ(in[2].replicas, std::vector<int>{2});
  EXPECT_TRUE(in[2].from_file);
  EXPECT_EQ(in[2].item, 2);
  EXPECT_TRUE(m.TakeSubmissions(Sec(0)).empty());
  Finish(m, ready[0], 7, 1000);
  ready = m.TakeSubmissions(Sec(1));
  ASSERT_EQ(ready.size(), 4u);  // every partition vertex
  const std::vector<InputPiece>& in1 = m.Inputs(ready[1]);
  ASSERT_EQ(in1.size(), 2u);  // its partition and the broadcast sample
  EXPECT_EQ(in1[1].replicas, std::vector<int>{7});
  EXPECT_FALSE(in1[1].from_file);
  EXPECT_EQ(in1[1].version, 1);
  EXPECT_EQ(in1[1].input, 1);
  for (int i = 0; i < 3; ++i) Finish(m, ready[i], 10 + i, 400);
  EXPECT_TRUE(m.TakeSubmissions(Sec(2)).empty());  // all-to-all waits for the whole stage
  Finish(m, ready[3], 13, 400);
  ready = m.TakeSubmissions(Sec(2));
  ASSERT_EQ(ready.size(), 4u);
  const std::vector<InputPiece>& in2 = m.Inputs(ready[0]);
  ASSERT_EQ(in2.size(), 4u);  // one bucket of each upstream vertex, an even share
  EXPECT_EQ(in2[3].bytes, 100);
  EXPECT_EQ(in2[3].replicas, std::vector<int>{13});
  EXPECT_EQ(in2[3].bucket, 0);
  EXPECT_EQ(m.Inputs(ready[2])[1].bucket, 2);
  for (const RunId& r : ready) Finish(m, r, 0, 1);
  EXPECT_TRUE(m.Done());
  EXPECT_EQ(m.outcome(), JobManager::Outcome::kSucceeded);
  EXPECT_EQ(m.completed(), 9);
}

TEST(JobManagerTest, PageRankPhaseOneWaitsForItsOwnUpstreamVertexOnly) {
  Result<JobDag> dag = PageRankDag(3);
  ASSERT_TRUE(dag.ok());
  ASSERT_EQ(dag->stages.size(), 6u);
  JobManager m(*dag, OneReplicaEach(*dag));
  std::vector<RunId> ready = m.TakeSubmissions(Sec(0));
  ASSERT_EQ(ready.size(), 3u);
  for (int i = 0; i < 3; ++i) Finish(m, ready[i], i, 300);
  ready = m.TakeSubmissions(Sec(1));
  ASSERT_EQ(ready.size(), 3u);
  Finish(m, ready[1], 5, 10);
  ready = m.TakeSubmissions(Sec(2));
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].vertex, (VertexId{2, 1}));
  const std::vector<InputPiece>& in = m.Inputs(ready[0]);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[1].replicas, std::vector<int>{5});
}

// Two stages: "map" (3 vertices, one file partition each) and "reduce"
// (2 vertices, all-to-all).
JobDag MapReduce() {
  JobDag d{"mr", "test", {{"in", 3, 100}}, {}};
  d.stages.push_back({"map", 3, {{true, 0, Connection::kPointwise, 1.0}}, 0, 1.0});
  d.stages.push_back({"reduce", 2, {{false, 0, Connection::kAllToAll, 1.0}}, 0, 1.0});
  return d;
}

TEST(JobManagerTest, ExactBucketSizesAndEveryBucketForOtherConsumers) {
  JobDag d = MapReduce();
  d.stages.push_back({"count", 1, {{false, 0, Connection::kGather, 1.0}}, 0, 0});
  ASSERT_TRUE(ValidateDag(d).ok());
  JobManager m(d, OneReplicaEach(d));
  std::vector<RunId> maps = m.TakeSubmissions(Sec(0));
  ASSERT_EQ(maps.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(m.Started(maps[i], 2, i, Sec(0)));
    ASSERT_TRUE(m.Completed(maps[i], 2, i, 0, {10 * (i + 1), 0}, Sec(1)));
  }
  std::vector<RunId> next = m.TakeSubmissions(Sec(1));
  ASSERT_EQ(next.size(), 3u);  // reduce[0], reduce[1], count[0]
  const std::vector<InputPiece>& r0 = m.Inputs(next[0]);
  ASSERT_EQ(r0.size(), 3u);
  EXPECT_EQ(r0[1].bytes, 20);
  EXPECT_EQ(r0[1].attempt, 2);             // names the attempt that wrote it
  EXPECT_TRUE(m.Inputs(next[1]).empty());  // every bucket 1 is empty
  const std::vector<InputPiece>& c = m.Inputs(next[2]);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[2].bucket, -1);  // all of map[2]'s buckets
  EXPECT_EQ(c[2].bytes, 30);
}

TEST(JobManagerTest, FailedRunIsRetriedUnderANewVersionUntilTheAttemptsRunOut) {
  JobDag d = MapReduce();
  JobManager m(d, OneReplicaEach(d), JobOptions{3, 0, Duration{0}});
  std::vector<RunId> maps = m.TakeSubmissions(Sec(0));
  RunId r = maps[1];
  for (int failure = 1; failure <= 2; ++failure) {
    ASSERT_TRUE(m.Started(r, 1, 0, Sec(failure)));
    ASSERT_TRUE(m.Failed(r, {"exit code 1: oops " + std::to_string(failure), true}, Sec(failure)));
    EXPECT_EQ(m.vertex(r.vertex).failures, failure);
    EXPECT_EQ(m.vertex(r.vertex).state, VertexState::kReady);
    std::vector<RunId> again = m.TakeSubmissions(Sec(failure));
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0], (RunId{{0, 1}, failure + 1}));
    EXPECT_FALSE(m.Failed(r, {"late", true}, Sec(failure)));  // an old run: ignored
    r = again[0];
  }
  ASSERT_TRUE(m.Failed(r, {"exit code 1: oops 3", true}, Sec(4)));
  EXPECT_EQ(m.outcome(), JobManager::Outcome::kFailed);
  EXPECT_EQ(m.vertex(r.vertex).state, VertexState::kFailed);
  EXPECT_EQ(m.failure(), "vertex map[1] failed 3 times: exit code 1: oops 3");
  EXPECT_TRUE(m.TakeSubmissions(Sec(4)).empty());
  EXPECT_EQ(m.run({{0, 1}, 1}).outcome, RunOutcome::kFailed);
  EXPECT_EQ(m.run({{0, 1}, 1}).detail, "exit code 1: oops 1");
}

TEST(JobManagerTest, DoNotRetryFailsTheJobAtOnce) {
  JobDag d = MapReduce();
  JobManager m(d, OneReplicaEach(d));
  std::vector<RunId> maps = m.TakeSubmissions(Sec(0));
  ASSERT_TRUE(m.Failed(maps[0], {"exit code 65: bad record at line 3", false}, Sec(1)));
  EXPECT_EQ(m.outcome(), JobManager::Outcome::kFailed);
  EXPECT_EQ(
      m.failure(),
      "vertex map[0] failed once and is not to be retried: exit code 65: bad record at line 3");
}

TEST(JobManagerTest, LostRunRunsAgainWithoutCountingAFailure) {
  JobDag d = MapReduce();
  JobManager m(d, OneReplicaEach(d));
  std::vector<RunId> maps = m.TakeSubmissions(Sec(0));
  ASSERT_TRUE(m.Started(maps[2], 1, 4, Sec(0)));
  EXPECT_EQ(m.StageCounts(0).running, 1);
  EXPECT_EQ(m.StageCounts(0).submitted, 2);
  ASSERT_TRUE(m.Lost(maps[2], "computer c04 went down", Sec(3)));
  EXPECT_EQ(m.vertex(maps[2].vertex).failures, 0);
  std::vector<RunId> again = m.TakeSubmissions(Sec(3));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0], (RunId{{0, 2}, 2}));
  EXPECT_EQ(m.run(maps[2]).outcome, RunOutcome::kLost);
}

TEST(JobManagerTest, PreemptedRunWaitsAgainUnderTheSameVersion) {
  JobDag d = MapReduce();
  JobManager m(d, OneReplicaEach(d));
  std::vector<RunId> maps = m.TakeSubmissions(Sec(0));
  ASSERT_TRUE(m.Started(maps[0], 1, 0, Sec(0)));
  ASSERT_TRUE(m.Preempted(maps[0], Sec(1)));
  EXPECT_EQ(m.vertex(maps[0].vertex).state, VertexState::kSubmitted);
  EXPECT_TRUE(m.TakeSubmissions(Sec(1)).empty());
  ASSERT_TRUE(m.Started(maps[0], 2, 3, Sec(2)));
  ASSERT_TRUE(m.Completed(maps[0], 2, 3, 7, {}, Sec(3)));
  EXPECT_EQ(m.run(maps[0]).attempt, 2);
  EXPECT_EQ(m.vertex(maps[0].vertex).computer, 3);
}

TEST(JobManagerTest, StragglerGetsADuplicateAndTheFirstFinisherWins) {
  JobDag d{"dup", "test", {{"in", 4, 100}}, {}};
  d.stages.push_back({"work", 4, {{true, 0, Connection::kPointwise, 1.0}}, 0, 1.0});
  JobManager m(d, OneReplicaEach(d), JobOptions{3, 2.0, Duration{5'000'000}});
  std::vector<RunId> runs = m.TakeSubmissions(Sec(0));
  for (const RunId& r : runs) ASSERT_TRUE(m.Started(r, 1, r.vertex.index, Sec(0)));
  ASSERT_TRUE(m.Completed(runs[0], 1, 0, 1, {}, Sec(10)));
  m.Tick(Sec(30));  // one of four done: not yet half
  EXPECT_TRUE(m.TakeSubmissions(Sec(30)).empty());
  ASSERT_TRUE(m.Completed(runs[1], 1, 1, 1, {}, Sec(10)));
  m.Tick(Sec(19));  // median 10 s: a duplicate after 20 s
  EXPECT_TRUE(m.TakeSubmissions(Sec(19)).empty());
  m.Tick(Sec(21));
  m.Tick(Sec(22));  // asked twice, issued once
  std::vector<RunId> dups = m.TakeSubmissions(Sec(22));
  ASSERT_EQ(dups.size(), 2u);
  EXPECT_EQ(dups[0], (RunId{{0, 2}, 2}));
  EXPECT_EQ(dups[1], (RunId{{0, 3}, 2}));
  EXPECT_TRUE(m.run(dups[0]).duplicate);
  m.Tick(Sec(40));
  EXPECT_TRUE(m.TakeSubmissions(Sec(40)).empty());  // one duplicate at a time
  // Vertex 2: the duplicate wins; the original is withdrawn.
  ASSERT_TRUE(m.Started(dups[0], 1, 5, Sec(23)));
  ASSERT_TRUE(m.Completed(dups[0], 1, 5, 1, {}, Sec(30)));
  EXPECT_EQ(m.TakeWithdrawals(), (std::vector<RunId>{{{0, 2}, 1}}));
  EXPECT_FALSE(m.Completed(runs[2], 1, 2, 1, {}, Sec(31)));  // the loser's late finish
  EXPECT_EQ(m.run(runs[2]).outcome, RunOutcome::kSuperseded);
  EXPECT_EQ(m.vertex({0, 2}).winner, 2);
  EXPECT_EQ(m.vertex({0, 2}).computer, 5);
  // Vertex 3: the original wins; the duplicate, not yet started, is withdrawn.
  ASSERT_TRUE(m.Completed(runs[3], 1, 3, 1, {}, Sec(32)));
  EXPECT_EQ(m.TakeWithdrawals(), (std::vector<RunId>{{{0, 3}, 2}}));
  ASSERT_TRUE(m.Withdrawn(dups[1], Sec(33)));
  EXPECT_EQ(m.run(dups[1]).outcome, RunOutcome::kSuperseded);
  EXPECT_TRUE(m.Done());
}

TEST(JobManagerTest, LostOutputIsRegeneratedUpstreamAsFarAsNeeded) {
  // a -> b -> c, pointwise, one vertex each.
  JobDag d{"chain", "test", {{"in", 1, 100}}, {}};
  d.stages.push_back({"a", 1, {{true, 0, Connection::kPointwise, 1.0}}, 0, 1.0});
  d.stages.push_back({"b", 1, {{false, 0, Connection::kPointwise, 1.0}}, 0, 1.0});
  d.stages.push_back({"c", 1, {{false, 1, Connection::kPointwise, 1.0}}, 0, 1.0});
  JobManager m(d, OneReplicaEach(d));
  RunId a1 = m.TakeSubmissions(Sec(0)).at(0);
  Finish(m, a1, 1, 50);
  RunId b1 = m.TakeSubmissions(Sec(1)).at(0);
  Finish(m, b1, 1, 50);  // a's and b's outputs both live on computer 1
  RunId c1 = m.TakeSubmissions(Sec(2)).at(0);
  ASSERT_TRUE(m.Started(c1, 1, 2, Sec(2)));
  // Computer 1 died: c cannot read b's output.
  ASSERT_TRUE(m.InputLost(c1, b1, "replica lost: ... only on computer c01", Sec(3)));
  EXPECT_EQ(m.vertex(c1.vertex).state, VertexState::kWaiting);
  EXPECT_EQ(m.vertex(b1.vertex).failures, 0);
  EXPECT_EQ(m.completed(), 1);
  RunId b2 = m.TakeSubmissions(Sec(3)).at(0);
  EXPECT_EQ(b2, (RunId{{1, 0}, 2}));
  // b's new run cannot read a's output either.
  ASSERT_TRUE(m.Started(b2, 1, 3, Sec(3)));
  ASSERT_TRUE(m.InputLost(b2, a1, "replica lost", Sec(4)));
  std::vector<RunId> next = m.TakeSubmissions(Sec(4));
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0], (RunId{{0, 0}, 2}));
  Finish(m, next[0], 3, 50, 4, 5);
  RunId b3 = m.TakeSubmissions(Sec(5)).at(0);
  EXPECT_EQ(b3, (RunId{{1, 0}, 3}));
  EXPECT_EQ(m.Inputs(b3)[0].version, 2);
  EXPECT_EQ(m.Inputs(b3)[0].replicas, std::vector<int>{3});
  Finish(m, b3, 3, 50, 5, 6);
  RunId c2 = m.TakeSubmissions(Sec(6)).at(0);
  EXPECT_EQ(c2, (RunId{{2, 0}, 2}));
  Finish(m, c2, 2, 50, 6, 7);
  EXPECT_TRUE(m.Done());
  EXPECT_EQ(m.run(c1).outcome, RunOutcome::kInputLost);
  // A second report about an output already regenerated changes nothing.
  EXPECT_FALSE(m.InputLost(c1, b1, "again", Sec(8)));
}

TEST(JobManagerTest, ConsumersNotYetStartedAreWithdrawnWhenTheirInputIsLost) {
  JobDag d = MapReduce();
  JobManager m(d, OneReplicaEach(d));
  std::vector<RunId> maps = m.TakeSubmissions(Sec(0));
  for (int i = 0; i < 3; ++i) Finish(m, maps[i], i, 10);
  std::vector<RunId> reduces = m.TakeSubmissions(Sec(1));
  ASSERT_EQ(reduces.size(), 2u);
  ASSERT_TRUE(m.Started(reduces[0], 1, 4, Sec(1)));
  ASSERT_TRUE(m.InputLost(reduces[0], maps[1], "replica lost", Sec(2)));
  // reduce[1] has not started: withdrawn; map[1] runs again.
  EXPECT_EQ(m.TakeWithdrawals(), (std::vector<RunId>{reduces[1]}));
  std::vector<RunId> again = m.TakeSubmissions(Sec(2));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0], (RunId{{0, 1}, 2}));
  ASSERT_TRUE(m.Withdrawn(reduces[1], Sec(2)));
  EXPECT_EQ(m.vertex(reduces[1].vertex).state, VertexState::kWaiting);
  Finish(m, again[0], 5, 10, 2, 3);
  std::vector<RunId> rerun = m.TakeSubmissions(Sec(3));
  ASSERT_EQ(rerun.size(), 2u);
  EXPECT_EQ(rerun[0], (RunId{{1, 0}, 2}));
  EXPECT_EQ(rerun[1], (RunId{{1, 1}, 2}));
  EXPECT_EQ(m.Inputs(rerun[0])[1].version, 2);
}

}  // namespace
}  // namespace copse::rootjob

// JobManager: the DAG state machine of one running job, as its root task
// keeps it (Dryad's job manager; Quincy §2). Pure library: no I/O, no clock
// (time is passed in); the root task (copse-rootjob) and the simulator (sim/)
// run this same code.
//
// Every vertex moves waiting → ready → submitted → running → done, or to
// failed, through one transition function (NextVertexState below). Each run of a vertex has a
// version (1, 2, ...): a retry after a failure, a re-execution after its output was lost, and a
// duplicate of a straggler are new versions. The master numbers the attempts of one run (a
// preempted run starts again under a new attempt without the root asking).
//
//   - A run that fails is retried (a new version) until the vertex has
//     failed `max_attempts` times, or at once fails the job when the failure
//     says retrying cannot help; the job then fails naming the vertex, its
//     failures and the last reason.
//   - A run whose task vanished (its computer died, a restarted master lost
//     it) runs again; that is not a failure.
//   - A run that cannot read an upstream output because the only replica is
//     gone (InputLost) makes that producer's output lost: the producer is no
//     longer done and runs again under a new version once its own inputs are
//     there (a producer whose input is lost in turn reports the same, so the
//     re-execution cascades upstream as far as needed); submitted runs of its
//     consumers that have not started are withdrawn, and the consumer runs
//     again afterwards.
//   - Duplicates (Dryad): once half of a stage's vertices are done, a vertex
//     whose only run has been running longer than duplicate_factor × the
//     stage's median completed run time (and at least duplicate_floor) gets
//     a duplicate. The first run of a vertex to complete wins: its output
//     counts and the vertex's other live runs are withdrawn.
//
// A driver calls the event methods as things happen, then TakeSubmissions()
// and TakeWithdrawals() to learn what to do, and Tick() every second or so
// for duplicates. Events naming a run that is no longer live (a late report
// of a withdrawn run, a loser's completion) are ignored and return false.
//
// Output buckets: a vertex of a stage with an all-to-all consumer writes one
// bucket per vertex of that consumer (vertex i reads bucket i of every
// producer); any other vertex writes one bucket. Other consumers read every
// bucket of a producer.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "copse/status.h"
#include "rootjob/job_dag.h"

namespace copse::rootjob {

// `[f][p]`: the computers holding partition p of file f.
using FileReplicas = std::vector<std::vector<std::vector<int>>>;

struct RunId {
  VertexId vertex;
  int version = 0;
  friend bool operator==(const RunId&, const RunId&) = default;
  friend auto operator<=>(const RunId&, const RunId&) = default;
};

enum class VertexState : uint8_t { kWaiting, kReady, kSubmitted, kRunning, kDone, kFailed };
const char* VertexStateName(VertexState s);

// What moves a vertex from one state to another.
enum class VertexEvent : uint8_t {
  kInputsChanged,  // an input of it appeared or was lost
  kIssued,         // a run of it was submitted: a first run, a retry or a duplicate
  kStarted,        // a run of it started on a computer
  kRunStopped,     // a run of it ended, or was preempted
  kRequeued,       // it has no live run left, is neither done nor failed: it runs again
  kCompleted,      // a run of it completed: its output counts
  kFailedForGood,  // it failed as often as it may, or a failure said not to retry
  kOutputLost,     // its output was lost: it runs again once its inputs are there
};

// What a transition reads of the vertex besides its state.
struct VertexFacts {
  bool ready = false;        // every input is there
  bool any_live = false;     // a run of it is submitted or running
  bool any_running = false;  // a run of it is running
};

// The vertex state machine, the one place that says where a vertex in
// state `s` goes on `e`:
//   waiting/ready  --inputs changed-->  ready if every input is there, else waiting
//   ready/submitted/running --issued--> submitted (running stays running)
//   submitted --started--> running
//   submitted/running --run stopped--> running while a run runs, else submitted
//   any but done/failed, with no live run --requeued--> ready or waiting
//   any --completed--> done;  any --failed for good--> failed
//   done --output lost--> ready or waiting
// Every other pair leaves the state as it is. `f.ready` is read only where
// the result depends on it (NeedsReadiness).
VertexState NextVertexState(VertexState s, VertexEvent e, const VertexFacts& f);
bool NeedsReadiness(VertexState s, VertexEvent e, const VertexFacts& f);

enum class RunOutcome : uint8_t {
  kLive,        // submitted or running
  kCompleted,   // its output counts
  kSuperseded,  // finished or withdrawn after another run of the vertex won
  kFailed,      // failed (counts against the vertex's attempts)
  kWithdrawn,   // withdrawn or killed at the root's request
  kLost,        // its task vanished without a verdict
  kInputLost,   // could not read an upstream output
};
const char* RunOutcomeName(RunOutcome o);

struct RunRecord {
  int version = 0;
  int attempt = 0;    // the master's attempt number of its latest start (0: not started)
  int computer = -1;  // where it ran (last)
  Timestamp submitted{0};
  Timestamp started{-1};  // its latest start
  Timestamp ended{-1};
  RunOutcome outcome = RunOutcome::kLive;
  bool running = false;            // started and not preempted since
  bool withdrawing = false;        // its withdrawal was asked for
  bool duplicate = false;          // issued as a straggler's duplicate
  std::string detail;              // why it failed, was lost or withdrawn
  std::vector<InputPiece> inputs;  // what it reads, fixed at submission
};

struct VertexInfo {
  VertexState state = VertexState::kWaiting;
  int failures = 0;
  std::vector<RunRecord> runs;        // runs[v - 1] is version v
  int winner = 0;                     // the version whose output counts (done), else 0
  int computer = -1;                  // where that output lives
  int64_t output_bytes = 0;           // its size
  std::vector<int64_t> bucket_bytes;  // per bucket, when known
  bool duplicated = false;            // a duplicate was issued for its current runs

  int live_runs() const;
};

struct JobOptions {
  int max_attempts = 3;         // failed runs of one vertex before the job fails
  double duplicate_factor = 0;  // 0: never duplicate
  Duration duplicate_floor{0};  // a straggler runs at least this long first
};

struct FailureInfo {
  std::string reason;  // "exit code 1: <log tail>", "timed out after 30 s", ...
  bool retry = true;   // false: the program said retrying cannot help
};

class JobManager {
 public:
  // REQUIRES: ValidateDag(dag) is ok and file_replicas matches dag.files.
  JobManager(JobDag dag, FileReplicas file_replicas, JobOptions options = {});

  const JobDag& dag() const { return dag_; }
  const JobOptions& options() const { return options_; }
  // Output buckets each vertex of `stage` writes.
  int buckets(int stage) const { return buckets_[stage]; }
  // Whether any stage reads `stage`'s output.
  bool has_consumers(int stage) const { return !consumers_[stage].empty(); }

  // ---- what to do
  // New runs to submit, in (stage, index) order; each is live from now on.
  std::vector<RunId> TakeSubmissions(Timestamp now);
  // Live runs to withdraw (not started) or kill (running), in order asked.
  std::vector<RunId> TakeWithdrawals();
  // What run `r` reads, fixed when it was submitted: one piece per
  // partition or producer bucket, with the computers holding it.
  // REQUIRES: r was returned by TakeSubmissions.
  const std::vector<InputPiece>& Inputs(RunId r) const;
  // The simulator's output size model: output bytes of a vertex of `v`'s
  // stage given the bytes it read.
  int64_t OutputBytes(VertexId v, int64_t bytes_read) const;

  // ---- events
  bool Started(RunId r, int attempt, int computer, Timestamp now);
  // Preempted by the scheduler: it waits to start again.
  bool Preempted(RunId r, Timestamp now);
  // Finished writing its outputs on `computer`: `bucket_bytes` per bucket, or
  // empty to split `output_bytes` evenly (the simulator). Returns true when
  // this run's output counts (the first finisher of the vertex).
  bool Completed(RunId r, int attempt, int computer, int64_t output_bytes,
                 std::vector<int64_t> bucket_bytes, Timestamp now);
  bool Failed(RunId r, const FailureInfo& why, Timestamp now);
  bool Lost(RunId r, const std::string& why, Timestamp now);
  // A withdrawal this manager asked for took effect.
  bool Withdrawn(RunId r, Timestamp now);
  // `r` could not read `producer`'s output (its only replica is gone).
  bool InputLost(RunId r, RunId producer, const std::string& why, Timestamp now);
  // Looks for stragglers to duplicate.
  void Tick(Timestamp now);

  // ---- state
  enum class Outcome { kRunning, kSucceeded, kFailed };
  Outcome outcome() const { return outcome_; }
  bool Done() const { return done_count_ == total_; }
  // Why the job failed ("vertex wordcount.count[3] failed 3 times: ...").
  const std::string& failure() const { return failure_; }
  int completed() const { return done_count_; }
  int total() const { return total_; }
  const VertexInfo& vertex(VertexId v) const { return vertices_[v.stage][v.index]; }
  const RunRecord& run(RunId r) const { return vertex(r.vertex).runs[r.version - 1]; }
  struct Counts {
    int waiting = 0, ready = 0, submitted = 0, running = 0, done = 0, failed = 0;
  };
  Counts StageCounts(int stage) const;
  // "wordcount.count[3]".
  std::string VertexName(VertexId v) const;

 private:
  VertexInfo& mut(VertexId v) { return vertices_[v.stage][v.index]; }
  RunRecord* LiveRun(RunId r);
  bool IsReady(VertexId v) const;
  void AppendItem(const StageInput& in, int item, int consumer, int consumers,
                  std::vector<InputPiece>* out) const;
  std::vector<InputPiece> ComputeInputs(VertexId v) const;
  RunId Issue(VertexId v, bool duplicate, Timestamp now);
  void EndRun(VertexId v, RunRecord& run, RunOutcome outcome, const std::string& detail,
              Timestamp now);
  // Moves `v` through NextVertexState: every change of a vertex's state.
  void Move(VertexId v, VertexEvent e);
  // A waiting or ready vertex becomes ready when its inputs are there, else waits.
  void Refresh(VertexId v);
  void RefreshConsumers(int stage);
  // The vertex has no live run left and is not done: it runs again when it can.
  void Requeue(VertexId v);
  void UndoOutput(VertexId producer);
  void WithdrawUnstarted(VertexId v);
  void FailJob(const std::string& why);

  JobDag dag_;
  FileReplicas file_replicas_;
  JobOptions options_;
  std::vector<int> buckets_;  // per stage
  std::vector<std::vector<VertexInfo>> vertices_;
  std::vector<int> stage_done_;
  std::vector<std::vector<Duration>> stage_times_;  // completed runs' durations
  std::vector<std::vector<int>> consumers_;         // per stage: stages reading it
  std::vector<RunId> withdrawals_;
  std::vector<VertexId> duplicates_;  // stragglers to duplicate at the next TakeSubmissions
  int done_count_ = 0;
  int total_ = 0;
  Outcome outcome_ = Outcome::kRunning;
  std::string failure_;
};

}  // namespace copse::rootjob

#include "rootjob/job_manager.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>

namespace copse::rootjob {

const char* VertexStateName(VertexState s) {
  switch (s) {
    case VertexState::kWaiting:
      return "waiting";
    case VertexState::kReady:
      return "ready";
    case VertexState::kSubmitted:
      return "submitted";
    case VertexState::kRunning:
      return "running";
    case VertexState::kDone:
      return "done";
    case VertexState::kFailed:
      return "failed";
  }
  return "?";
}

const char* RunOutcomeName(RunOutcome o) {
  switch (o) {
    case RunOutcome::kLive:
      return "live";
    case RunOutcome::kCompleted:
      return "completed";
    case RunOutcome::kSuperseded:
      return "superseded";
    case RunOutcome::kFailed:
      return "failed";
    case RunOutcome::kWithdrawn:
      return "withdrawn";
    case RunOutcome::kLost:
      return "lost";
    case RunOutcome::kInputLost:
      return "input lost";
  }
  return "?";
}

int VertexInfo::live_runs() const {
  int n = 0;
  for (const RunRecord& r : runs) n += r.outcome == RunOutcome::kLive ? 1 : 0;
  return n;
}

JobManager::JobManager(JobDag dag, FileReplicas file_replicas, JobOptions options)
    : dag_(std::move(dag)), file_replicas_(std::move(file_replicas)), options_(options) {
  const size_t n = dag_.stages.size();
  buckets_.assign(n, 1);
  consumers_.resize(n);
  for (size_t s = 0; s < n; ++s) {
    vertices_.emplace_back(dag_.stages[s].vertices);
    total_ += dag_.stages[s].vertices;
    for (const StageInput& in : dag_.stages[s].inputs) {
      if (in.from_file) continue;
      consumers_[in.source].push_back(static_cast<int>(s));
      if (in.connection == Connection::kAllToAll) buckets_[in.source] = dag_.stages[s].vertices;
    }
  }
  stage_done_.assign(n, 0);
  stage_times_.resize(n);
  for (int st = 0; st < static_cast<int>(n); ++st) {
    for (int i = 0; i < dag_.stages[st].vertices; ++i) Refresh(VertexId{st, i});
  }
}

VertexState NextVertexState(VertexState s, VertexEvent e, const VertexFacts& f) {
  using S = VertexState;
  const S waiting_or_ready = f.ready ? S::kReady : S::kWaiting;
  switch (e) {
    case VertexEvent::kInputsChanged:
      return s == S::kWaiting || s == S::kReady ? waiting_or_ready : s;
    case VertexEvent::kIssued:
      return s == S::kReady || s == S::kSubmitted ? S::kSubmitted : s;
    case VertexEvent::kStarted:
      return s == S::kSubmitted ? S::kRunning : s;
    case VertexEvent::kRunStopped:
      if (s != S::kSubmitted && s != S::kRunning) return s;
      return f.any_running ? S::kRunning : S::kSubmitted;
    case VertexEvent::kRequeued:
      return s == S::kDone || s == S::kFailed || f.any_live ? s : waiting_or_ready;
    case VertexEvent::kCompleted:
      return S::kDone;
    case VertexEvent::kFailedForGood:
      return S::kFailed;
    case VertexEvent::kOutputLost:
      return s == S::kDone ? waiting_or_ready : s;
  }
  return s;
}

bool NeedsReadiness(VertexState s, VertexEvent e, const VertexFacts& f) {
  using S = VertexState;
  switch (e) {
    case VertexEvent::kInputsChanged:
      return s == S::kWaiting || s == S::kReady;
    case VertexEvent::kRequeued:
      return s != S::kDone && s != S::kFailed && !f.any_live;
    case VertexEvent::kOutputLost:
      return s == S::kDone;
    default:
      return false;
  }
}

void JobManager::Move(VertexId v, VertexEvent e) {
  VertexInfo& vi = mut(v);
  VertexFacts f;
  for (const RunRecord& r : vi.runs) {
    if (r.outcome != RunOutcome::kLive) continue;
    f.any_live = true;
    f.any_running = f.any_running || r.running;
  }
  if (NeedsReadiness(vi.state, e, f)) f.ready = IsReady(v);
  vi.state = NextVertexState(vi.state, e, f);
}

void JobManager::Refresh(VertexId v) { Move(v, VertexEvent::kInputsChanged); }

void JobManager::RefreshConsumers(int stage) {
  for (int c : consumers_[stage]) {
    for (int i = 0; i < dag_.stages[c].vertices; ++i) Refresh(VertexId{c, i});
  }
}

std::string JobManager::VertexName(VertexId v) const {
  return dag_.stages[v.stage].name + "[" + std::to_string(v.index) + "]";
}

bool JobManager::IsReady(VertexId v) const {
  for (const StageInput& in : dag_.stages[v.stage].inputs) {
    if (in.from_file) continue;
    switch (in.connection) {
      case Connection::kPointwise:
        if (vertices_[in.source][v.index].state != VertexState::kDone) return false;
        break;
      case Connection::kBroadcast:
        if (vertices_[in.source][0].state != VertexState::kDone) return false;
        break;
      case Connection::kAllToAll:
      case Connection::kGather:
        if (stage_done_[in.source] != dag_.stages[in.source].vertices) return false;
        break;
    }
  }
  return true;
}

// Appends item `item` of input `in` as consumer `consumer` of `consumers`
// reads it (all-to-all: its bucket; otherwise all of it).
void JobManager::AppendItem(const StageInput& in, int item, int consumer, int consumers,
                            std::vector<InputPiece>* out) const {
  InputPiece p;
  p.from_file = in.from_file;
  p.source = in.source;
  p.item = item;
  p.many_to_one = in.connection == Connection::kGather || in.connection == Connection::kAllToAll;
  if (in.from_file) {
    p.bytes = std::llround(static_cast<double>(dag_.files[in.source].partition_bytes) *
                           in.fraction / consumers);
    p.replicas = file_replicas_[in.source][item];
  } else {
    const VertexInfo& u = vertices_[in.source][item];
    const RunRecord& won = u.runs[u.winner - 1];
    p.version = u.winner;
    p.attempt = won.attempt;
    p.replicas = {u.computer};
    bool one_bucket = in.connection == Connection::kAllToAll;
    p.bucket = one_bucket ? consumer : (buckets_[in.source] == 1 ? 0 : -1);
    if (!u.bucket_bytes.empty()) {
      int64_t all = 0;
      for (int64_t b : u.bucket_bytes) all += b;
      p.bytes = one_bucket ? u.bucket_bytes[consumer] : all;
    } else {  // sizes unknown per bucket: an even share
      p.bytes = std::llround(static_cast<double>(u.output_bytes) * in.fraction / consumers);
    }
  }
  if (p.bytes > 0) out->push_back(std::move(p));
}

std::vector<InputPiece> JobManager::ComputeInputs(VertexId v) const {
  std::vector<InputPiece> pieces;
  const Stage& s = dag_.stages[v.stage];
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const StageInput& in = s.inputs[k];
    size_t first = pieces.size();
    int items = in.from_file ? dag_.files[in.source].partitions : dag_.stages[in.source].vertices;
    switch (in.connection) {
      case Connection::kPointwise:
        AppendItem(in, v.index, v.index, 1, &pieces);
        break;
      case Connection::kBroadcast:
        AppendItem(in, 0, v.index, 1, &pieces);
        break;
      case Connection::kGather:
        for (int i = 0; i < items; ++i) AppendItem(in, i, v.index, 1, &pieces);
        break;
      case Connection::kAllToAll:
        for (int i = 0; i < items; ++i) AppendItem(in, i, v.index, s.vertices, &pieces);
        break;
    }
    for (size_t i = first; i < pieces.size(); ++i) pieces[i].input = static_cast<int>(k);
  }
  return pieces;
}

int64_t JobManager::OutputBytes(VertexId v, int64_t bytes_read) const {
  const Stage& s = dag_.stages[v.stage];
  return s.output_fixed_bytes + std::llround(s.output_ratio * static_cast<double>(bytes_read));
}

RunId JobManager::Issue(VertexId v, bool duplicate, Timestamp now) {
  VertexInfo& vi = mut(v);
  RunRecord r;
  r.version = static_cast<int>(vi.runs.size()) + 1;
  r.submitted = now;
  r.duplicate = duplicate;
  r.inputs = ComputeInputs(v);
  vi.runs.push_back(std::move(r));
  Move(v, VertexEvent::kIssued);
  if (duplicate) vi.duplicated = true;
  return RunId{v, vi.runs.back().version};
}

std::vector<RunId> JobManager::TakeSubmissions(Timestamp now) {
  std::vector<RunId> out;
  if (outcome_ != Outcome::kRunning) {
    duplicates_.clear();
    return out;
  }
  std::sort(duplicates_.begin(), duplicates_.end());
  duplicates_.erase(std::unique(duplicates_.begin(), duplicates_.end()), duplicates_.end());
  size_t dup = 0;
  for (int s = 0; s < static_cast<int>(vertices_.size()); ++s) {
    bool stage_complete = stage_done_[s] == dag_.stages[s].vertices;
    if (stage_complete && (dup == duplicates_.size() || duplicates_[dup].stage != s)) continue;
    for (int i = 0; i < dag_.stages[s].vertices; ++i) {
      VertexId v{s, i};
      VertexInfo& vi = mut(v);
      bool wants_dup = dup < duplicates_.size() && duplicates_[dup] == v;
      if (wants_dup) ++dup;
      if (wants_dup && (vi.state == VertexState::kSubmitted || vi.state == VertexState::kRunning)) {
        out.push_back(Issue(v, true, now));
      } else if (vi.state == VertexState::kReady) {
        out.push_back(Issue(v, false, now));
      }
    }
  }
  duplicates_.clear();
  return out;
}

std::vector<RunId> JobManager::TakeWithdrawals() { return std::exchange(withdrawals_, {}); }

const std::vector<InputPiece>& JobManager::Inputs(RunId r) const { return run(r).inputs; }

RunRecord* JobManager::LiveRun(RunId r) {
  if (r.vertex.stage < 0 || r.vertex.stage >= static_cast<int>(vertices_.size())) return nullptr;
  auto& stage = vertices_[r.vertex.stage];
  if (r.vertex.index < 0 || r.vertex.index >= static_cast<int>(stage.size())) return nullptr;
  VertexInfo& vi = stage[r.vertex.index];
  if (r.version < 1 || r.version > static_cast<int>(vi.runs.size())) return nullptr;
  RunRecord& run = vi.runs[r.version - 1];
  return run.outcome == RunOutcome::kLive ? &run : nullptr;
}

void JobManager::EndRun(VertexId v, RunRecord& run, RunOutcome outcome, const std::string& detail,
                        Timestamp now) {
  run.outcome = outcome;
  run.running = false;
  run.ended = now;
  if (!detail.empty()) run.detail = detail;
  Move(v, VertexEvent::kRunStopped);
}

void JobManager::Requeue(VertexId v) {
  VertexInfo& vi = mut(v);
  if (vi.state == VertexState::kDone || vi.state == VertexState::kFailed) return;
  if (vi.live_runs() > 0) return;
  vi.duplicated = false;
  Move(v, VertexEvent::kRequeued);
}

bool JobManager::Started(RunId r, int attempt, int computer, Timestamp now) {
  RunRecord* run = LiveRun(r);
  if (run == nullptr) return false;
  run->attempt = attempt;
  run->computer = computer;
  run->started = now;
  run->running = true;
  Move(r.vertex, VertexEvent::kStarted);
  return true;
}

bool JobManager::Preempted(RunId r, Timestamp now) {
  RunRecord* run = LiveRun(r);
  if (run == nullptr) return false;
  (void)now;
  run->running = false;
  Move(r.vertex, VertexEvent::kRunStopped);
  return true;
}

bool JobManager::Completed(RunId r, int attempt, int computer, int64_t output_bytes,
                           std::vector<int64_t> bucket_bytes, Timestamp now) {
  RunRecord* run = LiveRun(r);
  if (run == nullptr) return false;
  VertexInfo& vi = mut(r.vertex);
  if (attempt > 0) run->attempt = attempt;
  run->computer = computer;
  if (vi.state == VertexState::kDone) {  // another run won meanwhile
    EndRun(r.vertex, *run, RunOutcome::kSuperseded, "another run finished first", now);
    return false;
  }
  if (run->started >= Timestamp{0}) {
    stage_times_[r.vertex.stage].push_back(now - run->started);
  }
  EndRun(r.vertex, *run, RunOutcome::kCompleted, "", now);
  Move(r.vertex, VertexEvent::kCompleted);
  vi.winner = r.version;
  vi.computer = computer;
  vi.output_bytes = output_bytes;
  if (!bucket_bytes.empty() && static_cast<int>(bucket_bytes.size()) != buckets_[r.vertex.stage]) {
    bucket_bytes.clear();  // not one size per bucket: fall back to an even share
  }
  vi.bucket_bytes = std::move(bucket_bytes);
  ++stage_done_[r.vertex.stage];
  ++done_count_;
  RefreshConsumers(r.vertex.stage);
  for (RunRecord& other : vi.runs) {  // the losers of a duplicate race
    if (other.outcome == RunOutcome::kLive && !other.withdrawing) {
      other.withdrawing = true;
      other.detail = "version " + std::to_string(r.version) + " finished first";
      withdrawals_.push_back(RunId{r.vertex, other.version});
    }
  }
  if (Done()) outcome_ = Outcome::kSucceeded;
  return true;
}

void JobManager::FailJob(const std::string& why) {
  if (outcome_ != Outcome::kRunning) return;
  outcome_ = Outcome::kFailed;
  failure_ = why;
}

bool JobManager::Failed(RunId r, const FailureInfo& why, Timestamp now) {
  RunRecord* run = LiveRun(r);
  if (run == nullptr) return false;
  VertexInfo& vi = mut(r.vertex);
  if (run->withdrawing) {  // a run being killed at our request fails as it dies
    EndRun(r.vertex, *run,
           vi.state == VertexState::kDone ? RunOutcome::kSuperseded : RunOutcome::kWithdrawn, "",
           now);
    Requeue(r.vertex);
    return true;
  }
  EndRun(r.vertex, *run, RunOutcome::kFailed, why.reason, now);
  if (vi.state == VertexState::kDone) return true;  // a duplicate that lost anyway
  ++vi.failures;
  if (!why.retry || vi.failures >= options_.max_attempts) {
    Move(r.vertex, VertexEvent::kFailedForGood);
    std::string times = vi.failures == 1 ? "once" : std::to_string(vi.failures) + " times";
    FailJob("vertex " + VertexName(r.vertex) + " failed " + times +
            (why.retry ? "" : " and is not to be retried") + ": " + why.reason);
    return true;
  }
  Requeue(r.vertex);
  return true;
}

bool JobManager::Lost(RunId r, const std::string& why, Timestamp now) {
  RunRecord* run = LiveRun(r);
  if (run == nullptr) return false;
  EndRun(r.vertex, *run, run->withdrawing ? RunOutcome::kWithdrawn : RunOutcome::kLost, why, now);
  Requeue(r.vertex);
  return true;
}

bool JobManager::Withdrawn(RunId r, Timestamp now) {
  RunRecord* run = LiveRun(r);
  if (run == nullptr) return false;
  VertexInfo& vi = mut(r.vertex);
  EndRun(r.vertex, *run,
         vi.state == VertexState::kDone ? RunOutcome::kSuperseded : RunOutcome::kWithdrawn, "",
         now);
  Requeue(r.vertex);
  return true;
}

void JobManager::WithdrawUnstarted(VertexId v) {
  VertexInfo& vi = mut(v);
  for (RunRecord& run : vi.runs) {
    if (run.outcome != RunOutcome::kLive || run.running || run.withdrawing) continue;
    if (run.started >= Timestamp{0}) continue;  // it ran already (preempted): it may have read it
    run.withdrawing = true;
    run.detail = "an input it was to read was lost";
    withdrawals_.push_back(RunId{v, run.version});
  }
}

void JobManager::UndoOutput(VertexId p) {
  VertexInfo& vi = mut(p);
  if (vi.state != VertexState::kDone) return;
  Move(p, VertexEvent::kOutputLost);
  vi.winner = 0;
  vi.computer = -1;
  vi.bucket_bytes.clear();
  vi.output_bytes = 0;
  vi.duplicated = false;
  --stage_done_[p.stage];
  --done_count_;
  // Consumers waiting for a start would read the lost output: withdrawn.
  for (int c : consumers_[p.stage]) {
    for (int i = 0; i < dag_.stages[c].vertices; ++i) {
      VertexId v{c, i};
      if (vertex(v).state == VertexState::kSubmitted) WithdrawUnstarted(v);
    }
  }
  RefreshConsumers(p.stage);
}

bool JobManager::InputLost(RunId r, RunId producer, const std::string& why, Timestamp now) {
  RunRecord* run = LiveRun(r);
  if (run == nullptr) return false;
  EndRun(r.vertex, *run, RunOutcome::kInputLost, why, now);
  if (producer.vertex.stage >= 0 && producer.vertex.stage < static_cast<int>(vertices_.size()) &&
      producer.vertex.index >= 0 &&
      producer.vertex.index < dag_.stages[producer.vertex.stage].vertices) {
    const VertexInfo& p = vertex(producer.vertex);
    // Only the output that was lost: a producer that ran again since is fine.
    if (p.state == VertexState::kDone && p.winner == producer.version) UndoOutput(producer.vertex);
  }
  Requeue(r.vertex);
  return true;
}

void JobManager::Tick(Timestamp now) {
  if (options_.duplicate_factor <= 0 || outcome_ != Outcome::kRunning) return;
  for (int s = 0; s < static_cast<int>(vertices_.size()); ++s) {
    const int n = dag_.stages[s].vertices;
    if (stage_done_[s] * 2 < n || stage_done_[s] == n || stage_times_[s].empty()) continue;
    std::vector<Duration> times = stage_times_[s];
    std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2),
                     times.end());
    Duration median = times[times.size() / 2];
    Duration limit = std::max(options_.duplicate_floor,
                              Duration{static_cast<int64_t>(options_.duplicate_factor *
                                                            static_cast<double>(median.count()))});
    for (int i = 0; i < n; ++i) {
      const VertexInfo& vi = vertices_[s][i];
      if (vi.state != VertexState::kRunning || vi.duplicated || vi.live_runs() != 1) continue;
      for (const RunRecord& run : vi.runs) {
        if (run.outcome == RunOutcome::kLive && run.running && now - run.started > limit) {
          duplicates_.push_back(VertexId{s, i});
        }
      }
    }
  }
}

JobManager::Counts JobManager::StageCounts(int stage) const {
  Counts c;
  for (const VertexInfo& vi : vertices_[stage]) {
    switch (vi.state) {
      case VertexState::kWaiting:
        ++c.waiting;
        break;
      case VertexState::kReady:
        ++c.ready;
        break;
      case VertexState::kSubmitted:
        ++c.submitted;
        break;
      case VertexState::kRunning:
        ++c.running;
        break;
      case VertexState::kDone:
        ++c.done;
        break;
      case VertexState::kFailed:
        ++c.failed;
        break;
    }
  }
  return c;
}

}  // namespace copse::rootjob

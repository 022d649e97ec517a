#include "rootjob/root_task.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/net/message.h"
#include "common/task_messages.h"
#include "common/text.h"
#include "rootjob/locality.h"

namespace copse::rootjob {
namespace {

using proto::SchedulingMessage;
using Json = nlohmann::json;

// How much of a failed run's log tail its reason carries.
constexpr size_t kReasonTailBytes = 1500;

// An error the master may not give again if asked later.
bool Retryable(const Status& s) {
  switch (s.code()) {
    case StatusCode::kIoError:
    case StatusCode::kResourceExhausted:
    case StatusCode::kUnavailable:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

std::string Label(const JobDag& dag, const RunId& r) {
  return FormatVertexLabel(
      {dag.stages[r.vertex.stage].name, r.vertex.index, static_cast<uint32_t>(r.version)});
}

}  // namespace

namespace {

// The process's name service: the DFS client's.
class DfsRootFiles final : public RootFiles {
 public:
  explicit DfsRootFiles(std::unique_ptr<dfs::DfsClient> dfs) : dfs_(std::move(dfs)) {}
  Result<dfs::FileStatus> Stat(const std::string& path) override { return dfs_->Stat(path); }
  Status Create(const std::string& path, const dfs::CreateOptions& options) override {
    return dfs_->Create(path, options);
  }
  Result<int> DeleteJobScratch(const std::string& job) override {
    return dfs_->DeleteJobScratch(job);
  }

 private:
  std::unique_ptr<dfs::DfsClient> dfs_;
};

}  // namespace

RootTask::RootTask(asio::io_context& io, const ClusterConfig& config, std::string secret,
                   RootOptions options, const Clock& clock, std::unique_ptr<dfs::DfsClient> dfs)
    : io_(io),
      config_(config),
      options_(options),
      clock_(clock),
      own_files_(std::make_unique<DfsRootFiles>(std::move(dfs))),
      own_link_(std::make_unique<net::ReconnectingLink>(
          io, config.master.host, config.master.port,
          net::AuthParams{false, std::move(secret), "", fmt::format("root of job {}", options.job)},
          options.task, *this)),
      own_tick_(std::make_unique<net::AsioTimer>(io)),
      own_over_retry_(std::make_unique<net::AsioTimer>(io)),
      own_setup_retry_(std::make_unique<net::AsioTimer>(io)),
      link_(*own_link_),
      files_(*own_files_),
      tick_(*own_tick_),
      over_retry_(*own_over_retry_),
      setup_retry_(*own_setup_retry_) {
  IndexComputers();
}

RootTask::RootTask(asio::io_context& io, const ClusterConfig& config, RootOptions options,
                   const Clock& clock, Parts parts)
    : io_(io),
      config_(config),
      options_(options),
      clock_(clock),
      link_(parts.link),
      files_(parts.files),
      tick_(parts.tick),
      over_retry_(parts.over_retry),
      setup_retry_(parts.setup_retry) {
  IndexComputers();
}

void RootTask::IndexComputers() {
  for (size_t c = 0; c < config_.computers.size(); ++c) {
    computer_index_[config_.computers[c].name] = static_cast<int>(c);
    rack_of_.push_back(config_.computers[c].rack_index);
  }
}

RootTask::~RootTask() { link_.Stop(); }

void RootTask::Start() { link_.Start(); }

void RootTask::Send(capnp::MallocMessageBuilder& msg) {
  (void)link_.Send(net::Protocol::kScheduling, EncodeScheduling(msg));
}

void RootTask::GiveUp(const std::string& why) {
  spdlog::error("root of job {}: {}", options_.job, why);
  exit_code_ = 1;
  link_.Stop();
  tick_.Cancel();
  over_retry_.Cancel();
  setup_retry_.Cancel();
  io_.stop();
}

void RootTask::OnLinkOpen(const std::string& remote) {
  (void)remote;
  capnp::MallocMessageBuilder msg;
  auto h = msg.initRoot<SchedulingMessage>().initRootHello();
  h.setJobId(options_.job);
  h.setIncarnation(options_.incarnation);
  h.setTaskId(options_.task);
  auto live = h.initLiveTasks(static_cast<unsigned>(run_of_task_.size()));
  unsigned i = 0;
  for (const auto& [task, run] : run_of_task_) live.set(i++, task);
  Send(msg);
}

void RootTask::OnLinkClose(const Status& why) {
  welcomed_ = false;
  over_retry_.Cancel();
  setup_retry_.Cancel();  // the next welcome tries again
  if (exit_code_ != 0) spdlog::warn("lost the master: {}; reconnecting", why.ToString());
  // Submissions whose task ids never came: the master may have lost them,
  // or holds tasks this root cannot name (it withdraws those when the root
  // says hello without them). The runs are submitted again.
  Timestamp now = clock_.Now();
  for (const std::vector<RunId>& batch : awaiting_ids_) {
    for (const RunId& r : batch) {
      if (jm_)
        jm_->Lost(r, "the answer to its submission was lost with the master's connection", now);
    }
  }
  awaiting_ids_.clear();
  pending_withdrawals_.clear();
}

// A message from the master is read inside GuardRequest (a malformed one
// closes the connection; the root reconnects and says hello again); what it
// does to the job's state machine runs inside GuardState (a fault there
// stops the root, and the master restarts the job) (common/net/guard.h).
void RootTask::OnLinkFrame(const net::Frame& frame) {
  Status s = Handle(frame);
  if (!s.ok()) link_.Close(s);
}

Status RootTask::Handle(const net::Frame& frame) {
  if (frame.protocol != net::Protocol::kScheduling) {
    return InvalidArgument("unexpected protocol from the master");
  }
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<SchedulingMessage>();
    switch (root.which()) {
      case SchedulingMessage::ROOT_WELCOME: {
        auto w = root.getRootWelcome();
        std::string spec = w.getSpec();
        std::vector<uint64_t> unknown;
        for (auto t : w.getTasks()) {
          if (t.getState() == proto::TaskStateOnMaster::UNKNOWN) unknown.push_back(t.getTaskId());
        }
        Status s;
        net::GuardState("setting up the job", [&] { s = OnWelcome(spec, unknown); });
        return s;
      }
      case SchedulingMessage::SUBMIT_TASKS_REPLY: {
        std::vector<uint64_t> ids;
        for (uint64_t id : root.getSubmitTasksReply().getTaskIds()) ids.push_back(id);
        if (awaiting_ids_.empty()) return Internal("task ids for nothing submitted");
        if (ids.size() != awaiting_ids_.front().size()) {
          return Internal("task ids do not match the submission");
        }
        net::GuardState("recording task ids", [&] {
          std::vector<RunId> batch = std::move(awaiting_ids_.front());
          awaiting_ids_.pop_front();
          for (size_t i = 0; i < ids.size(); ++i) {
            run_of_task_[ids[i]] = batch[i];
            task_of_run_[batch[i]] = ids[i];
          }
          Pump();
        });
        return Status::Ok();
      }
      case SchedulingMessage::TASK_EVENT: {
        TaskEvent e = ReadEvent(root.getTaskEvent());
        net::GuardState("moving the job's DAG on", [&] { OnEvent(e); });
        return Status::Ok();
      }
      case SchedulingMessage::JOB_OVER_REPLY:
        if (!over_) return InvalidArgument("an answer to a JobOver this root did not send");
        spdlog::info("job {} is over; the master recorded it", options_.job);
        exit_code_ = 0;
        link_.Stop();
        tick_.Cancel();
        io_.stop();
        return Status::Ok();
      case SchedulingMessage::ERROR: {
        Status s = StatusFromSchedError(root.getError());
        if (over_ && welcomed_ && Retryable(s)) {
          // The master could not record the job's end now (its store
          // refused: a full disk); it is sent again.
          spdlog::warn(
              "the master could not record the end of job {}: {}; sending it again in {} s",
              options_.job, s.ToString(), ToSeconds(options_.over_retry));
          over_retry_.Arm(options_.over_retry, [this] {
            if (welcomed_) SendOver();
          });
          return Status::Ok();
        }
        GiveUp("the master refused: " + s.ToString());
        return Status::Ok();
      }
      default:
        return InvalidArgument("unexpected scheduling message for a root");
    }
  });
}

Status RootTask::OnWelcome(const std::string& spec, const std::vector<uint64_t>& unknown) {
  if (!set_up_) {
    Status s = Setup(spec);
    if (s.code() == StatusCode::kDisconnected || s.code() == StatusCode::kUnavailable) {
      // The master went away while the root read its inputs' facts (or its
      // file system is not ready yet): not a fault of the job. Try again in
      // a while; a restarted master welcomes the root again too.
      spdlog::warn("job {} cannot start yet: {}; trying again", options_.job, s.ToString());
      welcomed_ = true;
      setup_retry_.Arm(options_.over_retry, [this, spec] {
        if (!set_up_ && !over_) (void)OnWelcome(spec, {});
      });
      return Status::Ok();
    }
    if (!s.ok()) {
      // The job cannot run at all (an input vanished, an output exists):
      // it fails, saying why.
      spdlog::error("job {} cannot start: {}", options_.job, s.ToString());
      over_ = Over{false, s.message(), "{}"};
      welcomed_ = true;
      SendOver();
      return Status::Ok();
    }
    set_up_ = true;
    ArmTick();
  }
  welcomed_ = true;
  if (over_) {
    // The end was sent before, and the master did not answer it (it
    // restarted, or the connection dropped): it is sent again.
    SendOver();
    return Status::Ok();
  }
  Timestamp now = clock_.Now();
  for (uint64_t task : unknown) {
    auto it = run_of_task_.find(task);
    if (it == run_of_task_.end()) continue;
    // Lost with the master's memory of it: it runs again.
    jm_->Lost(it->second, "the master restarted and no worker runs it", now);
  }
  Pump();
  return Status::Ok();
}

Status RootTask::Setup(const std::string& spec_json) {
  COPSE_ASSIGN_OR_RETURN(spec_, ParseJobSpec(spec_json, SpecLimits::Stored()));
  std::map<std::string, FileFacts> facts;
  std::map<std::string, dfs::FileStatus> stats;
  for (const std::string& path : InputFiles(spec_)) {
    Result<dfs::FileStatus> st = files_.Stat(path);
    if (!st.ok()) return st.status().WithContext("input " + path);
    int64_t bytes = 0;
    for (const dfs::PartitionLocation& p : st->partitions) bytes += static_cast<int64_t>(p.size);
    facts[path] = FileFacts{static_cast<int>(st->partitions.size()), bytes};
    stats[path] = std::move(*st);
  }
  COPSE_ASSIGN_OR_RETURN(JobDag dag, BuildJobDag(spec_, facts, SpecLimits::Stored()));
  FileReplicas replicas;
  for (const FileSpec& f : dag.files) {
    const dfs::FileStatus& st = stats.at(f.name);
    std::vector<std::vector<int>> parts;
    std::vector<std::vector<Block>> part_blocks;
    for (const dfs::PartitionLocation& p : st.partitions) {
      std::vector<int> holders;
      std::vector<Block> blocks;
      for (const dfs::BlockLocation& b : p.blocks) {
        Block blk;
        blk.bytes = static_cast<int64_t>(b.size);
        for (const dfs::ReplicaLocation& r : b.replicas) {
          auto c = computer_index_.find(r.where.computer);
          if (!r.live || c == computer_index_.end()) continue;
          blk.replicas.push_back(c->second);
          if (std::find(holders.begin(), holders.end(), c->second) == holders.end()) {
            holders.push_back(c->second);
          }
        }
        blocks.push_back(std::move(blk));
      }
      parts.push_back(std::move(holders));
      part_blocks.push_back(std::move(blocks));
    }
    replicas.push_back(std::move(parts));
    blocks_.push_back(std::move(part_blocks));
  }
  // Scratch of an earlier incarnation goes first; the outputs are created
  // for vertices to commit their partitions into.
  (void)files_.DeleteJobScratch(std::to_string(options_.job));
  for (size_t s = 0; s < spec_.stages.size(); ++s) {
    const StageSpec& st = spec_.stages[s];
    if (st.output.empty()) continue;
    dfs::CreateOptions o;
    o.partitions = dag.stages[s].vertices;
    o.output_job = std::to_string(options_.job);
    COPSE_RETURN_IF_ERROR(files_.Create(st.output, o).WithContext("output " + st.output));
  }
  JobOptions jo;
  jo.max_attempts = spec_.settings.attempts;
  jo.duplicate_factor = spec_.settings.duplicate_factor;
  jo.duplicate_floor = spec_.settings.duplicate_floor;
  jm_ = std::make_unique<JobManager>(std::move(dag), std::move(replicas), jo);
  spdlog::info("job {} ({}): {} vertices in {} stages", options_.job, spec_.name, jm_->total(),
               spec_.stages.size());
  return Status::Ok();
}

NamedLocality RootTask::Locality(const RunId& r) const {
  // File partitions count block by block, each block where its replicas are.
  std::vector<InputPiece> pieces;
  for (const InputPiece& p : jm_->Inputs(r)) {
    if (!p.from_file) {
      pieces.push_back(p);
      continue;
    }
    for (const Block& b : blocks_[p.source][p.item]) {
      if (b.replicas.empty() || b.bytes <= 0) continue;
      InputPiece piece;
      piece.bytes = b.bytes;
      piece.replicas = b.replicas;
      pieces.push_back(std::move(piece));
    }
  }
  scheduler::TaskLocality l =
      ComputeLocality(pieces, rack_of_, static_cast<int>(config_.racks.size()));
  NamedLocality out;
  out.worst_rack_bytes = l.worst.rack;
  out.worst_core_bytes = l.worst.core;
  for (const scheduler::PreferredComputer& c : l.computers) {
    out.computers.push_back({config_.computers[c.computer].name, c.bytes.rack, c.bytes.core});
  }
  for (const scheduler::PreferredRack& rk : l.racks) {
    out.racks.push_back({config_.racks[rk.rack].name, rk.bytes.rack, rk.bytes.core});
  }
  return out;
}

VertexTaskRequest RootTask::BuildTask(const RunId& r) {
  const JobDag& dag = jm_->dag();
  const StageSpec& st = spec_.stages[r.vertex.stage];
  VertexDescriptor d;
  d.job = options_.job;
  d.job_name = spec_.name;
  d.stage = st.name;
  d.index = r.vertex.index;
  d.version = r.version;
  d.program = st.program;
  d.params = st.params_json;
  d.scratch_job = std::to_string(options_.job);
  bool gathered = false;  // an input from another stage, all-to-all or gathered
  for (const InputPiece& p : jm_->Inputs(r)) {
    gathered |= !p.from_file && p.many_to_one;
    InputRef in;
    in.input = p.input;
    in.from_file = p.from_file;
    in.bytes = p.bytes;
    if (p.from_file) {
      in.path = dag.files[p.source].name;
      in.partition = p.item;
    } else {
      in.stage = dag.stages[p.source].name;
      in.index = p.item;
      in.path = ScratchFile(
          ScratchPrefix(options_.job, options_.incarnation, in.stage, p.item, p.version),
          static_cast<uint32_t>(p.attempt));
      in.partition = p.bucket;
    }
    d.inputs.push_back(std::move(in));
  }
  if (!st.output.empty()) {
    d.output = st.output;
    d.output_partition = r.vertex.index;
  } else if (jm_->has_consumers(r.vertex.stage)) {
    d.buckets = jm_->buckets(r.vertex.stage);
    d.scratch_prefix =
        ScratchPrefix(options_.job, options_.incarnation, st.name, r.vertex.index, r.version);
  }
  // How a streaming program runs, should the stage's program be one.
  StreamingSpec streaming = st.streaming.value_or(StreamingSpec{});
  d.streaming.format = streaming.format;
  d.streaming.sort = streaming.sort == "yes" || (streaming.sort == "auto" && gathered);
  d.streaming.combiner = streaming.combiner;
  d.streaming.bounds = streaming.range_bounds;
  VertexTaskRequest t;
  t.program = st.program;
  t.descriptor = DescriptorToJson(d);
  t.label = Label(dag, r);
  t.locality = Locality(r);
  if (spdlog::should_log(spdlog::level::debug)) {
    std::string where;
    for (const NamedLocality::Place& c : t.locality.computers) {
      where += fmt::format(" {}(rack {} B, core {} B)", c.name, c.rack_bytes, c.core_bytes);
    }
    spdlog::debug("{}: {} input pieces; worst rack {} B, core {} B; preferred:{}", t.label,
                  jm_->Inputs(r).size(), t.locality.worst_rack_bytes, t.locality.worst_core_bytes,
                  where.empty() ? " none" : where);
  }
  t.timeout = spec_.settings.vertex_timeout.value_or(Duration{0});
  if (jm_->run(r).duplicate) ++duplicates_;
  return t;
}

void RootTask::OnEvent(const TaskEvent& e) {
  auto it = run_of_task_.find(e.task);
  if (it == run_of_task_.end() || !jm_) return;
  const RunId run = it->second;
  Timestamp now = clock_.Now();
  auto computer = computer_index_.find(e.computer);
  int c = computer == computer_index_.end() ? -1 : computer->second;
  bool ended = true;
  switch (e.kind) {
    case TaskEventKind::kStarted:
      jm_->Started(run, static_cast<int>(e.attempt), c, now);
      ended = false;
      break;
    case TaskEventKind::kCompleted: {
      VertexResult res = ParseResult(e.result);
      int64_t total = 0;
      for (int64_t b : res.buckets) total += b;
      jm_->Completed(run, static_cast<int>(e.attempt), c, total, res.buckets, now);
      break;
    }
    case TaskEventKind::kFailed: {
      VertexResult res = ParseResult(e.result);
      const std::vector<InputPiece>& inputs = jm_->Inputs(run);
      if (res.input_lost && *res.input_lost >= 0 &&
          *res.input_lost < static_cast<int>(inputs.size()) && !inputs[*res.input_lost].from_file) {
        const InputPiece& p = inputs[*res.input_lost];
        jm_->InputLost(run, RunId{VertexId{p.source, p.item}, p.version},
                       res.error.empty() ? e.reason : res.error, now);
        break;
      }
      std::string reason = e.reason;
      if (!res.error.empty()) reason += ": " + res.error;
      std::string_view tail = e.log_tail;
      while (!tail.empty() && tail.back() == '\n') tail.remove_suffix(1);
      if (!tail.empty()) reason += "; log ends: " + std::string(Utf8Suffix(tail, kReasonTailBytes));
      // The reason travels in Cap'n Proto Text fields, which end at a NUL.
      jm_->Failed(run, FailureInfo{WithoutNul(reason), e.exit_code != kExitDoNotRetry}, now);
      break;
    }
    case TaskEventKind::kPreempted:
      jm_->Preempted(run, now);
      ended = false;
      break;
    case TaskEventKind::kLost:
      jm_->Lost(run, e.reason, now);
      break;
    case TaskEventKind::kWithdrawn:
      jm_->Withdrawn(run, now);
      break;
  }
  if (ended) {
    run_of_task_.erase(it);
    task_of_run_.erase(run);
  }
  Pump();
}

void RootTask::Pump() {
  // Nothing is sent without a master that welcomed this root: what is ready
  // waits for the next welcome.
  if (!jm_ || over_ || !welcomed_) return;
  Timestamp now = clock_.Now();
  std::vector<RunId> runs = jm_->TakeSubmissions(now);
  if (!runs.empty()) {
    capnp::MallocMessageBuilder msg;
    auto list = msg.initRoot<SchedulingMessage>().initSubmitTasks().initTasks(
        static_cast<unsigned>(runs.size()));
    for (unsigned i = 0; i < runs.size(); ++i) WriteVertexTask(list[i], BuildTask(runs[i]));
    Send(msg);
    awaiting_ids_.push_back(std::move(runs));
  }
  std::vector<RunId> withdraw = jm_->TakeWithdrawals();
  withdraw.insert(withdraw.end(), pending_withdrawals_.begin(), pending_withdrawals_.end());
  pending_withdrawals_.clear();
  for (const RunId& r : withdraw) {
    auto it = task_of_run_.find(r);
    if (it == task_of_run_.end()) {
      pending_withdrawals_.push_back(r);  // its id is on its way
      continue;
    }
    capnp::MallocMessageBuilder msg;
    msg.initRoot<SchedulingMessage>().initWithdrawTask().setTaskId(it->second);
    Send(msg);
  }
  if (jm_->outcome() == JobManager::Outcome::kRunning) {
    SendProgress(false);
    return;
  }
  bool ok = jm_->outcome() == JobManager::Outcome::kSucceeded;
  spdlog::info("job {} {}{}", options_.job, ok ? "succeeded" : "failed",
               ok ? "" : ": " + jm_->failure());
  over_ = Over{ok, jm_->failure(), ProgressJson()};
  SendOver();
}

void RootTask::SendOver() {
  capnp::MallocMessageBuilder msg;
  auto o = msg.initRoot<SchedulingMessage>().initJobOver();
  o.setSucceeded(over_->succeeded);
  o.setReason(over_->reason);
  o.setProgress(over_->progress);
  Send(msg);
}

std::string RootTask::ProgressJson() const {
  Json stages = Json::array();
  const JobDag& dag = jm_->dag();
  for (int s = 0; s < static_cast<int>(dag.stages.size()); ++s) {
    JobManager::Counts c = jm_->StageCounts(s);
    int failures = 0;
    for (int i = 0; i < dag.stages[s].vertices; ++i) failures += jm_->vertex({s, i}).failures;
    stages.push_back({{"name", dag.stages[s].name},
                      {"vertices", dag.stages[s].vertices},
                      {"waiting", c.waiting},
                      {"ready", c.ready},
                      {"submitted", c.submitted},
                      {"running", c.running},
                      {"done", c.done},
                      {"failed", c.failed},
                      {"failed_runs", failures}});
  }
  return DumpJson(
      Json{{"stages", stages}, {"done", jm_->completed()}, {"duplicates", duplicates_}});
}

void RootTask::SendProgress(bool force) {
  if (!welcomed_ || over_) return;
  Timestamp now = clock_.Now();
  if (!force && now - last_progress_ < options_.progress_every) return;
  last_progress_ = now;
  capnp::MallocMessageBuilder msg;
  msg.initRoot<SchedulingMessage>().initJobProgress().setJson(ProgressJson());
  Send(msg);
}

void RootTask::ArmTick() {
  tick_.Arm(options_.tick, [this] {
    jm_->Tick(clock_.Now());
    Pump();
    SendProgress(true);
    ArmTick();
  });
}

}  // namespace copse::rootjob

#include "master/job_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>

#include "common/json.h"
#include "common/program_name.h"

namespace copse::master {
namespace {

using Json = nlohmann::json;

constexpr const char* kJobPrefix = "job/";
constexpr const char* kNextJobKey = "jobs/next_id";

std::string JobKey(uint64_t id) { return fmt::format("{}{:020}", kJobPrefix, id); }

JobState ParseState(const std::string& s) {
  if (s == "running") return JobState::kRunning;
  if (s == "succeeded") return JobState::kSucceeded;
  if (s == "failed") return JobState::kFailed;
  if (s == "killed") return JobState::kKilled;
  return JobState::kQueued;
}

scheduler::JobAttributes Attributes(const rootjob::JobSpec& spec, uint64_t id, int vertices) {
  scheduler::JobAttributes a;
  // Admission follows submission order; job ids are handed out in it.
  a.submitted = Timestamp{static_cast<int64_t>(id)};
  a.root_in_cluster = true;
  a.min_tasks = spec.settings.min_tasks;
  a.max_tasks = spec.settings.max_tasks;
  const rootjob::PoolSettings& p = spec.settings.pool;
  a.pool.name = p.name;
  a.pool.weight = p.weight;
  a.pool.min_share = p.min_share;
  a.pool.fifo = p.fifo;
  a.pool.min_share_timeout = p.min_share_timeout.value_or(scheduler::kNever);
  a.slot_time = spec.settings.slot_time;
  a.expected_tasks = vertices;
  return a;
}

constexpr size_t kMaxJobCounters = 256;

Json PinsToJson(const std::vector<ProgramRef>& pins) {
  Json out = Json::array();
  for (const ProgramRef& p : pins) {
    out.push_back({{"name", p.name},
                   {"sha256", p.sha256},
                   {"path", p.path},
                   {"size", p.size},
                   {"entry", p.entry},
                   {"executable", p.executable}});
  }
  return out;
}

std::vector<ProgramRef> PinsFromJson(const Json& j) {
  std::vector<ProgramRef> out;
  if (!j.is_array()) return out;
  for (const Json& p : j) {
    out.push_back({p.at("name").get<std::string>(), p.at("sha256").get<std::string>(),
                   p.at("path").get<std::string>(), p.at("size").get<uint64_t>(),
                   p.value("entry", ""), p.value("executable", true)});
  }
  return out;
}

// Adds a run's counters (its result document) to the job's, and keeps the
// bytes it read by locality on the run.
void AddCounters(Json& into, int64_t* read_local, int64_t* read_rack, int64_t* read_core,
                 const std::string& result) {
  if (result.empty()) return;
  Result<Json> parsed = ParseJson(result, "a run's result");
  if (!parsed.ok() || !parsed->is_object()) return;
  const Json& r = *parsed;
  if (auto it = r.find("bytes_read"); it != r.end() && it->is_object()) {
    auto get = [&](const char* level) {
      auto v = it->find(level);
      return v != it->end() && (v->is_number_unsigned() || v->is_number_integer())
                 ? v->get<int64_t>()
                 : int64_t{0};
    };
    *read_local = get("local");
    *read_rack = get("rack");
    *read_core = get("core");
  }
  auto add = [&](const char* key, const Json& v) {
    if (v.is_number_unsigned() || v.is_number_integer()) {
      into[key] = into.value(key, int64_t{0}) + v.get<int64_t>();
    }
  };
  if (auto it = r.find("bytes_read"); it != r.end() && it->is_object()) {
    for (const char* level : {"local", "rack", "core"}) {
      if (auto v = it->find(level); v != it->end()) add((std::string("read_") + level).c_str(), *v);
    }
  }
  for (const char* key : {"bytes_written", "records_written"}) {
    if (auto v = r.find(key); v != r.end()) add(key, *v);
  }
  // The program's own counters (Vertex::Count), summed by name: at most
  // kMaxJobCounters names a job; names were checked by the runtime, and
  // are checked again here (a result file is the program's to write).
  if (auto c = r.find("counters"); c != r.end() && c->is_object()) {
    Json& mine = into["counters"];
    if (!mine.is_object()) mine = Json::object();
    for (const auto& [name, v] : c->items()) {
      if (!(v.is_number_integer() || v.is_number_unsigned()) || name.empty() || name.size() > 64 ||
          !std::all_of(name.begin(), name.end(), [](char ch) {
            return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
                   ch == '-';
          })) {
        continue;
      }
      if (!mine.contains(name) && mine.size() >= kMaxJobCounters) continue;
      mine[name] = mine.value(name, int64_t{0}) + v.get<int64_t>();
    }
  }
}

}  // namespace

const char* JobStateName(JobState s) {
  switch (s) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kSucceeded:
      return "succeeded";
    case JobState::kFailed:
      return "failed";
    case JobState::kKilled:
      return "killed";
  }
  return "?";
}

JobService::JobService(const ClusterConfig& config, dfs::MetaStore& store, JobFiles& files,
                       const Clock& wall, Options options)
    : config_(config), store_(store), files_(files), wall_(wall), options_(std::move(options)) {}

int64_t JobService::NowMs() const { return wall_.Now().count() / 1000; }

JobService::Job* JobService::Find(uint64_t id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}
const JobService::Job* JobService::Find(uint64_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

// ---- the table ----------------------------------------------------------------

Json JobService::RunToJson(const Run& r) {
  return {{"task", r.task},
          {"attempt", r.attempt},
          {"root", r.root},
          {"label", r.label},
          {"computer", r.computer},
          {"state", r.state},
          {"reason", r.reason},
          {"launched_ms", r.launched_ms},
          {"ended_ms", r.ended_ms},
          {"launch_us", r.launch_us},
          {"spawn_us", r.spawn_us},
          {"bytes_read", {{"local", r.read_local}, {"rack", r.read_rack}, {"core", r.read_core}}}};
}

Json JobService::Record(const Job& j) const {
  Json runs = Json::array();
  if (over(j)) {  // the history is kept with a finished job
    for (const Run& r : j.runs) {
      runs.push_back(RunToJson(r));
    }
  }
  return {{"id", j.id},
          {"request_id", j.request_id},
          {"name", j.name},
          {"spec", j.spec},
          {"state", JobStateName(j.state)},
          {"incarnation", j.incarnation},
          {"root_task", j.root_task},
          {"submitted_ms", j.submitted_ms},
          {"admitted_ms", j.admitted_ms},
          {"finished_ms", j.finished_ms},
          {"failure", j.failure},
          {"progress", over(j) ? j.progress : Json::object()},
          {"counters", j.counters},
          {"restarts", j.restarts},
          {"stage_vertices", j.stage_vertices},
          {"programs", PinsToJson(j.programs)},
          {"runs", runs}};
}

Status JobService::Save(Job& j) {
  std::string record = DumpJson(Record(j));
  COPSE_RETURN_IF_ERROR(
      store_.Apply({{JobKey(j.id), record}, {kNextJobKey, std::to_string(next_id_)}}));
  j.record_bytes = record.size();
  return Status::Ok();
}

Result<JobService::Job> JobService::FromRecord(const Json& r) const {
  Job j;
  j.id = r.at("id").get<uint64_t>();
  j.request_id = r.value("request_id", "");  // added later
  j.name = r.at("name").get<std::string>();
  j.spec = r.at("spec").get<std::string>();
  j.state = ParseState(r.at("state").get<std::string>());
  j.incarnation = r.at("incarnation").get<uint32_t>();
  j.root_task = r.at("root_task").get<uint64_t>();
  j.submitted_ms = r.at("submitted_ms").get<int64_t>();
  j.admitted_ms = r.at("admitted_ms").get<int64_t>();
  j.finished_ms = r.at("finished_ms").get<int64_t>();
  j.failure = r.at("failure").get<std::string>();
  j.progress = r.at("progress");
  j.counters = r.at("counters");
  j.restarts = r.at("restarts");
  j.programs = PinsFromJson(r.value("programs", Json::array()));
  for (const Json& x : r.at("runs")) {
    Run run;
    run.task = x.at("task");
    run.attempt = x.at("attempt");
    run.root = x.at("root");
    run.label = x.at("label");
    run.computer = x.at("computer");
    run.state = x.at("state");
    run.reason = x.at("reason");
    run.launched_ms = x.at("launched_ms");
    run.ended_ms = x.at("ended_ms");
    run.launch_us = x.at("launch_us");
    run.spawn_us = x.at("spawn_us");
    if (auto b = x.find("bytes_read"); b != x.end() && b->is_object()) {  // added later
      run.read_local = b->value("local", int64_t{0});
      run.read_rack = b->value("rack", int64_t{0});
      run.read_core = b->value("core", int64_t{0});
    }
    j.runs.push_back(std::move(run));
  }
  COPSE_ASSIGN_OR_RETURN(rootjob::JobSpec spec,
                         rootjob::ParseJobSpec(j.spec, rootjob::SpecLimits::Stored()));
  j.outputs = rootjob::OutputFiles(spec);
  // The counts the DAG had at submission (a stage sized by its input has 0
  // in the spec); records written before they were kept have the spec's.
  if (auto sv = r.find("stage_vertices");
      sv != r.end() && sv->is_array() && sv->size() == spec.stages.size()) {
    j.stage_vertices = sv->get<std::vector<int>>();
  } else {
    for (const rootjob::StageSpec& s : spec.stages) j.stage_vertices.push_back(s.vertices);
  }
  for (int n : j.stage_vertices) j.vertices += n;
  j.stages = spec.stages;
  j.attributes = Attributes(spec, j.id, j.vertices);
  return j;
}

Result<bool> JobService::Load() {
  COPSE_ASSIGN_OR_RETURN(dfs::MetaStore::Entries next, store_.Scan(kNextJobKey));
  for (const auto& [k, v] : next) {
    if (k == kNextJobKey) next_id_ = std::stoull(v);
  }
  COPSE_ASSIGN_OR_RETURN(dfs::MetaStore::Entries entries, store_.Scan(kJobPrefix));
  bool running = false;
  for (const auto& [key, value] : entries) {
    Result<Job> j = Status::Ok();
    try {
      j = FromRecord(Json::parse(value));
    } catch (const Json::exception& e) {
      j = Corruption(e.what());
    }
    if (!j.ok()) {
      spdlog::error("job table: cannot read {}: {}; skipping it", key, j.status().ToString());
      continue;
    }
    running |= j->state == JobState::kRunning;
    next_id_ = std::max(next_id_, j->id + 1);
    j->record_bytes = value.size();
    jobs_[j->id] = std::move(*j);
  }
  spdlog::info("job table: {} jobs", jobs_.size());
  return running;
}

Status JobService::Resume(JobScheduling& scheduling) {
  scheduling_ = &scheduling;
  std::set<uint64_t> live;
  for (auto& [id, j] : jobs_) {
    if (over(j)) continue;
    live.insert(id);
    COPSE_ASSIGN_OR_RETURN(
        j.root_task, scheduling.AddJob(id, j.incarnation, j.attributes, j.root_task, j.programs));
  }
  for (uint64_t id : files_.JobsWithFiles()) {
    if (live.count(id) != 0) continue;
    spdlog::info("collecting the files of job {}, which is over", id);
    files_.DropOutputs(id);
    files_.DeleteScratch(id);
  }
  return Status::Ok();
}

void JobService::AfterRecovery() {
  for (auto& [id, j] : jobs_) {
    if (j.state == JobState::kRunning && !scheduling_->RootAdopted(id)) {
      OnRootLost(id, "its root did not come back after the master restarted");
    }
  }
}

void JobService::Sweep() {
  for (auto it = unsaved_.begin(); it != unsaved_.end();) {
    Job* j = Find(*it);
    if (j == nullptr || Save(*j).ok()) {
      it = unsaved_.erase(it);
    } else {
      ++it;
    }
  }
  Trim();
}

void JobService::Trim() {
  // Finished jobs, oldest first: past the retention, or beyond the count or
  // the bytes the table may keep, they are forgotten.
  std::vector<const Job*> finished;
  uint64_t bytes = 0;
  for (const auto& [id, j] : jobs_) {
    if (!over(j)) continue;
    finished.push_back(&j);
    bytes += j.record_bytes;
  }
  std::sort(finished.begin(), finished.end(), [](const Job* a, const Job* b) {
    return std::tie(a->finished_ms, a->id) < std::tie(b->finished_ms, b->id);
  });
  const int64_t cutoff = NowMs() - config_.jobs.retention.count() / 1000;
  std::vector<dfs::MetaStore::Write> gone;
  std::vector<uint64_t> ids;
  size_t left = finished.size();
  for (const Job* j : finished) {
    bool expired = j->finished_ms < cutoff;
    bool too_many = left > static_cast<size_t>(config_.jobs.max_finished) ||
                    bytes > config_.jobs.max_finished_bytes;
    if (!expired && !too_many) break;
    gone.push_back({JobKey(j->id), std::nullopt});
    ids.push_back(j->id);
    bytes -= j->record_bytes;
    --left;
  }
  if (gone.empty()) return;
  if (Status s = store_.Apply(gone); !s.ok()) {
    spdlog::error("job table: cannot forget {} old jobs: {}", gone.size(), s.ToString());
    return;
  }
  for (uint64_t id : ids) jobs_.erase(id);
}

// ---- clients ----------------------------------------------------------------

Result<uint64_t> JobService::Submit(std::string_view text, std::string_view request_id) {
  if (request_id.size() > kMaxRequestIdBytes) {
    return InvalidArgument(
        fmt::format("submission: a request id of {} bytes is over the limit of {}",
                    request_id.size(), kMaxRequestIdBytes));
  }
  if (!request_id.empty()) {
    // The same submission again (its first answer was lost): the same job.
    for (const auto& [id, j] : jobs_) {
      if (j.request_id == request_id) return id;
    }
  }
  rootjob::SpecLimits limits{config_.jobs.max_vertices};
  COPSE_ASSIGN_OR_RETURN(rootjob::JobSpec spec, rootjob::ParseJobSpec(text, limits));
  // A new job grows the table; the reserve is kept for the jobs admitted.
  COPSE_RETURN_IF_ERROR(CheckDiskReserve(config_.master.data_dir, config_.dfs.reserve_bytes,
                                         text.size(), "the master", options_.free_space));
  COPSE_ASSIGN_OR_RETURN(std::vector<ProgramRef> pins, PinPrograms(spec));
  COPSE_ASSIGN_OR_RETURN(auto facts, files_.InputFacts(rootjob::InputFiles(spec)));
  std::vector<std::string> outputs = rootjob::OutputFiles(spec);
  COPSE_RETURN_IF_ERROR(files_.OutputsFree(outputs));
  for (const auto& [id, j] : jobs_) {
    if (over(j)) continue;
    for (const std::string& o : outputs) {
      if (std::find(j.outputs.begin(), j.outputs.end(), o) != j.outputs.end()) {
        return AlreadyExists(fmt::format("output {} is claimed by job {} ({}), which is {}", o, id,
                                         j.name, JobStateName(j.state)));
      }
    }
  }
  COPSE_ASSIGN_OR_RETURN(rootjob::JobDag dag, rootjob::BuildJobDag(spec, facts, limits));
  int queued = 0;
  for (const auto& [id, j] : jobs_) queued += j.state == JobState::kQueued ? 1 : 0;
  if (queued >= config_.jobs.max_queued) {
    return ResourceExhausted(
        fmt::format("{} jobs wait for admission already (the limit, [jobs] "
                    "max_queued in {}); try again later",
                    queued, config_.source.string()));
  }
  Job j;
  j.id = next_id_++;
  j.programs = std::move(pins);
  j.request_id = std::string(request_id);
  j.name = spec.name;
  j.spec = rootjob::JobSpecToJson(spec);
  j.submitted_ms = NowMs();
  j.outputs = outputs;
  j.vertices = dag.TotalVertices();
  for (const rootjob::Stage& st : dag.stages) j.stage_vertices.push_back(st.vertices);
  j.stages = spec.stages;
  j.attributes = Attributes(spec, j.id, j.vertices);
  COPSE_ASSIGN_OR_RETURN(j.root_task, scheduling_->AddJob(j.id, 0, j.attributes, 0, j.programs));
  Status s = Save(j);
  if (!s.ok()) {
    (void)scheduling_->EndJob(j.id, false);
    return s.WithContext("job table");
  }
  spdlog::info("job {} ({}) submitted: {} vertices", j.id, j.name, j.vertices);
  uint64_t id = j.id;
  jobs_[id] = std::move(j);
  return id;
}

Result<std::vector<ProgramRef>> JobService::PinPrograms(rootjob::JobSpec& spec) const {
  std::vector<ProgramRef> pins;
  auto pin = [&](std::string* program, const std::string& stage, const char* what) -> Status {
    Result<std::optional<AppRecord>> stored =
        options_.apps ? options_.apps->Resolve(*program) : std::optional<AppRecord>();
    if (!stored.ok()) {
      return Status(stored.status().code(), fmt::format("job spec: stage '{}': {}: {}", stage, what,
                                                        stored.status().message()));
    }
    if (*stored) {
      ProgramRef ref = (*stored)->Ref();
      *program = ref.name;
      if (std::none_of(pins.begin(), pins.end(),
                       [&](const ProgramRef& p) { return p.name == ref.name; })) {
        pins.push_back(std::move(ref));
      }
      return Status::Ok();
    }
    std::filesystem::path p = options_.apps_dir / *program;
    if (!ValidProgramName(*program) || ::access(p.c_str(), X_OK) != 0) {
      return InvalidArgument(fmt::format(
          "job spec: stage '{}': no {} '{}' in the program store or the apps directory {}", stage,
          what, *program, options_.apps_dir.string()));
    }
    return Status::Ok();
  };
  for (rootjob::StageSpec& s : spec.stages) {
    COPSE_RETURN_IF_ERROR(pin(&s.program, s.name, "program"));
    if (s.streaming && !s.streaming->combiner.empty()) {
      COPSE_RETURN_IF_ERROR(pin(&s.streaming->combiner, s.name, "combiner"));
    }
  }
  return pins;
}

std::optional<uint64_t> JobService::PinnedBy(const std::string& name,
                                             const std::string& version) const {
  const std::string pinned = name + "@" + version;
  for (const auto& [id, j] : jobs_) {
    if (over(j)) continue;
    for (const ProgramRef& p : j.programs) {
      if (p.name == pinned) return id;
    }
  }
  return std::nullopt;
}

namespace {

// Which content each stage runs: a pinned program of the store (with its
// hash) or one of the apps directory.
Json ProgramsDocument(const std::vector<rootjob::StageSpec>& stages,
                      const std::vector<ProgramRef>& pins) {
  Json out = Json::array();
  auto one = [&](const std::string& stage, const std::string& program, const char* role) {
    Json p = {{"stage", stage}, {"role", role}, {"program", program}};
    auto pin = std::find_if(pins.begin(), pins.end(),
                            [&](const ProgramRef& r) { return r.name == program; });
    if (pin != pins.end()) {
      p["source"] = "store";
      p["sha256"] = pin->sha256;
    } else {
      p["source"] = "apps directory";
    }
    out.push_back(p);
  };
  for (const rootjob::StageSpec& s : stages) {
    one(s.name, s.program, "program");
    if (s.streaming && !s.streaming->combiner.empty())
      one(s.name, s.streaming->combiner, "combiner");
  }
  return out;
}

}  // namespace

Json JobService::Document(const Job& j) const {
  Json stages = j.progress.contains("stages") ? j.progress["stages"] : Json::array();
  int done = j.progress.value("done", 0);
  if (j.state == JobState::kSucceeded) done = j.vertices;
  Json runs = {{"launched", 0},  {"completed", 0}, {"failed", 0},   {"killed", 0},
               {"preempted", 0}, {"lost", 0},      {"withdrawn", 0}};
  Json root = nullptr;
  for (const Run& r : j.runs) {
    if (r.root) {
      root = {
          {"task", r.task}, {"attempt", r.attempt}, {"computer", r.computer}, {"state", r.state}};
      continue;
    }
    runs["launched"] = runs["launched"].get<int>() + 1;
    if (runs.contains(r.state)) runs[r.state] = runs[r.state].get<int>() + 1;
  }
  int64_t end = j.finished_ms >= 0 ? j.finished_ms : NowMs();
  const Json& c = j.counters;
  return {{"id", j.id},
          {"name", j.name},
          {"state", JobStateName(j.state)},
          {"incarnation", j.incarnation},
          {"submitted", IsoTime(j.submitted_ms)},
          {"admitted", IsoTime(j.admitted_ms)},
          {"finished", IsoTime(j.finished_ms)},
          {"submitted_ms", j.submitted_ms},
          {"admitted_ms", j.admitted_ms},
          {"finished_ms", j.finished_ms},
          {"elapsed_s", static_cast<double>(end - j.submitted_ms) / 1000.0},
          {"failure", j.failure},
          {"outputs", j.outputs},
          {"root", root},
          {"vertices", {{"total", j.vertices}, {"done", done}}},
          {"stages", stages},
          {"runs", runs},
          {"duplicates", j.progress.value("duplicates", 0)},
          {"bytes_read",
           {{"local", c.value("read_local", int64_t{0})},
            {"rack", c.value("read_rack", int64_t{0})},
            {"core", c.value("read_core", int64_t{0})}}},
          {"bytes_written", c.value("bytes_written", int64_t{0})},
          {"records_written", c.value("records_written", int64_t{0})},
          {"counters", c.value("counters", Json::object())},
          {"programs", ProgramsDocument(j.stages, j.programs)},
          {"restarts", j.restarts}};
}

Result<std::string> JobService::StatusJson(uint64_t id) const {
  const Job* j = Find(id);
  if (j == nullptr) return NotFound(fmt::format("no job {}", id));
  return DumpJson(Document(*j));
}

std::string JobService::ListJson() const {
  Json list = Json::array();
  for (const auto& [id, j] : jobs_) {
    Json d = Document(j);
    list.push_back({{"id", id},
                    {"name", j.name},
                    {"state", d["state"]},
                    {"submitted", d["submitted"]},
                    {"finished", d["finished"]},
                    {"elapsed_s", d["elapsed_s"]},
                    {"vertices", d["vertices"]},
                    {"failure", j.failure}});
  }
  return DumpJson(Json{{"jobs", list}});
}

Result<KillResult> JobService::Kill(uint64_t id) {
  Job* j = Find(id);
  if (j == nullptr) return NotFound(fmt::format("no job {}", id));
  if (over(*j)) return KillResult{j->state, true};
  COPSE_RETURN_IF_ERROR(Finish(*j, JobState::kKilled, "killed by a client", false));
  return KillResult{j->state, false};
}

Result<std::string> JobService::LogIndexJson(uint64_t id) const {
  const Job* j = Find(id);
  if (j == nullptr) return NotFound(fmt::format("no job {}", id));
  Json runs = Json::array();
  for (const Run& r : j->runs) {
    const ComputerConfig* c = config_.FindComputer(r.computer);
    Json run = RunToJson(r);
    run["host"] = c != nullptr ? c->host : "";
    run["control_port"] = c != nullptr ? c->control_port : 0;
    runs.push_back(std::move(run));
  }
  return DumpJson(
      Json{{"id", id}, {"name", j->name}, {"state", JobStateName(j->state)}, {"runs", runs}});
}

// ---- the end of a job ---------------------------------------------------------

Status JobService::Finish(Job& j, JobState state, const std::string& failure, bool by_root) {
  // The record is the commit point: nothing in memory changes until the
  // store took the job's end. Publishing is idempotent, so a root whose
  // JobOver failed here (a full disk) and that sends it again ends the job
  // then; a master that restarts in between finds it running, and its root
  // sends the end again.
  Job next = j;
  next.state = state;
  if (state == JobState::kSucceeded) {
    Status s = files_.PublishOutputs(j.id);
    if (!s.ok()) {
      next.state = JobState::kFailed;
      next.failure = "its outputs could not be published: " + s.message();
    }
  }
  if (next.state != JobState::kSucceeded && next.failure.empty()) next.failure = failure;
  next.finished_ms = NowMs();
  ++next.version;
  COPSE_RETURN_IF_ERROR(Save(next).WithContext(fmt::format("job {}: the job table", j.id)));
  // Files the job leaves behind that are not removed now are collected
  // when the master starts again (Resume).
  if (next.state != JobState::kSucceeded) files_.DropOutputs(j.id);
  files_.DeleteScratch(j.id);
  j = std::move(next);
  unsaved_.erase(j.id);
  spdlog::info("job {} ({}) {}{}", j.id, j.name, JobStateName(j.state),
               j.failure.empty() ? "" : ": " + j.failure);
  uint64_t id = j.id;
  Trim();  // may forget `j` itself when the table keeps no finished job
  return scheduling_->EndJob(id, by_root);
}

void JobService::SaveOrRetry(Job& j) {
  Status s = Save(j);
  if (s.ok()) {
    unsaved_.erase(j.id);
    return;
  }
  if (unsaved_.insert(j.id).second) {
    spdlog::error("job table: job {}: {}; kept in memory and written again at the next sweep", j.id,
                  s.ToString());
  }
}

// ---- roots ------------------------------------------------------------------

Result<RootAdmission> JobService::ValidateRoot(uint64_t id, uint32_t incarnation,
                                               uint64_t root_task) const {
  const Job* j = Find(id);
  if (j == nullptr) return NotFound(fmt::format("no job {}", id));
  if (j->state != JobState::kRunning) {
    return FailedPrecondition(fmt::format("job {} is {}", id, JobStateName(j->state)));
  }
  if (j->incarnation != incarnation || j->root_task != root_task) {
    return FailedPrecondition(
        fmt::format("job {} runs as incarnation {} with root task {}, not incarnation {} task {}",
                    id, j->incarnation, j->root_task, incarnation, root_task));
  }
  return RootAdmission{j->name, j->spec};
}

void JobService::Progress(uint64_t id, std::string_view json) {
  Job* j = Find(id);
  if (j == nullptr || over(*j)) return;
  Result<Json> p = ParseJson(json, "a root's progress");
  if (p.ok() && p->is_object()) {
    j->progress = std::move(*p);
    ++j->version;
  }
}

Status JobService::Over(uint64_t id, bool succeeded, const std::string& reason,
                        std::string_view progress) {
  Job* j = Find(id);
  if (j == nullptr) return NotFound(fmt::format("no job {}", id));
  if (j->state != JobState::kRunning) {
    return FailedPrecondition(fmt::format("job {} is {}", id, JobStateName(j->state)));
  }
  Progress(id, progress);
  return Finish(*j, succeeded ? JobState::kSucceeded : JobState::kFailed, reason, true);
}

// ---- JobEvents ----------------------------------------------------------------

void JobService::OnAdmitted(uint64_t id) {
  Job* j = Find(id);
  if (j == nullptr || j->state != JobState::kQueued) return;
  j->state = JobState::kRunning;
  j->admitted_ms = NowMs();
  ++j->version;
  // Memory follows the scheduler, which admitted the job already; a record
  // the store refused is written again later (a master that restarts before
  // finds the job queued, and its root is refused and runs again).
  SaveOrRetry(*j);
}

void JobService::OnRun(const RunNews& news) {
  Job* j = Find(news.job);
  if (j == nullptr) return;
  auto it = std::find_if(j->runs.rbegin(), j->runs.rend(), [&](const Run& r) {
    return r.task == news.task && r.attempt == news.attempt;
  });
  if (news.what == RunNews::What::kLaunched || it == j->runs.rend()) {
    Run r;
    r.task = news.task;
    r.attempt = news.attempt;
    r.root = news.root;
    r.label = news.label;
    r.computer = news.computer;
    r.state = "launched";
    r.launched_ms = NowMs();
    j->runs.push_back(r);
    it = j->runs.rbegin();
  }
  Run& r = *it;
  ++j->version;
  switch (news.what) {
    case RunNews::What::kLaunched:
      break;
    case RunNews::What::kStarted:
      r.state = "running";
      break;
    case RunNews::What::kEnded:
      r.ended_ms = NowMs();
      if (news.exit) {
        r.state = news.exit->kind == ExitKind::kCompleted ? "completed"
                  : news.exit->kind == ExitKind::kKilled  ? "killed"
                                                          : "failed";
        r.reason = news.exit->reason;
        r.launch_us = news.exit->launch_us;
        r.spawn_us = news.exit->spawn_us;
        AddCounters(j->counters, &r.read_local, &r.read_rack, &r.read_core, news.exit->result);
      } else {
        r.state = news.ended_why == "preempted"                      ? "preempted"
                  : news.ended_why.find("lost") != std::string::npos ? "lost"
                                                                     : "withdrawn";
        r.reason = news.ended_why;
      }
      if (news.ended_why == "preempted") r.state = "preempted";
      break;
  }
}

void JobService::OnRootLost(uint64_t id, const std::string& why) {
  Job* j = Find(id);
  if (j == nullptr || over(*j)) return;
  if (static_cast<int>(j->restarts.size()) >= config_.jobs.max_root_restarts) {
    // A root that keeps dying does not restart its job for ever. This runs
    // while the scheduler handles an event, so the end waits until it is done.
    std::string reason =
        fmt::format("its root was lost {} times ([jobs] max_root_restarts is {}); the last time {}",
                    j->restarts.size() + 1, config_.jobs.max_root_restarts, why);
    options_.defer([this, id, reason] {
      Job* k = Find(id);
      if (k == nullptr || over(*k)) return;
      Status s = Finish(*k, JobState::kFailed, reason, false);
      if (!s.ok()) spdlog::error("job {}: cannot end it: {}", id, s.ToString());
    });
    return;
  }
  j->incarnation++;
  ++j->version;
  j->restarts.push_back({{"at", IsoTime(NowMs())}, {"why", why}});
  j->progress = Json::object();
  spdlog::warn("job {} ({}) restarts as incarnation {}: {}", id, j->name, j->incarnation, why);
  files_.DropOutputs(id);
  files_.DeleteScratch(id);
  scheduling_->SetIncarnation(id, j->incarnation);
  SaveOrRetry(*j);
}

}  // namespace copse::master

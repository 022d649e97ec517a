#include "master/api.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <asio/post.hpp>
#include <charconv>
#include <fstream>
#include <future>
#include <set>
#include <sstream>

#include "common/json.h"
#include "common/tasks.h"
#include "master/cluster_manager.h"
#include "master/dfs_service.h"
#include "master/job_service.h"
#include "master/metrics.h"
#include "master/scheduling_record.h"
#include "master/scheduling_service.h"
#include "rootjob/job_dag.h"

namespace copse::master {
namespace {

using Json = nlohmann::json;

constexpr int kMaxPage = 1000;

HttpResponse Ok(const Json& doc) {
  HttpResponse r;
  r.body = DumpJson(doc);
  return r;
}

// A query's parameters, checked against the ones a path takes.
class Params {
 public:
  Params(const HttpRequest& r, std::initializer_list<const char*> allowed) : r_(r) {
    std::set<std::string> ok(allowed.begin(), allowed.end());
    for (const auto& [k, v] : r.params) {
      if (ok.count(k) == 0) {
        std::string names;
        for (const char* a : allowed) names += std::string(names.empty() ? "" : ", ") + a;
        Fail(fmt::format("unknown query parameter '{}' (this path takes: {})", k,
                         names.empty() ? "none" : names));
        return;
      }
      if (r.params.count(k) > 1) {
        Fail(fmt::format("query parameter '{}' given more than once", k));
        return;
      }
    }
  }
  bool ok() const { return error_.empty(); }
  HttpResponse error() const { return JsonError(400, error_); }
  std::string String(const char* key, const std::string& def = "") const {
    auto it = r_.params.find(key);
    return it == r_.params.end() ? def : it->second;
  }
  int64_t Int(const char* key, int64_t def, int64_t lo, int64_t hi) {
    auto it = r_.params.find(key);
    if (it == r_.params.end()) return def;
    int64_t v = 0;
    const std::string& s = it->second;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) {
      Fail(fmt::format("query parameter '{}' = '{}': expected an integer in [{}, {}]", key, s, lo,
                       hi));
      return def;
    }
    return v;
  }
  bool Bool(const char* key, bool def) {
    auto it = r_.params.find(key);
    if (it == r_.params.end()) return def;
    if (it->second == "true" || it->second == "1") return true;
    if (it->second == "false" || it->second == "0") return false;
    Fail(fmt::format("query parameter '{}' = '{}': expected true or false", key, it->second));
    return def;
  }
  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

 private:
  const HttpRequest& r_;
  std::string error_;
};

// The id in the path's first group: a decimal number, else 400.
bool PathId(const HttpRequest& r, const char* what, uint64_t* id, HttpResponse* error) {
  const std::string& s = r.matches.size() > 1 ? r.matches[1] : std::string();
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *id);
  if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return true;
  *error = JsonError(400, fmt::format("'{}' is not a {} id (a decimal number)", s, what));
  return false;
}

Json BytesRead(int64_t local, int64_t rack, int64_t core) {
  return {{"local", local}, {"rack", rack}, {"core", core}};
}

const char* kVertexStates[] = {"pending", "submitted", "launched",  "running", "completed",
                               "failed",  "killed",    "preempted", "lost",    "withdrawn"};

Json VertexJson(const VertexRow& v, const std::vector<std::string>& stages) {
  double duration = -1;
  if (v.launched_ms >= 0 && v.ended_ms >= 0) duration = (v.ended_ms - v.launched_ms) / 1000.0;
  return {{"stage", stages[static_cast<size_t>(v.stage)]},
          {"index", v.index},
          {"version", v.version},
          {"task", v.task},
          {"attempt", v.attempt},
          {"state", v.state},
          {"computer", v.computer},
          {"reason", v.reason},
          {"launched_ms", v.launched_ms},
          {"ended_ms", v.ended_ms},
          {"duration_s", duration},
          {"runs", v.runs},
          {"bytes_read", BytesRead(v.read_local, v.read_rack, v.read_core)}};
}

// The vertex table of one job: a row per vertex of every stage, filled from
// its runs (launch order: the latest wins) and from the tasks the scheduler
// holds for it (a waiting task is a submitted vertex).
std::vector<VertexRow> VertexRows(const JobService::Job& j,
                                  const std::vector<SchedulingService::TaskSummary>* tasks,
                                  const std::map<std::string, int>& stage_of) {
  std::vector<size_t> first(j.stage_vertices.size() + 1, 0);
  for (size_t s = 0; s < j.stage_vertices.size(); ++s) {
    first[s + 1] = first[s] + static_cast<size_t>(std::max(0, j.stage_vertices[s]));
  }
  std::vector<VertexRow> rows(first.back());
  for (size_t s = 0; s < j.stage_vertices.size(); ++s) {
    for (size_t i = first[s]; i < first[s + 1]; ++i) {
      rows[i].stage = static_cast<int>(s);
      rows[i].index = static_cast<int>(i - first[s]);
      rows[i].state = "pending";
    }
  }
  auto row = [&](const std::string& label) -> VertexRow* {
    VertexLabel l;
    if (!ParseVertexLabel(label, &l)) return nullptr;
    auto it = stage_of.find(l.stage);
    if (it == stage_of.end()) return nullptr;
    size_t s = static_cast<size_t>(it->second);
    if (l.index < 0 || first[s] + static_cast<size_t>(l.index) >= first[s + 1]) return nullptr;
    VertexRow* r = &rows[first[s] + static_cast<size_t>(l.index)];
    if (l.version < r->version) return nullptr;  // an older version's run or task
    r->version = l.version;
    return r;
  };
  for (const JobService::Run& run : j.runs) {
    if (run.root) continue;
    VertexRow* r = row(run.label);
    if (r == nullptr) continue;
    r->runs += 1;
    r->task = run.task;
    r->attempt = run.attempt;
    r->state = run.state;
    r->computer = run.computer;
    r->reason = run.reason;
    r->launched_ms = run.launched_ms;
    r->ended_ms = run.ended_ms;
    r->read_local = run.read_local;
    r->read_rack = run.read_rack;
    r->read_core = run.read_core;
  }
  if (tasks != nullptr) {
    for (const SchedulingService::TaskSummary& t : *tasks) {
      if (t.root || t.state != "waiting") continue;
      VertexRow* r = row(t.label);
      if (r == nullptr) continue;
      // Waiting again after a run (preempted, or its computer was lost), or
      // never run yet.
      r->task = t.id;
      r->attempt = t.attempt;
      r->state = "submitted";
      r->computer.clear();
      r->ended_ms = -1;
      r->launched_ms = -1;
    }
  }
  return rows;
}

Json DagJson(const JobService::Job& j, const std::vector<VertexRow>& rows) {
  std::vector<std::map<std::string, int>> counts(j.stages.size());
  for (const VertexRow& v : rows) counts[static_cast<size_t>(v.stage)][v.state] += 1;
  Json stages = Json::array();
  Json edges = Json::array();
  std::set<std::string> files;
  for (size_t s = 0; s < j.stages.size(); ++s) {
    const rootjob::StageSpec& st = j.stages[s];
    Json by_state = Json::object();
    for (const char* name : kVertexStates) by_state[name] = counts[s][name];
    Json inputs = Json::array();
    for (const rootjob::InputSpec& in : st.inputs) {
      const char* conn = rootjob::ConnectionName(in.connection);
      if (!in.file.empty()) {
        inputs.push_back({{"file", in.file}, {"connection", conn}});
        edges.push_back({{"from", "file:" + in.file}, {"to", st.name}, {"connection", conn}});
        files.insert(in.file);
      } else {
        inputs.push_back({{"stage", in.stage}, {"connection", conn}});
        edges.push_back({{"from", in.stage}, {"to", st.name}, {"connection", conn}});
      }
    }
    if (!st.output.empty()) {
      edges.push_back({{"from", st.name}, {"to", "file:" + st.output}, {"connection", "output"}});
      files.insert(st.output);
    }
    stages.push_back({{"name", st.name},
                      {"program", st.program},
                      {"vertices", s < j.stage_vertices.size() ? j.stage_vertices[s] : 0},
                      {"states", by_state},
                      {"inputs", inputs},
                      {"output", st.output}});
  }
  return {{"job", j.id}, {"stages", stages}, {"files", files}, {"edges", edges}};
}

Json TimelineJson(const JobService::Job& j) {
  Json runs = Json::array();
  for (const JobService::Run& r : j.runs) {
    runs.push_back({{"task", r.task},
                    {"attempt", r.attempt},
                    {"root", r.root},
                    {"label", r.label},
                    {"computer", r.computer},
                    {"state", r.state},
                    {"launched_ms", r.launched_ms},
                    {"ended_ms", r.ended_ms}});
  }
  return runs;
}

// Sort keys of the vertex table.
const char* kSortKeys[] = {"stage",       "index",      "state",      "computer",
                           "launched_ms", "duration_s", "bytes_read", "runs"};

bool VertexLess(const VertexRow& a, const VertexRow& b, const std::string& key) {
  auto duration = [](const VertexRow& v) {
    return v.launched_ms >= 0 && v.ended_ms >= 0 ? v.ended_ms - v.launched_ms : -1;
  };
  auto bytes = [](const VertexRow& v) { return v.read_local + v.read_rack + v.read_core; };
  auto pos = [](const VertexRow& v) { return std::make_pair(v.stage, v.index); };
  if (key == "state" && a.state != b.state) return a.state < b.state;
  if (key == "computer" && a.computer != b.computer) return a.computer < b.computer;
  if (key == "launched_ms" && a.launched_ms != b.launched_ms) return a.launched_ms < b.launched_ms;
  if (key == "duration_s" && duration(a) != duration(b)) return duration(a) < duration(b);
  if (key == "bytes_read" && bytes(a) != bytes(b)) return bytes(a) < bytes(b);
  if (key == "runs" && a.runs != b.runs) return a.runs < b.runs;
  if (key == "index" && a.index != b.index) return a.index < b.index;
  return pos(a) < pos(b);
}

std::string ReadFile(const std::filesystem::path& p, bool* ok) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  *ok = static_cast<bool>(in) || in.eof();
  return s.str();
}

std::string ContentType(const std::string& name) {
  auto ends = [&](const char* x) { return name.ends_with(x); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "application/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// The Debian packages' scripts the dashboard uses, by the name it asks for.
struct LibraryFile {
  const char* name;
  const char* path;
  const char* package;
};
const LibraryFile kLibraries[] = {
    {"d3.js", "/usr/share/nodejs/d3/dist/d3.min.js", "node-d3"},
    {"dagre-d3.js", "/usr/share/nodejs/dagre-d3/dist/dagre-d3.min.js", "node-dagre-d3-renderer"},
    {"chart.js", "/usr/share/javascript/chart.js/chart.min.js", "libjs-chart.js"},
};

}  // namespace

Api::Api(asio::io_context& io, const ClusterConfig& config, const Clock& clock, const Clock& wall,
         ClusterManager& cluster, DfsService& dfs, JobService& jobs, SchedulingService& scheduling,
         const SchedulingRecord& record, Options options)
    : io_(io),
      config_(config),
      clock_(clock),
      wall_(wall),
      cluster_(cluster),
      dfs_(dfs),
      jobs_(jobs),
      scheduling_(scheduling),
      record_(record),
      options_(std::move(options)),
      timer_(io) {}

Api::~Api() { Stop(); }

Status Api::Start() {
  HttpServer::Options o;
  o.host = config_.http.host;
  o.port = config_.http.port;
  o.threads = config_.http.threads;
  o.token = options_.token;
  o.allowed_hosts = config_.http.allowed_hosts;
  if (MasterMetrics* m = options_.metrics)
    o.on_response = [m](int status) { m->HttpResponse(status); };
  server_ = std::make_unique<HttpServer>(o);
  Refresh();
  Routes();
  COPSE_RETURN_IF_ERROR(server_->Start());
  ArmRefresh();
  return Status::Ok();
}

void Api::Stop() {
  stopped_ = true;
  timer_.cancel();
  if (server_) server_->Stop();
}

std::shared_ptr<const ApiSnapshot> Api::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

void Api::ArmRefresh() {
  timer_.expires_after(options_.refresh);
  std::weak_ptr<int> alive = alive_;
  timer_.async_wait([this, alive](const asio::error_code& ec) {
    if (ec || alive.expired() || stopped_) return;
    Refresh();
    ArmRefresh();
  });
}

// ---- the snapshot (on the loop) ------------------------------------------------

Json Api::BuildCluster() {
  Timestamp now = clock_.Now();
  if (holdings_.empty() || now - holdings_at_ >= options_.holdings_refresh) {
    holdings_ = Json::object();
    stored_bytes_ = 0;
    const dfs::NameService& names = dfs_.names();
    for (const auto& [computer, h] : names.ns().Holdings()) {
      holdings_[computer] = {{"blocks", h.blocks}, {"bytes", h.bytes}};
      stored_bytes_ += h.bytes;
    }
    size_t total = 0;
    Json under = Json::array();
    for (const auto& u : names.UnderReplicatedList(100, &total)) {
      under.push_back({{"block", u.block},
                       {"path", u.path},
                       {"partition", u.partition},
                       {"replication", u.replication},
                       {"live_replicas", u.live}});
    }
    under_total_ = total;
    auto doc = std::make_shared<const Json>(Json{{"total", total}, {"blocks", under}});
    {
      std::lock_guard<std::mutex> lock(mu_);
      under_replicated_ = std::move(doc);
    }
    holdings_at_ = now;
  }
  std::map<std::string, ComputerView> views;
  for (ComputerView& v : cluster_.Snapshot(now)) views[v.name] = std::move(v);
  const scheduler::ClusterState& state = scheduling_.scheduler().state();
  Json racks = Json::array();
  int slots = 0, busy = 0, live = 0, draining = 0;
  for (size_t r = 0; r < config_.racks.size(); ++r) {
    Json computers = Json::array();
    for (int index : config_.racks[r].computers) {
      const ComputerConfig& c = config_.computers[static_cast<size_t>(index)];
      const ComputerView& v = views[c.name];
      const scheduler::ComputerInfo& info = state.computer(index);
      Json held =
          holdings_.contains(c.name) ? holdings_[c.name] : Json{{"blocks", 0}, {"bytes", 0}};
      std::vector<uint64_t> tasks(info.tasks.begin(), info.tasks.end());
      computers.push_back({{"id", index},
                           {"name", c.name},
                           {"state", ComputerStateName(v.state)},
                           {"host", c.host},
                           {"slots", c.slots},
                           {"busy_slots", info.used},
                           {"roots", info.roots},
                           {"tasks", tasks},
                           {"heartbeat_age_ms", v.last_heartbeat_ago_ms},
                           {"blocks", held["blocks"]},
                           {"bytes_stored", held["bytes"]},
                           {"draining", v.draining},
                           {"sole_blocks", Json(nullptr)}});
      if (v.draining) computers.back()["sole_blocks"] = dfs_.names().Drain(c.name).sole_blocks;
      slots += c.slots;
      busy += info.used;
      live += v.state == ComputerState::kLive ? 1 : 0;
      draining += v.draining ? 1 : 0;
    }
    racks.push_back({{"id", r}, {"name", config_.racks[r].name}, {"computers", computers}});
  }
  return {{"name", config_.name}, {"computers", config_.computers.size()},
          {"live", live},         {"draining", draining},
          {"slots", slots},       {"busy_slots", busy},
          {"racks", racks}};
}

void Api::Refresh() {
  auto snap = std::make_shared<ApiSnapshot>();
  std::shared_ptr<const ApiSnapshot> previous = snapshot();
  snap->taken_ms = wall_.Now().count() / 1000;
  snap->cluster = BuildCluster();
  Json list = Json::array();
  for (const auto& [id, j] : jobs_.jobs()) {
    std::shared_ptr<const JobView> old;
    if (previous) {
      auto it = previous->job.find(id);
      if (it != previous->job.end()) old = it->second;
    }
    bool live = j.state == JobState::kQueued || j.state == JobState::kRunning;
    uint64_t tasks_version = scheduling_.TasksVersion(id);
    if (old && old->version == j.version && old->tasks_version == tasks_version && !live) {
      snap->job[id] = old;
    } else {
      auto v = std::make_shared<JobView>();
      v->id = id;
      v->version = j.version;
      v->tasks_version = tasks_version;
      v->live = live;
      if (old && old->version == j.version) {
        // Unchanged but for the clock: the document's elapsed time moves.
        v->status = old->status;
        v->status["elapsed_s"] = static_cast<double>(snap->taken_ms - j.submitted_ms) / 1000.0;
      } else {
        v->status = jobs_.Document(j);
      }
      snap->job[id] = std::move(v);
    }
    const Json& d = snap->job[id]->status;
    list.push_back({{"id", id},
                    {"name", j.name},
                    {"state", d["state"]},
                    {"incarnation", d["incarnation"]},
                    {"submitted_ms", d["submitted_ms"]},
                    {"admitted_ms", d["admitted_ms"]},
                    {"finished_ms", d["finished_ms"]},
                    {"elapsed_s", d["elapsed_s"]},
                    {"vertices", d["vertices"]},
                    {"bytes_read", d["bytes_read"]},
                    {"failure", d["failure"]}});
  }
  snap->jobs = {{"jobs", list}};
  Json sched = scheduling_.Describe();
  // Rounds: their times on the wall clock.
  int64_t offset_ms = snap->taken_ms - clock_.Now().count() / 1000;
  Json rounds = Json::array();
  for (const SchedulingRecord::Round& r : record_.rounds()) {
    Json x = r.policy.is_object() ? r.policy : Json::object();
    x["at_ms"] = r.at.count() / 1000 + offset_ms;
    x["round_ms"] = static_cast<double>(r.wall.count()) / 1000.0;
    x["decisions"] = r.decisions;
    rounds.push_back(std::move(x));
  }
  sched["rounds"] = std::move(rounds);
  snap->scheduler = std::move(sched);
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(snap);
}

// ---- routes (on the server's threads) ----------------------------------------

void Api::Routes() {
  auto bind = [this](HttpResponse (Api::*f)(const HttpRequest&)) {
    return [this, f](const HttpRequest& r) { return (this->*f)(r); };
  };
  HttpServer& s = *server_;
  s.Get("/api/v1/cluster", bind(&Api::Cluster));
  s.Get("/api/v1/jobs", bind(&Api::Jobs));
  s.Get("/api/v1/jobs/([^/]+)", bind(&Api::JobDoc));
  s.Get("/api/v1/jobs/([^/]+)/vertices", bind(&Api::Vertices));
  s.Get("/api/v1/jobs/([^/]+)/dag", bind(&Api::Dag));
  s.Get("/api/v1/jobs/([^/]+)/timeline", bind(&Api::Timeline));
  s.Get("/api/v1/scheduler", bind(&Api::Scheduler));
  s.Get("/api/v1/scheduler/flowgraph", bind(&Api::FlowGraph));
  s.Get("/api/v1/tasks/([^/]+)/explain", bind(&Api::Explain));
  s.Get("/api/v1/dfs", bind(&Api::Dfs));
  if (options_.metrics) s.Get("/metrics", bind(&Api::Metrics));
  s.Get("/api/v1(/.*)?", [](const HttpRequest& r) {
    return JsonError(404, fmt::format("no such API path: {} (docs/api.md lists them)", r.path));
  });
  s.Get("/(|index\\.html|static/[^/]+)", bind(&Api::Static));
  s.Get("/lib/([^/]+)", bind(&Api::Library));
}

HttpResponse Api::OnLoop(std::function<HttpResponse()> f) {
  auto done = std::make_shared<std::promise<HttpResponse>>();
  std::future<HttpResponse> result = done->get_future();
  std::weak_ptr<int> alive = alive_;
  asio::post(io_, [done, f = std::move(f), alive] {
    if (alive.expired()) return;
    try {
      done->set_value(f());
    } catch (const std::exception& e) {
      done->set_value(JsonError(500, std::string("internal error: ") + e.what()));
    }
  });
  if (result.wait_for(options_.loop_wait) != std::future_status::ready) {
    return JsonError(503, fmt::format("the master is busy: no answer within {} ms; try again",
                                      options_.loop_wait.count()));
  }
  return result.get();
}

HttpResponse Api::Cluster(const HttpRequest& r) {
  Params p(r, {});
  if (!p.ok()) return p.error();
  auto snap = snapshot();
  Json doc = snap->cluster;
  doc["snapshot_ms"] = snap->taken_ms;
  return Ok(doc);
}

HttpResponse Api::Jobs(const HttpRequest& r) {
  Params p(r, {"state"});
  std::string state = p.String("state");
  static const std::set<std::string> kStates = {"queued", "running", "succeeded", "failed",
                                                "killed"};
  if (!state.empty() && kStates.count(state) == 0) {
    p.Fail(
        fmt::format("query parameter 'state' = '{}': expected queued, running, succeeded, "
                    "failed or killed",
                    state));
  }
  if (!p.ok()) return p.error();
  auto snap = snapshot();
  Json list = Json::array();
  for (const Json& j : snap->jobs["jobs"]) {
    if (state.empty() || j["state"] == state) list.push_back(j);
  }
  return Ok({{"jobs", list}, {"snapshot_ms", snap->taken_ms}});
}

namespace {
// The job of the path, or the error to answer.
std::shared_ptr<const JobView> FindJob(const ApiSnapshot& snap, const HttpRequest& r,
                                       HttpResponse* error) {
  uint64_t id = 0;
  if (!PathId(r, "job", &id, error)) return nullptr;
  auto it = snap.job.find(id);
  if (it == snap.job.end()) {
    *error = JsonError(
        404, fmt::format("no job {} (finished jobs are kept for [jobs] retention_s)", id));
    return nullptr;
  }
  return it->second;
}
}  // namespace

// A path of one job that takes no query parameters: the job's view in the
// snapshot, or the error to answer.
std::shared_ptr<const JobView> Api::PlainJob(const HttpRequest& r, int64_t* taken_ms,
                                             HttpResponse* error) const {
  Params p(r, {});
  if (!p.ok()) {
    *error = p.error();
    return nullptr;
  }
  auto snap = snapshot();
  *taken_ms = snap->taken_ms;
  return FindJob(*snap, r, error);
}

HttpResponse Api::JobDoc(const HttpRequest& r) {
  int64_t taken = 0;
  HttpResponse error;
  auto job = PlainJob(r, &taken, &error);
  return job ? Ok(job->status) : error;
}

HttpResponse Api::Vertices(const HttpRequest& r) {
  Params p(r, {"state", "stage", "offset", "limit", "sort"});
  int64_t offset = p.Int("offset", 0, 0, 100'000'000);
  int64_t limit = p.Int("limit", 100, 1, kMaxPage);
  std::set<std::string> states;
  {
    std::string list = p.String("state");
    std::stringstream in(list);
    for (std::string s; std::getline(in, s, ',');) {
      if (std::find(std::begin(kVertexStates), std::end(kVertexStates), s) ==
          std::end(kVertexStates)) {
        p.Fail(
            fmt::format("query parameter 'state': unknown vertex state '{}' (docs/api.md "
                        "lists them)",
                        s));
      }
      states.insert(s);
    }
  }
  std::string sort = p.String("sort", "stage");
  bool descending = !sort.empty() && sort[0] == '-';
  std::string key = descending ? sort.substr(1) : sort;
  if (std::find(std::begin(kSortKeys), std::end(kSortKeys), key) == std::end(kSortKeys)) {
    p.Fail(
        fmt::format("query parameter 'sort' = '{}': expected one of stage, index, state, "
                    "computer, launched_ms, duration_s, bytes_read, runs (a leading '-' "
                    "sorts descending)",
                    sort));
  }
  if (!p.ok()) return p.error();
  HttpResponse error;
  auto snap = snapshot();
  auto view = FindJob(*snap, r, &error);
  if (!view) return error;
  auto job = Detail(*view, &error);
  if (!job) return error;
  int stage = -1;
  if (std::string name = p.String("stage"); !name.empty()) {
    auto it = std::find(job->stage_names.begin(), job->stage_names.end(), name);
    if (it == job->stage_names.end()) {
      return JsonError(
          400, fmt::format("query parameter 'stage': job {} has no stage '{}'", view->id, name));
    }
    stage = static_cast<int>(it - job->stage_names.begin());
  }
  std::vector<const VertexRow*> rows;
  rows.reserve(job->vertices.size());
  for (const VertexRow& v : job->vertices) {
    if (stage >= 0 && v.stage != stage) continue;
    if (!states.empty() && states.count(v.state) == 0) continue;
    rows.push_back(&v);
  }
  size_t end = std::min(rows.size(), static_cast<size_t>(offset + limit));
  size_t begin = std::min(rows.size(), static_cast<size_t>(offset));
  if (key != "stage" || descending) {
    auto less = [&](const VertexRow* a, const VertexRow* b) {
      return descending ? VertexLess(*b, *a, key) : VertexLess(*a, *b, key);
    };
    std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(end), rows.end(),
                      less);
  }
  Json page = Json::array();
  for (size_t i = begin; i < end; ++i) page.push_back(VertexJson(*rows[i], job->stage_names));
  return Ok({{"job", view->id},
             {"total", rows.size()},
             {"offset", offset},
             {"limit", limit},
             {"sort", sort},
             {"vertices", page},
             {"snapshot_ms", snap->taken_ms}});
}

HttpResponse Api::Dag(const HttpRequest& r) {
  int64_t taken = 0;
  HttpResponse error;
  auto view = PlainJob(r, &taken, &error);
  if (!view) return error;
  auto job = Detail(*view, &error);
  return job ? Ok(job->dag) : error;
}

HttpResponse Api::Timeline(const HttpRequest& r) {
  int64_t taken = 0;
  HttpResponse error;
  auto view = PlainJob(r, &taken, &error);
  if (!view) return error;
  auto job = Detail(*view, &error);
  if (!job) return error;
  return Ok({{"job", view->id}, {"runs", job->timeline}, {"snapshot_ms", taken}});
}

std::shared_ptr<const JobDetail> Api::Detail(const JobView& view, HttpResponse* error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = details_.find(view.id);
    if (it != details_.end() && ((it->second.detail->version == view.version &&
                                  it->second.detail->tasks_version == view.tasks_version) ||
                                 clock_.Now() - it->second.detail->built_at < options_.refresh)) {
      it->second.used = ++detail_uses_;
      return it->second.detail;
    }
  }
  // The loop may run this after the wait gave up: it owns what it touches.
  const uint64_t id = view.id;
  auto built = std::make_shared<std::shared_ptr<const JobDetail>>();
  HttpResponse answer = OnLoop([this, id, built] {
    auto it = jobs_.jobs().find(id);
    if (it == jobs_.jobs().end()) {
      return JsonError(404, fmt::format("no job {} (it was forgotten a moment ago)", id));
    }
    const JobService::Job& j = it->second;
    auto d = std::make_shared<JobDetail>();
    d->version = j.version;
    d->tasks_version = scheduling_.TasksVersion(id);
    d->built_at = clock_.Now();
    std::map<std::string, int> stage_of;
    for (size_t s = 0; s < j.stages.size(); ++s) {
      stage_of[j.stages[s].name] = static_cast<int>(s);
      d->stage_names.push_back(j.stages[s].name);
    }
    std::vector<SchedulingService::TaskSummary> tasks = scheduling_.TasksOf(id);
    d->vertices = VertexRows(j, &tasks, stage_of);
    d->dag = DagJson(j, d->vertices);
    d->timeline = TimelineJson(j);
    std::lock_guard<std::mutex> lock(mu_);
    details_[id] = {d, ++detail_uses_};
    if (details_.size() > kDetailsKept) {
      auto oldest = std::min_element(
          details_.begin(), details_.end(),
          [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
      details_.erase(oldest);
    }
    *built = std::move(d);
    return HttpResponse{};
  });
  std::lock_guard<std::mutex> lock(mu_);
  if (!*built) *error = answer;
  return *built;
}

HttpResponse Api::Scheduler(const HttpRequest& r) {
  Params p(r, {});
  if (!p.ok()) return p.error();
  auto snap = snapshot();
  Json doc = snap->scheduler;
  doc["snapshot_ms"] = snap->taken_ms;
  return Ok(doc);
}

HttpResponse Api::FlowGraph(const HttpRequest& r) {
  Params p(r, {});
  if (!p.ok()) return p.error();
  return OnLoop([this] {
    Json g = scheduling_.FlowGraph();
    std::string policy = std::string(scheduling_.scheduler().policy().name());
    if (g.is_null()) {
      return Ok({{"policy", policy},
                 {"graph", nullptr},
                 {"why", fmt::format("policy {} schedules without a flow graph; only the Quincy "
                                     "policies (Q, QP, QF, QFP, QFPX) have one",
                                     policy)}});
    }
    return Ok({{"policy", policy}, {"graph", g}});
  });
}

HttpResponse Api::Explain(const HttpRequest& r) {
  Params p(r, {});
  if (!p.ok()) return p.error();
  uint64_t id = 0;
  HttpResponse error;
  if (!PathId(r, "task", &id, &error)) return error;
  return OnLoop([this, id] {
    Result<Json> e = scheduling_.Explain(id);
    if (!e.ok()) {
      int status = e.status().code() == StatusCode::kNotFound ? 404 : 500;
      return JsonError(status, e.status().message() +
                                   (status == 404 ? " (a task the scheduler no longer holds has "
                                                    "ended: see its job's vertices)"
                                                  : ""));
    }
    return Ok(*e);
  });
}

HttpResponse Api::Dfs(const HttpRequest& r) {
  Params p(r, {"prefix", "after", "limit", "scratch"});
  std::string prefix = p.String("prefix", "/");
  std::string after = p.String("after");
  int64_t limit = p.Int("limit", 100, 1, kMaxPage);
  bool scratch = p.Bool("scratch", false);
  if (prefix.empty() || prefix[0] != '/') {
    p.Fail(fmt::format("query parameter 'prefix' = '{}': expected a DFS path starting with '/'",
                       prefix));
  }
  if (!p.ok()) return p.error();
  return OnLoop([this, prefix, after, limit, scratch] {
    const dfs::NameService& names = dfs_.names();
    bool more = false;
    std::vector<dfs::FileView> page =
        names.ns().Page(prefix, after, static_cast<size_t>(limit), scratch, &more);
    Json files = Json::array();
    for (const dfs::FileView& f : page) {
      Json parts = Json::array();
      for (const dfs::PartitionView& pv : f.partitions) {
        Json blocks = Json::array();
        for (const dfs::BlockView& b : pv.blocks) {
          int live = 0;
          for (const std::string& c : b.replicas) live += names.IsLive(c) ? 1 : 0;
          blocks.push_back(
              {{"id", b.id}, {"size", b.size}, {"replicas", b.replicas}, {"live_replicas", live}});
        }
        parts.push_back({{"committed", pv.committed}, {"size", pv.size}, {"blocks", blocks}});
      }
      files.push_back({{"path", f.path},
                       {"size", f.size},
                       {"replication", f.replication},
                       {"placement", f.placement},
                       {"visible", f.visible},
                       {"scratch_job", f.scratch_job},
                       {"partitions", parts}});
    }
    std::shared_ptr<const Json> under;
    {
      std::lock_guard<std::mutex> lock(mu_);
      under = under_replicated_;
    }
    return Ok(
        {{"prefix", prefix},
         {"files", files},
         {"more", more},
         {"next_after", more && !page.empty() ? Json(page.back().path) : Json(nullptr)},
         {"file_count", names.ns().file_count()},
         {"block_count", names.ns().block_count()},
         {"under_replicated", under ? *under : Json{{"total", 0}, {"blocks", Json::array()}}}});
  });
}

HttpResponse Api::Metrics(const HttpRequest& r) {
  if (!r.params.empty()) return JsonError(400, "/metrics takes no query parameters");
  HttpResponse set = OnLoop([this] {
    MasterMetrics::State st;
    Timestamp now = clock_.Now();
    for (const ComputerView& v : cluster_.Snapshot(now)) ++st.computers[ComputerStateName(v.state)];
    const scheduler::ClusterState& state = scheduling_.scheduler().state();
    for (size_t c = 0; c < config_.computers.size(); ++c) {
      st.slots += config_.computers[c].slots;
      st.busy_slots += state.computer(static_cast<int>(c)).used;
    }
    for (const auto& [id, j] : jobs_.jobs()) ++st.jobs[JobStateName(j.state)];
    const dfs::NameService& names = dfs_.names();
    st.dfs_files = names.ns().file_count();
    st.dfs_blocks = names.ns().block_count();
    st.dfs_under_replicated_blocks = under_total_;
    st.dfs_stored_bytes = stored_bytes_;
    options_.metrics->SetState(st);
    return HttpResponse{};
  });
  if (set.status != 200) return set;
  HttpResponse res;
  res.body = options_.metrics->Serialize();
  res.content_type = MasterMetrics::kContentType;
  return res;
}

HttpResponse Api::Static(const HttpRequest& r) {
  if (!r.params.empty()) return JsonError(400, "the dashboard's files take no query parameters");
  std::string name = r.matches.size() > 1 ? r.matches[1] : "";
  if (name.empty()) name = "index.html";
  if (name.starts_with("static/")) name = name.substr(7);
  // Plain names only: no way out of the directory.
  if (name.empty() || name[0] == '.' ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
          std::string::npos) {
    return JsonError(404, "no such file: " + r.path);
  }
  bool ok = false;
  std::string body = ReadFile(options_.dashboard_dir / name, &ok);
  if (!ok || !std::filesystem::is_regular_file(options_.dashboard_dir / name)) {
    return JsonError(404, fmt::format("no such file: {} (the dashboard's files are in {})", r.path,
                                      options_.dashboard_dir.string()));
  }
  HttpResponse res;
  res.body = std::move(body);
  res.content_type = ContentType(name);
  return res;
}

HttpResponse Api::Library(const HttpRequest& r) {
  std::string name = r.matches.size() > 1 ? r.matches[1] : "";
  for (const LibraryFile& lib : kLibraries) {
    if (name != lib.name) continue;
    bool ok = false;
    std::string body = ReadFile(lib.path, &ok);
    if (!ok || body.empty()) {
      return JsonError(404, fmt::format("{} is not installed here: install the Debian package {} "
                                        "(scripts/install-deps.sh does)",
                                        lib.path, lib.package));
    }
    HttpResponse res;
    res.body = std::move(body);
    res.content_type = ContentType(name);
    res.headers.push_back({"X-Debian-Package", lib.package});
    return res;
  }
  return JsonError(404, "no such library: " + name);
}

}  // namespace copse::master

// The master's HTTP API (docs/api.md) on a real local cluster running jobs:
// every documented field of every path, bad input answered with JSON errors
// while the master keeps running, the token, and the dashboard's files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "tests/harness/cluster_fixture.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct Reply {
  int status = 0;
  json body;
  std::string text;
  std::string content_type;
};

// Every key must be present (documented fields never disappear).
void ExpectFields(const json& doc, std::initializer_list<const char*> keys,
                  const std::string& what) {
  ASSERT_TRUE(doc.is_object()) << what << ": " << doc.dump();
  for (const char* k : keys)
    EXPECT_TRUE(doc.contains(k)) << what << " lacks '" << k << "': " << doc.dump();
}

class ApiTest : public ClusterTest {
 protected:
  Reply Get(const std::string& path, const std::string& token = "") {
    httplib::Client c("127.0.0.1", config_.http.port);
    c.set_connection_timeout(5, 0);
    c.set_read_timeout(10, 0);
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto res = c.Get(path, h);
    Reply r;
    if (!res) {
      ADD_FAILURE() << "GET " << path << ": " << httplib::to_string(res.error());
      return r;
    }
    r.status = res->status;
    r.text = res->body;
    r.content_type = res->get_header_value("Content-Type");
    if (r.content_type.rfind("application/json", 0) == 0) {
      r.body = json::parse(res->body, nullptr, false);
      EXPECT_FALSE(r.body.is_discarded()) << path << ": not JSON: " << res->body.substr(0, 200);
    }
    return r;
  }

  // An error reply: the status, and a JSON body naming the problem.
  void ExpectError(const std::string& path, int status, const std::string& fragment) {
    Reply r = Get(path);
    EXPECT_EQ(r.status, status) << path << ": " << r.text;
    ASSERT_TRUE(r.body.is_object()) << path << ": " << r.text;
    EXPECT_EQ(r.body.value("status", 0), status) << r.text;
    EXPECT_NE(r.body.value("error", "").find(fragment), std::string::npos)
        << path << ": " << r.body.dump();
  }

  // The job's vertex rows in `state`, once there are at least `n` of them.
  json VerticesIn(uint64_t job, const std::string& state, size_t n) {
    json rows;
    WaitFor(
        [&] {
          Reply r = Get(fmt::format("/api/v1/jobs/{}/vertices?state={}&limit=1000", job, state));
          rows = r.body.is_object() ? r.body["vertices"] : json::array();
          return rows.size() >= n;
        },
        milliseconds(60'000));
    return rows;
  }
};

TEST_F(ApiTest, EveryDocumentedFieldOnAClusterRunningJobs) {
  // A finished job with outputs and bytes read.
  std::filesystem::path text = Local("words.txt", "a b c a b a\nz y z\n");
  Put(text, "/in/words", 2);
  CommandResult run = Copse({"run", "wordcount", "--input", "/in/words", "--output", "/out/wc",
                             "--partitions", "1", "--wait"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  uint64_t done = IdOf(run);
  ASSERT_EQ(Status(done)["state"], "succeeded");
  // A running job with more vertices than slots: 12 slots, its root takes one,
  // so 11 run and 3 wait.
  uint64_t job = SubmitHanging(14, 60);
  json running = VerticesIn(job, "running", 11);
  json waiting = VerticesIn(job, "submitted", 3);
  ASSERT_GE(running.size(), 11u);
  ASSERT_GE(waiting.size(), 3u);

  // ---- cluster
  Reply c = Get("/api/v1/cluster");
  ASSERT_EQ(c.status, 200) << c.text;
  ExpectFields(c.body, {"name", "computers", "live", "slots", "busy_slots", "racks", "snapshot_ms"},
               "cluster");
  EXPECT_EQ(c.body["computers"], 6);
  EXPECT_EQ(c.body["live"], 6);
  EXPECT_EQ(c.body["slots"], 12);
  ASSERT_EQ(c.body["racks"].size(), 2u);
  int64_t blocks = 0;
  for (const json& r : c.body["racks"]) {
    ExpectFields(r, {"id", "name", "computers"}, "rack");
    for (const json& m : r["computers"]) {
      ExpectFields(m,
                   {"id", "name", "state", "host", "slots", "busy_slots", "roots", "tasks",
                    "heartbeat_age_ms", "blocks", "bytes_stored"},
                   "computer");
      EXPECT_EQ(m["state"], "live");
      EXPECT_GE(m["heartbeat_age_ms"].get<int64_t>(), 0);
      blocks += m["blocks"].get<int64_t>();
    }
  }
  EXPECT_GT(blocks, 0) << "the input and output files' replicas";

  // ---- jobs
  Reply jobs = Get("/api/v1/jobs");
  ASSERT_EQ(jobs.status, 200);
  ASSERT_EQ(jobs.body["jobs"].size(), 2u);
  for (const json& j : jobs.body["jobs"]) {
    ExpectFields(j,
                 {"id", "name", "state", "incarnation", "submitted_ms", "admitted_ms",
                  "finished_ms", "elapsed_s", "vertices", "bytes_read", "failure"},
                 "job list entry");
  }
  EXPECT_EQ(Get("/api/v1/jobs?state=running").body["jobs"].size(), 1u);
  EXPECT_EQ(Get("/api/v1/jobs?state=succeeded").body["jobs"][0]["id"], done);

  // ---- jobs/{id}: the very document `copse job status --json` prints
  Reply d = Get(fmt::format("/api/v1/jobs/{}", done));
  ASSERT_EQ(d.status, 200);
  ExpectFields(
      d.body,
      {"id",         "name",          "state",           "incarnation", "submitted", "admitted",
       "finished",   "submitted_ms",  "admitted_ms",     "finished_ms", "elapsed_s", "failure",
       "outputs",    "root",          "vertices",        "stages",      "runs",      "duplicates",
       "bytes_read", "bytes_written", "records_written", "restarts"},
      "job document");
  json cli = Status(done);
  for (const char* k : {"id", "name", "state", "submitted_ms", "finished_ms", "outputs", "runs",
                        "bytes_read", "vertices"}) {
    EXPECT_EQ(d.body[k], cli[k]) << k;
  }
  int64_t read = 0;
  for (const char* k : {"local", "rack", "core"}) read += d.body["bytes_read"][k].get<int64_t>();
  EXPECT_GE(read, 18) << "the input's bytes, and what the later stage read";

  // ---- vertices
  Reply v = Get(fmt::format("/api/v1/jobs/{}/vertices", job));
  ASSERT_EQ(v.status, 200);
  ExpectFields(v.body, {"job", "total", "offset", "limit", "sort", "vertices", "snapshot_ms"},
               "vertex page");
  EXPECT_EQ(v.body["total"], 14);
  for (const json& row : v.body["vertices"]) {
    ExpectFields(row,
                 {"stage", "index", "version", "task", "attempt", "state", "computer", "reason",
                  "launched_ms", "ended_ms", "duration_s", "runs", "bytes_read"},
                 "vertex");
  }
  for (const json& row : running) {
    EXPECT_NE(row["computer"], "");
    EXPECT_GT(row["task"].get<uint64_t>(), 0u);
    EXPECT_GE(row["launched_ms"].get<int64_t>(), 0);
  }
  Reply page = Get(fmt::format("/api/v1/jobs/{}/vertices?offset=10&limit=3&sort=-index", job));
  ASSERT_EQ(page.body["vertices"].size(), 3u);
  EXPECT_EQ(page.body["vertices"][0]["index"], 3);  // 13, 12, ..., so the 11th is 3
  Reply staged =
      Get(fmt::format("/api/v1/jobs/{}/vertices?stage=spin&state=running,submitted", job));
  EXPECT_EQ(staged.body["total"], 14);
  Reply finished = Get(fmt::format("/api/v1/jobs/{}/vertices", done));
  int64_t rows_read = 0;
  for (const json& row : finished.body["vertices"]) {
    EXPECT_EQ(row["state"], "completed");
    EXPECT_GE(row["duration_s"].get<double>(), 0);
    for (const char* k : {"local", "rack", "core"})
      rows_read += row["bytes_read"][k].get<int64_t>();
  }
  EXPECT_EQ(rows_read, read) << "each vertex ran once: its rows add up to the job's bytes";

  // ---- dag
  Reply dag = Get(fmt::format("/api/v1/jobs/{}/dag", done));
  ASSERT_EQ(dag.status, 200);
  ExpectFields(dag.body, {"job", "stages", "files", "edges"}, "dag");
  ASSERT_FALSE(dag.body["stages"].empty());
  int vertices = 0;
  for (const json& st : dag.body["stages"]) {
    ExpectFields(st, {"name", "program", "vertices", "states", "inputs", "output"}, "dag stage");
    EXPECT_EQ(st["states"]["completed"], st["vertices"]) << st.dump();
    vertices += st["vertices"].get<int>();
  }
  EXPECT_EQ(dag.body["stages"][0]["inputs"][0]["file"], "/in/words");
  EXPECT_EQ(dag.body["stages"].back()["output"], "/out/wc");
  EXPECT_EQ(dag.body["files"], json::array({"/in/words", "/out/wc"}));
  for (const json& e : dag.body["edges"]) ExpectFields(e, {"from", "to", "connection"}, "dag edge");

  // ---- timeline
  Reply tl = Get(fmt::format("/api/v1/jobs/{}/timeline", done));
  ASSERT_EQ(tl.status, 200);
  ASSERT_EQ(tl.body["runs"].size(), static_cast<size_t>(vertices + 1))
      << "the root and every vertex";
  for (const json& r : tl.body["runs"]) {
    ExpectFields(
        r, {"task", "attempt", "root", "label", "computer", "state", "launched_ms", "ended_ms"},
        "timeline run");
    EXPECT_GE(r["ended_ms"].get<int64_t>(), r["launched_ms"].get<int64_t>());
  }

  // ---- scheduler
  Reply s = Get("/api/v1/scheduler");
  ASSERT_EQ(s.status, 200);
  ExpectFields(
      s.body,
      {"policy", "max_running_jobs", "parameters", "jobs", "queue", "rounds", "snapshot_ms"},
      "scheduler");
  EXPECT_EQ(s.body["policy"], "QFP");
  EXPECT_EQ(s.body["max_running_jobs"], 3);
  ASSERT_EQ(s.body["jobs"].size(), 1u);
  ExpectFields(s.body["jobs"][0],
               {"job", "running", "waiting", "fair_share", "lower_bound", "upper_bound"},
               "scheduler job");
  EXPECT_EQ(s.body["jobs"][0]["running"], 11);
  EXPECT_EQ(s.body["jobs"][0]["fair_share"], 11);
  ASSERT_FALSE(s.body["rounds"].empty());
  for (const json& r : s.body["rounds"]) {
    ExpectFields(r, {"at_ms", "round_ms", "decisions", "nodes", "arcs", "solver", "solve_ms"},
                 "round");
  }

  // ---- flow graph
  Reply fg = Get("/api/v1/scheduler/flowgraph");
  ASSERT_EQ(fg.status, 200) << fg.text;
  ExpectFields(fg.body, {"policy", "graph"}, "flowgraph");
  ExpectFields(fg.body["graph"],
               {"round", "jobs", "roots", "cluster", "racks", "computers", "totals"}, "flow graph");
  ExpectFields(fg.body["graph"]["totals"], {"nodes", "arcs", "cost", "placed"},
               "flow graph totals");
  int64_t into_sink = 0;
  for (const json& m : fg.body["graph"]["computers"])
    into_sink += m["to_sink"]["flow"].get<int64_t>();
  EXPECT_EQ(into_sink, 12) << "11 vertices and the root";
  EXPECT_EQ(fg.body["graph"]["totals"]["placed"], 12);

  // ---- explain: a waiting task and a running one
  Reply w = Get(fmt::format("/api/v1/tasks/{}/explain", waiting[0]["task"].get<uint64_t>()));
  ASSERT_EQ(w.status, 200) << w.text;
  ExpectFields(w.body, {"task", "job", "policy", "state", "summary", "label"}, "explanation");
  EXPECT_EQ(w.body["state"], "waiting");
  EXPECT_EQ(w.body["job"], job);
  EXPECT_FALSE(w.body["summary"].get<std::string>().empty());
  Reply on = Get(fmt::format("/api/v1/tasks/{}/explain", running[0]["task"].get<uint64_t>()));
  ASSERT_EQ(on.status, 200) << on.text;
  EXPECT_EQ(on.body["state"], "running");
  EXPECT_EQ(on.body["computer_name"], running[0]["computer"]);

  // ---- dfs
  Reply f = Get("/api/v1/dfs");
  ASSERT_EQ(f.status, 200);
  ExpectFields(
      f.body,
      {"prefix", "files", "more", "next_after", "file_count", "block_count", "under_replicated"},
      "dfs");
  ASSERT_EQ(f.body["files"].size(), 2u);
  EXPECT_EQ(f.body["files"][0]["path"], "/in/words");
  ExpectFields(f.body["files"][0],
               {"path", "size", "replication", "placement", "visible", "scratch_job", "partitions"},
               "dfs file");
  for (const json& p : f.body["files"][0]["partitions"]) {
    ExpectFields(p, {"committed", "size", "blocks"}, "dfs partition");
    for (const json& b : p["blocks"]) {
      ExpectFields(b, {"id", "size", "replicas", "live_replicas"}, "dfs block");
      EXPECT_EQ(b["live_replicas"], 3);
    }
  }
  EXPECT_EQ(f.body["under_replicated"]["total"], 0);
  Reply first = Get("/api/v1/dfs?limit=1");
  EXPECT_EQ(first.body["more"], true);
  Reply second = Get("/api/v1/dfs?limit=1&after=" + first.body["next_after"].get<std::string>());
  EXPECT_EQ(second.body["files"][0]["path"], "/out/wc");

  ASSERT_EQ(Copse({"job", "kill", std::to_string(job)}).exit_code, 0);
}

TEST_F(ApiTest, BadInputGetsJsonErrorsAndTheMasterKeepsRunning) {
  ExpectError("/api/v1/nothing", 404, "no such API path");
  ExpectError("/api/v1/jobs/99", 404, "no job 99");
  ExpectError("/api/v1/jobs/x1", 400, "not a job id");
  ExpectError("/api/v1/jobs/99999999999999999999999", 400, "not a job id");
  ExpectError("/api/v1/tasks/12345/explain", 404, "12345");
  ExpectError("/api/v1/jobs?state=asleep", 400, "'state'");
  ExpectError("/api/v1/jobs?colour=red", 400, "unknown query parameter 'colour'");
  ExpectError("/api/v1/cluster?x=1", 400, "unknown query parameter 'x'");
  ExpectError("/api/v1/dfs?limit=abc", 400, "'limit'");
  ExpectError("/api/v1/dfs?limit=0", 400, "'limit'");
  ExpectError("/api/v1/dfs?limit=5000", 400, "'limit'");
  ExpectError("/api/v1/dfs?scratch=maybe", 400, "'scratch'");
  ExpectError("/api/v1/dfs?prefix=relative", 400, "'prefix'");
  ExpectError("/api/v1/dfs?limit=1&limit=2", 400, "more than once");
  ExpectError("/static/../../etc/passwd", 404, "");
  ExpectError("/lib/jquery.js", 404, "no such library");
  uint64_t job = SubmitHanging(1, 30);
  VerticesIn(job, "running", 1);
  ExpectError(fmt::format("/api/v1/jobs/{}/vertices?offset=-1", job), 400, "'offset'");
  ExpectError(fmt::format("/api/v1/jobs/{}/vertices?sort=colour", job), 400, "'sort'");
  ExpectError(fmt::format("/api/v1/jobs/{}/vertices?state=dozing", job), 400, "dozing");
  ExpectError(fmt::format("/api/v1/jobs/{}/vertices?stage=nope", job), 400, "no stage 'nope'");

  httplib::Client c("127.0.0.1", config_.http.port);
  // Writes are refused: the API is read-only.
  auto refused = [](const httplib::Result& res) {
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 405) << res->body;
    EXPECT_NE(res->body.find("read-only"), std::string::npos) << res->body;
  };
  refused(c.Post("/api/v1/jobs", "{}", "application/json"));
  refused(c.Delete("/api/v1/jobs/1"));
  refused(c.Put("/api/v1/cluster", "x", "text/plain"));
  // Oversized requests.
  auto longline = c.Get("/api/v1/jobs?state=" + std::string(9000, 'a'));
  ASSERT_TRUE(longline);
  EXPECT_EQ(longline->status, 414);
  auto body = c.Post("/api/v1/jobs", std::string(64 << 10, 'x'), "application/json");
  ASSERT_TRUE(body);
  EXPECT_EQ(body->status, 413);
  httplib::Headers big{{"X-Filler", std::string(9000, 'h')}};
  auto header = c.Get("/api/v1/cluster", big);
  EXPECT_TRUE(!header || header->status >= 400);

  // The master still answers, over HTTP and over its own protocol.
  EXPECT_EQ(Get("/api/v1/cluster").status, 200);
  EXPECT_EQ(Copse({"cluster", "status"}).exit_code, 0);
  EXPECT_EQ(Status(job)["state"], "running");
  ASSERT_EQ(Copse({"job", "kill", std::to_string(job)}).exit_code, 0);
}

TEST_F(ApiTest, TheDashboardAndItsDebianLibrariesAreServed) {
  Reply page = Get("/");
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.content_type.find("text/html"), std::string::npos);
  EXPECT_NE(page.text.find("/static/app.js"), std::string::npos);
  EXPECT_EQ(page.text.find("http://"), std::string::npos) << "nothing from the internet";
  EXPECT_EQ(page.text.find("https://"), std::string::npos) << "nothing from the internet";
  Reply app = Get("/static/app.js");
  EXPECT_EQ(app.status, 200);
  EXPECT_NE(app.content_type.find("javascript"), std::string::npos);
  for (const char* lib : {"/lib/d3.js", "/lib/dagre-d3.js", "/lib/chart.js"}) {
    Reply r = Get(lib);
    EXPECT_EQ(r.status, 200) << lib << ": " << r.text.substr(0, 200);
    EXPECT_GT(r.text.size(), 10'000u) << lib;
  }
}

class ApiTokenTest : public ClusterTest {
 protected:
  void SetUp() override {
    LocalClusterSpec spec;
    token_file_ = dir_.path() / "api.token";
    port_ = FreePorts(1)[0];
    spec.extra_tables =
        fmt::format("[http]\nport = {}\ntoken_file = \"{}\"\n", port_, token_file_.string());
    Start(spec);
  }
  std::filesystem::path token_file_;
  uint16_t port_ = 0;
};

TEST_F(ApiTokenTest, RequestsWithoutTheTokenAreRefused) {
  std::string token = ReadProcFile(token_file_);
  while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
  ASSERT_FALSE(token.empty()) << "copse cluster up creates the token file";
  httplib::Client c("127.0.0.1", port_);
  auto none = c.Get("/api/v1/cluster");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_NE(none->body.find("Authorization"), std::string::npos);
  auto wrong =
      c.Get("/api/v1/cluster", {{"Authorization", "Bearer " + std::string(token.size(), 'x')}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto right = c.Get("/api/v1/cluster", {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200) << right->body;
}

}  // namespace
}  // namespace copse::testing

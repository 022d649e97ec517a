// Prometheus metrics (docs/deploy.md "Metrics") on a real local cluster: the
// master's /metrics on its HTTP port and a worker's on its metrics port,
// scraped after a job ran; every line checked against the text exposition
// format's rules (tests/harness/exposition.h) and the values against what the
// cluster did. The checker itself is tested first, on texts that break each
// rule.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <string>

#include "tests/harness/cluster_fixture.h"
#include "tests/harness/exposition.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

std::string Errors(const Exposition& e) {
  std::string out;
  for (const std::string& s : e.errors) out += s + "\n";
  return out;
}

// ---- the checker --------------------------------------------------------------

TEST(ExpositionTest, AValidTextHasNoErrors) {
  const std::string text =
      "# HELP a_total Things done, with a \\\\ and a \\n in the help.\n"
      "# TYPE a_total counter\n"
      "a_total{kind=\"x\",path=\"q\\\"uote\\\\back\\nline\"} 3\n"
      "a_total{kind=\"y\",} 0 1700000000000\n"
      "# a comment\n"
      "\n"
      "# TYPE b gauge\n"
      "b -1.5e3\n"
      "# TYPE h histogram\n"
      "h_bucket{le=\"0.1\"} 1\n"
      "h_bucket{le=\"1\"} 2\n"
      "h_bucket{le=\"+Inf\"} 2\n"
      "h_sum 0.6\n"
      "h_count 2\n"
      "# TYPE s summary\n"
      "s{quantile=\"0.5\"} 1\n"
      "s_sum 4\n"
      "s_count 3\n"
      "untyped_thing NaN\n";
  Exposition e = ParseExposition(text);
  EXPECT_TRUE(e.errors.empty()) << Errors(e);
  EXPECT_EQ(e.samples.size(), 12u);
  EXPECT_EQ(SampleValue(e, "a_total", {{"kind", "x"}, {"path", "q\"uote\\back\nline"}}), 3);
  EXPECT_EQ(SampleValue(e, "b"), -1500);
  EXPECT_EQ(SampleSum(e, "a_total"), 3);
  EXPECT_TRUE(std::isnan(SampleValue(e, "nothing")));
  EXPECT_EQ(e.types["h"], "histogram");
  EXPECT_EQ(e.helps["a_total"], "Things done, with a \\ and a \n in the help.");
}

// Each text breaks one rule; the checker must say so.
TEST(ExpositionTest, EveryBrokenRuleIsReported) {
  const std::pair<const char*, const char*> cases[] = {
      {"1abc 1\n", "metric name"},
      {"a-b 1\n", "space"},
      {"a{1x=\"v\"} 1\n", "label name"},
      {"a{__x=\"v\"} 1\n", "reserved"},
      {"a{x=v} 1\n", "=\""},
      {"a{x=\"v} 1\n", "not closed"},
      {"a{x=\"\\t\"} 1\n", "escape"},
      {"a{x=\"1\",x=\"2\"} 1\n", "label x twice"},
      {"a{x=\"1\" y=\"2\"} 1\n", "expected ,"},
      {"a one\n", "not a value"},
      {"a 1 12.5\n", "timestamp"},
      {"a 1\na 2\n", "same series twice"},
      {"a 1", "newline"},
      {"# TYPE a countr\na 1\n", "not counter"},
      {"# TYPE a counter\n# TYPE a counter\na 1\n", "second TYPE"},
      {"# HELP a x\n# HELP a y\na 1\n", "second HELP"},
      {"# HELP a bad \\t escape\na 1\n", "HELP text"},
      {"a 1\n# TYPE a gauge\n", "after its samples"},
      {"# TYPE a gauge\na{x=\"1\"} 1\nb 1\na{x=\"2\"} 1\n", "not together"},
      {"# TYPE a counter\na -1\n", "counter a is"},
      {"# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n", "+Inf"},
      {"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n", "no _sum"},
      {"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\n", "no _count"},
      {"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
       "fewer than"},
      {"# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\n"
       "h_sum 1\nh_count 1\n",
       "le 1 after le 2"},
      {"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n", "_count 3"},
      {"# TYPE h histogram\nh_bucket{le=\"x\"} 2\nh_sum 1\nh_count 2\n", "valid le"},
      {"# TYPE s summary\ns{quantile=\"2\"} 1\ns_sum 1\ns_count 1\n", "quantile"},
  };
  for (const auto& [text, fragment] : cases) {
    Exposition e = ParseExposition(text);
    EXPECT_NE(Errors(e).find(fragment), std::string::npos)
        << "text:\n"
        << text << "\nwant an error with '" << fragment << "', got:\n"
        << Errors(e);
  }
}

// ---- on a cluster ---------------------------------------------------------------

class MetricsTest : public ClusterTest {
 protected:
  void SetUp() override {
    LocalClusterSpec spec;
    spec.worker_metrics = true;
    Start(spec);
  }

  // GET http://127.0.0.1:port/metrics: the status and the body.
  std::pair<int, std::string> Scrape(uint16_t port) {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(5, 0);
    c.set_read_timeout(10, 0);
    auto res = c.Get("/metrics");
    if (!res) {
      ADD_FAILURE() << "GET :" << port << "/metrics: " << httplib::to_string(res.error());
      return {0, ""};
    }
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    return {res->status, res->body};
  }

  // Scrapes, checks every line, and checks that every family is described.
  Exposition Checked(uint16_t port) {
    auto [status, text] = Scrape(port);
    EXPECT_EQ(status, 200) << text;
    Exposition e = ParseExposition(text);
    EXPECT_TRUE(e.errors.empty()) << Errors(e) << "----\n" << text;
    for (const auto& [family, type] : e.types) {
      EXPECT_TRUE(e.helps.count(family)) << family << " has no HELP";
      EXPECT_EQ(family.rfind("copse_", 0), 0u) << family;
      if (type == "counter") {
        EXPECT_TRUE(family.ends_with("_total")) << family;
      }
    }
    for (const PromSample& s : e.samples) {
      bool typed = false;
      for (const auto& [family, type] : e.types) typed |= s.name.rfind(family, 0) == 0;
      EXPECT_TRUE(typed) << s.name << " has no TYPE";
    }
    EXPECT_FALSE(e.samples.empty()) << text;
    return e;
  }

  // A job of WordCount over a small input: vertices that read DFS blocks.
  uint64_t RunWordCount() {
    std::string text;
    for (int i = 0; i < 4000; ++i)
      text += "alpha beta gamma delta " + std::to_string(i % 97) + "\n";
    Put(Local("words.txt", text), "/in/words", 3);
    CommandResult r = Copse({"run", "wordcount", "--input", "/in/words", "--output", "/out/wc"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return IdOf(r);
  }
};

TEST_F(MetricsTest, MasterAndWorkerScrapesFollowTheFormatAndTellWhatRan) {
  uint64_t job = RunWordCount();
  ASSERT_NE(job, 0u);
  nlohmann::json st = Wait(job);
  ASSERT_EQ(st["state"], "succeeded") << st.dump();

  // The master.
  Exposition m = Checked(config_.http.port);
  const double computers = static_cast<double>(config_.computers.size());
  EXPECT_EQ(SampleValue(m, "copse_computers", {{"state", "live"}}), computers);
  EXPECT_EQ(SampleValue(m, "copse_computers", {{"state", "dead"}}), 0);
  EXPECT_EQ(SampleValue(m, "copse_slots"), config_.TotalSlots());
  EXPECT_GE(SampleValue(m, "copse_busy_slots"), 0);
  EXPECT_GE(SampleValue(m, "copse_jobs", {{"state", "succeeded"}}), 1);
  EXPECT_EQ(SampleValue(m, "copse_jobs", {{"state", "failed"}}), 0);
  double completed = SampleValue(m, "copse_vertex_runs_total", {{"outcome", "completed"}});
  EXPECT_GE(completed, 3) << "three input partitions, three vertices at least";
  EXPECT_EQ(SampleValue(m, "copse_vertex_runs_total", {{"outcome", "failed"}}), 0);
  EXPECT_GT(SampleValue(m, "copse_scheduler_rounds_total"), 0);
  EXPECT_GE(SampleValue(m, "copse_scheduler_decisions_total"), completed);
  EXPECT_EQ(SampleValue(m, "copse_scheduler_round_duration_seconds_count"),
            SampleValue(m, "copse_scheduler_rounds_total"));
  EXPECT_GT(SampleValue(m, "copse_scheduler_solve_duration_seconds_count"), 0) << "QFP solves";
  EXPECT_GE(SampleValue(m, "copse_dfs_files"), 2) << "the input and the output";
  EXPECT_GE(SampleValue(m, "copse_dfs_blocks"), 3);
  EXPECT_EQ(SampleValue(m, "copse_dfs_under_replicated_blocks"), 0);
  EXPECT_GT(SampleValue(m, "copse_dfs_stored_bytes"), 0);
  // This scrape's own request is counted once its response is written: the
  // next scrape sees it.
  Exposition again = Checked(config_.http.port);
  EXPECT_GE(SampleValue(again, "copse_http_requests_total", {{"code", "200"}}), 1);
  EXPECT_EQ(SampleValue(again, "copse_vertex_runs_total", {{"outcome", "completed"}}), completed);

  // Every worker; their tasks add up to the master's count of runs.
  double runs = 0, launched = 0, served = 0;
  for (const ComputerConfig& c : config_.computers) {
    ASSERT_NE(c.metrics_port, 0) << c.name;
    Exposition w = Checked(c.metrics_port);
    runs += SampleValue(w, "copse_worker_task_runs_total",
                        {{"kind", "vertex"}, {"outcome", "completed"}});
    launched += SampleValue(w, "copse_worker_task_launch_duration_seconds_count");
    served += SampleSum(w, "copse_worker_served_bytes_total");
    EXPECT_EQ(SampleValue(w, "copse_worker_tasks", {{"kind", "vertex"}}), 0) << c.name;
    EXPECT_GT(SampleValue(w, "copse_worker_disk_capacity_bytes"), 0) << c.name;
    EXPECT_GT(SampleValue(w, "copse_worker_disk_free_bytes"), 0) << c.name;
    EXPECT_GE(SampleValue(w, "copse_worker_block_bytes"), 0) << c.name;
    EXPECT_EQ(SampleValue(w, "copse_worker_slots"), c.slots) << c.name;
  }
  EXPECT_EQ(runs, completed);
  EXPECT_GE(launched, completed + 1) << "every vertex and the root were launched";
  EXPECT_GT(served, 0) << "the vertices read their input from the workers' blocks";

  // Anything but /metrics on a worker's port is not there; writes are refused.
  httplib::Client wc("127.0.0.1", config_.computers[0].metrics_port);
  auto other = wc.Get("/api/v1/cluster");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  auto post = wc.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
}

}  // namespace
}  // namespace copse::testing

// The dashboard in a real browser: a local cluster runs a job, headless
// Chromium (Debian `chromium`) opens the job's page with a task's
// explanation, and the test checks that the job, its DAG, its vertex table
// and the explanation were rendered from /api/v1, then saves a screenshot
// (dashboard.png in the test's working directory). Skipped, saying why, where
// Chromium is not installed.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/subprocess.h"
#include "tests/harness/cluster_fixture.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;

std::filesystem::path Chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return {};
}

class DashboardTest : public ClusterTest {
 protected:
  // Runs headless Chromium on `url` with `args`; its stdout.
  std::string Browse(const std::string& url, std::vector<std::string> args) {
    SpawnOptions o;
    o.program = Chromium();
    o.args = {"--headless",
              "--no-sandbox",
              "--disable-gpu",
              "--disable-dev-shm-usage",
              "--no-first-run",
              "--disable-extensions",
              "--user-data-dir=" + (dir_.path() / "chromium").string(),
              "--window-size=1400,1100"};
    o.args.insert(o.args.end(), args.begin(), args.end());
    o.args.push_back(url);
    auto r = RunProcess(std::move(o), std::chrono::seconds(60), 64u << 20);
    if (!r.ok()) {
      ADD_FAILURE() << r.status().ToString();
      return "";
    }
    EXPECT_FALSE(r->timed_out) << r->err;
    return r->out;
  }
};

TEST_F(DashboardTest, ShowsAJobItsDagVerticesAndATasksExplanation) {
  if (Chromium().empty()) {
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs Debian's "
                    "chromium; it could not be installed here)";
  }
  uint64_t job = Submit({{"name", "browse-me"},
                         {"stages",
                          {{{"name", "spin"},
                            {"program", "noop"},
                            {"vertices", 14},
                            {"params", {{"hang_s", 60}}}}}}});
  // A task that waits (12 slots: the root and 11 vertices run).
  uint64_t task = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        CommandResult r = RunCopse("copse", {"--config", config_path_.string(), "job", "status",
                                             std::to_string(job), "--json"});
        if (r.exit_code != 0) return false;
        json st = json::parse(r.out);
        return st["runs"]["launched"].get<int>() >= 11;
      },
      std::chrono::milliseconds(60'000)));
  {
    // The API gives a waiting vertex's task (the dashboard links it), once
    // its snapshot (at most half a second old) shows the job running.
    httplib::Client c("127.0.0.1", config_.http.port);
    json page;
    ASSERT_TRUE(WaitFor(
        [&] {
          auto r = c.Get(fmt::format("/api/v1/jobs/{}/vertices?state=submitted", job));
          if (!r || r->status != 200) return false;
          page = json::parse(r->body);
          return !page["vertices"].empty();
        },
        std::chrono::milliseconds(30'000)))
        << page.dump();
    task = page["vertices"][0]["task"];
  }
  std::string url =
      fmt::format("http://127.0.0.1:{}/#/job/{}/task/{}", config_.http.port, job, task);
  std::string dom = Browse(url, {"--virtual-time-budget=10000", "--dump-dom"});
  ASSERT_FALSE(dom.empty());
  // The job.
  EXPECT_NE(dom.find(fmt::format("Job {}: browse-me", job)), std::string::npos) << dom;
  // Its DAG, drawn by dagre-d3 (one stage node).
  EXPECT_NE(dom.find("data-stages=\"1\""), std::string::npos) << dom;
  EXPECT_NE(dom.find("class=\"node stage\""), std::string::npos) << dom;
  // Its vertex table: rows of the stage with their tasks.
  EXPECT_NE(dom.find("<td>spin</td>"), std::string::npos) << dom;
  EXPECT_NE(dom.find(fmt::format("href=\"#/job/{}/task/{}\"", job, task)), std::string::npos);
  // The task's explanation.
  EXPECT_NE(dom.find("id=\"explain-summary\""), std::string::npos) << dom;
  EXPECT_NE(dom.find(fmt::format("<b>task {}</b>", task)), std::string::npos) << dom;
  // The page refreshed from the API without an error.
  EXPECT_EQ(dom.find("error: "), std::string::npos) << dom;
  EXPECT_NE(dom.find("data-refreshes"), std::string::npos);

  std::filesystem::path shot = std::filesystem::current_path() / "dashboard.png";
  std::filesystem::remove(shot);
  Browse(url, {"--virtual-time-budget=10000", "--screenshot=" + shot.string()});
  ASSERT_TRUE(std::filesystem::exists(shot));
  EXPECT_GT(std::filesystem::file_size(shot), 10'000u);
  std::cerr << "screenshot: " << shot.string() << "\n";
  ASSERT_EQ(
      RunCopse("copse", {"--config", config_path_.string(), "job", "kill", std::to_string(job)})
          .exit_code,
      0);
}

}  // namespace
}  // namespace copse::testing

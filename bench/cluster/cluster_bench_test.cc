// Runs `copse bench cluster --quick` (the 10-instance quick workload on
// cluster-configs/bench-local.toml: a real 12-worker loopback cluster) under a
// flow policy and delay scheduling, and checks what it wrote: every job of
// every run succeeded and is in results.json with the simulator suite's
// fields, the bytes each job read (counted by the DFS client) add up to the
// run's totals and include the inputs' sizes, the simulator ran beside it
// with a cost model calibrated from the K = 1 runs, and the comparison
// names every policy and job. Also: bad arguments exit 2 naming what is
// wrong, before any cluster starts.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/harness/harness.h"

namespace copse::bench {
namespace {

using nlohmann::json;
using testing::CommandResult;
using testing::RunCopse;
using testing::TempDir;

const std::filesystem::path kSource = COPSE_TEST_SOURCE_DIR;
const std::filesystem::path kConfig = kSource / "cluster-configs/bench-local.toml";

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ClusterBenchTest, BadArgumentsAreNamedBeforeAnythingStarts) {
  TempDir dir;
  CommandResult r = RunCopse(
      "copse-bench-cluster",
      {"--config", kConfig.string(), "--policy", "QFP,NOPE", "--out", (dir.path() / "o").string()},
      std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown policy 'NOPE'"), std::string::npos) << r.err;
  r = RunCopse("copse-bench-cluster",
               {"--config", (dir.path() / "missing.toml").string(), "--out", dir.path().string()},
               std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.toml: no such file"), std::string::npos) << r.err;
  std::ofstream(dir.path() / "w.toml")
      << "[[instance]]\nname = \"s\"\napp = \"synthetic\"\npartitions = 2\ntask_seconds = 1\n";
  r = RunCopse("copse-bench-cluster",
               {"--config", kConfig.string(), "--workload", (dir.path() / "w.toml").string(),
                "--out", dir.path().string()},
               std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("instance s: the real-cluster suite runs the sample apps"),
            std::string::npos)
      << r.err;
}

TEST(ClusterBenchTest, QuickSuiteRunsUnderQfpAndHfsWithTheSimulatorBeside) {
  TempDir dir;
  const std::filesystem::path out = dir.path() / "out";
  CommandResult r = RunCopse(
      "copse-bench-cluster",
      {"--config", kConfig.string(), "--policy", "QFP,HFS", "--quick", "--out", out.string()},
      std::chrono::seconds(280));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json real = json::parse(ReadFile(out / "results.json"));
  json sim = json::parse(ReadFile(out / "sim" / "results.json"));
  EXPECT_EQ(real["experiment"], "cluster");
  EXPECT_EQ(real["slots"], 24);
  ASSERT_EQ(real["runs"].size(), 2u);
  ASSERT_EQ(sim["runs"].size(), 2u);
  EXPECT_EQ(real["ideal_s"].size(), 10u);
  for (const auto& [name, t] : real["ideal_s"].items()) EXPECT_GT(t.get<double>(), 0) << name;
  std::set<std::string> names;
  for (size_t p = 0; p < 2; ++p) {
    const json& run = real["runs"][p];
    EXPECT_EQ(run["policy"], p == 0 ? "QFP" : "HFS");
    EXPECT_EQ(sim["runs"][p]["policy"], run["policy"]);
    EXPECT_EQ(run["k"], 4);
    ASSERT_EQ(run["jobs"].size(), 10u);
    int64_t local = 0, rack = 0, core = 0;
    double last = 0;
    for (const json& j : run["jobs"]) {
      names.insert(j["name"]);
      EXPECT_GE(j["start_s"].get<double>(), j["submit_s"].get<double>()) << j["name"];
      EXPECT_GT(j["finish_s"].get<double>(), j["start_s"].get<double>()) << j["name"];
      EXPECT_GE(j["tasks"].get<int>(), j["vertices"].get<int>()) << j["name"];
      EXPECT_GT(j["anp"].get<double>(), 0) << j["name"];
      local += j["local_bytes"].get<int64_t>();
      rack += j["rack_bytes"].get<int64_t>();
      core += j["core_bytes"].get<int64_t>();
      last = std::max(last, j["finish_s"].get<double>());
    }
    EXPECT_EQ(run["dt_local_bytes"], local);
    EXPECT_EQ(run["dt_rack_bytes"], rack);
    EXPECT_EQ(run["dt_core_bytes"], core);
    // Sort6 and Sort12 alone read 18 partitions of ~0.8 MB at scale 0.0002.
    EXPECT_GT(local + rack + core, 14'000'000);
    EXPECT_DOUBLE_EQ(run["makespan_s"].get<double>(), last);
    EXPECT_FALSE(run["utilisation"].empty());
    EXPECT_GT(sim["runs"][p]["makespan_s"].get<double>(), 0);
  }
  EXPECT_EQ(names.size(), 10u);
  json costs = json::parse(ReadFile(out / "costs.json"));
  EXPECT_GT(costs["task_startup_s"].get<double>(), 0);
  EXPECT_TRUE(costs["stages"].contains("sort/sort.sort"));
  json cmp = json::parse(ReadFile(out / "comparison.json"));
  ASSERT_EQ(cmp["policies"].size(), 2u);
  EXPECT_EQ(cmp["policies"][1]["jobs"].size(), 10u);
  EXPECT_EQ(cmp["ideal_s"].size(), 10u);
  std::string md = ReadFile(out / "comparison.md");
  EXPECT_NE(md.find("| HFS |"), std::string::npos) << md;
  EXPECT_NE(md.find("| DatabaseJoin8 |"), std::string::npos) << md;
  EXPECT_TRUE(std::filesystem::exists(out / "results.md"));
  EXPECT_TRUE(std::filesystem::exists(out / "runs" / "ideal-k1.json"));
}

}  // namespace
}  // namespace copse::bench

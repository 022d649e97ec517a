// Runs copse-bench-sim's --quick experiments (reduced cluster and workload)
// and checks their results: every job finishes under every policy, the
// metrics are consistent, QFP moves fewer bytes across the core switch than
// GFP, runs are deterministic, a lone job takes the time worked out by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/harness/harness.h"

namespace copse::bench {
namespace {

using nlohmann::json;
using testing::CommandResult;
using testing::RunCopse;
using testing::TempDir;

const std::filesystem::path kSource = COPSE_TEST_SOURCE_DIR;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

json RunQuick(const std::string& experiment, const std::filesystem::path& out) {
  auto r =
      RunCopse("copse-bench-sim", {"--experiment", experiment, "--quick", "--out", out.string()},
               std::chrono::seconds(100));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(ReadFile(out / "results.json"));
}

double MeanCore(const json& res, const std::string& policy) {
  double s = 0;
  int n = 0;
  for (const json& r : res["runs"]) {
    if (r["policy"] == policy) {
      s += r["dt_core_bytes"].get<double>();
      ++n;
    }
  }
  return s / n;
}

void ExpectAllFinished(const json& res) {
  for (const json& r : res["runs"]) {
    ASSERT_FALSE(r["jobs"].empty());
    double makespan = 0;
    for (const json& j : r["jobs"]) {
      EXPECT_GT(j["finish_s"].get<double>(), j["start_s"].get<double>())
          << r["policy"] << " " << j["name"];
      EXPECT_GE(j["start_s"].get<double>(), j["submit_s"].get<double>());
      EXPECT_GT(j["anp"].get<double>(), 0);
      EXPECT_GT(j["tasks"].get<int>(), 0);
      makespan = std::max(makespan, j["finish_s"].get<double>());
    }
    EXPECT_DOUBLE_EQ(r["makespan_s"].get<double>(), makespan);
    EXPECT_GE(r["slowdown_linf"].get<double>(), r["slowdown_l1"].get<double>());
    EXPECT_GT(r["snp"].get<double>(), 0);
  }
}

TEST(SimSuiteTest, IdealIsDeterministicAndQpIsItsOwnBaseline) {
  TempDir a, b;
  json res = RunQuick("ideal", a.path());
  RunQuick("ideal", b.path());
  EXPECT_EQ(ReadFile(a.path() / "results.json"), ReadFile(b.path() / "results.json"));
  ASSERT_EQ(res["runs"].size(), 3u);
  EXPECT_EQ(res["experiment"], "ideal");
  EXPECT_EQ(res["slots"], 24);
  ExpectAllFinished(res);
  for (const json& r : res["runs"]) {
    if (r["policy"] == "QP") {
      EXPECT_NEAR(r["snp"].get<double>(), 1.0, 1e-9);
    }
  }
  EXPECT_TRUE(std::filesystem::exists(a.path() / "results.md"));
  EXPECT_TRUE(std::filesystem::exists(a.path() / "metrics.png"));
}

TEST(SimSuiteTest, UnconstrainedEveryPolicyFinishesAndQuincyKeepsDataLocal) {
  TempDir d;
  json res = RunQuick("unconstrained", d.path());
  ASSERT_EQ(res["runs"].size(), 11u);
  ExpectAllFinished(res);
  EXPECT_LT(MeanCore(res, "QFP"), MeanCore(res, "GFP"));
  EXPECT_LE(MeanCore(res, "QFPX"), MeanCore(res, "QFP"));
}

TEST(SimSuiteTest, ConstrainedQfpMovesFewerCoreBytesThanGfp) {
  TempDir d;
  json res = RunQuick("constrained", d.path());
  ASSERT_EQ(res["runs"].size(), 3u);
  ExpectAllFinished(res);
  for (const json& r : res["runs"]) {
    for (const json& j : r["jobs"]) EXPECT_NE(j["name"], "PrimeLarge");
  }
  EXPECT_LT(MeanCore(res, "QFP"), MeanCore(res, "GFP"));
}

TEST(SimSuiteTest, CfqBeatsFifoOnTheSyntheticMix) {
  TempDir d;
  json res = RunQuick("cfq", d.path());
  ASSERT_EQ(res["runs"].size(), 5u);
  ExpectAllFinished(res);
  std::map<std::string, double> l1;
  for (const json& r : res["runs"]) {
    l1[r["label"]] = r["slowdown_l1"].get<double>();
    for (const json& j : r["jobs"]) {
      EXPECT_DOUBLE_EQ(j["start_s"].get<double>(), j["submit_s"].get<double>());  // no queue
      EXPECT_EQ(j["core_bytes"], 0);
    }
  }
  ASSERT_EQ(l1.size(), 5u);
  EXPECT_LT(l1["CFQ"], l1["FIFO"]);
  EXPECT_LT(l1["SRPT"], l1["FIFO"]);
  EXPECT_TRUE(std::filesystem::exists(d.path() / "cfq-response-cdf.png"));
}

TEST(SimSuiteTest, ScaleGivesOrderedLatencyPercentilesForEverySolver) {
  TempDir d;
  json res = RunQuick("scale", d.path());
  EXPECT_EQ(res["experiment"], "scale");
  EXPECT_EQ(res["slots"], 3350);
  std::set<std::string> solvers;
  for (const json& r : res["runs"]) {
    std::string s = r["solver"];
    solvers.insert(s);
    EXPECT_EQ(r["policy"], "Q") << s;
    EXPECT_EQ(r["computers"], 250) << s;
    EXPECT_EQ(r["initial_tasks"], 3015) << s;  // 90% of the slots
    EXPECT_GT(r["rounds"].get<int>(), 1) << s;
    EXPECT_LE(r["rounds"].get<int>(), r["max_rounds"].get<int>()) << s;
    EXPECT_GT(r["tasks_placed"].get<int>(), 0) << s;
    EXPECT_EQ(r["violations"], 0) << s;  // every start: a waiting task, a free slot
    EXPECT_LE(r["tasks_placed"].get<int>(),
              r["tasks_submitted"].get<int>() + r["tasks_killed"].get<int>())
        << s;
    double p50 = r["p50_ms"], p90 = r["p90_ms"], p99 = r["p99_ms"], max = r["max_ms"];
    EXPECT_GT(p50, 0) << s;  // each round's wall time is charged
    EXPECT_LE(p50, p90) << s;
    EXPECT_LE(p90, p99) << s;
    EXPECT_LE(p99, max) << s;
    json raw = json::parse(ReadFile(d.path() / "runs" / (s + "-s1.json")));
    EXPECT_EQ(raw["latency_ms"].size(), r["tasks_placed"].get<size_t>()) << s;
  }
  EXPECT_EQ(solvers, (std::set<std::string>{"cost_scaling", "relaxation", "incremental_cs", "race",
                                            "incremental", "incremental_leaf"}));
  EXPECT_TRUE(std::filesystem::exists(d.path() / "results.md"));
}

TEST(SimSuiteTest, ScaleUnderQpLetsRunningTasksMove) {
  // QP: running tasks keep every arc (Firmament's "eligible for
  // rescheduling"), so young ones on computers without their inputs move.
  TempDir d;
  auto r = RunCopse("copse-bench-sim",
                    {"--experiment", "scale", "--quick", "--policy", "QP", "--solver", "relaxation",
                     "--solver", "incremental", "--out", d.path().string()},
                    std::chrono::seconds(100));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = json::parse(ReadFile(d.path() / "results.json"));
  EXPECT_EQ(res["command"],
            "copse bench sim --experiment scale --out DIR --seed 1 --quick --policy QP --solver "
            "relaxation --solver incremental");
  ASSERT_EQ(res["runs"].size(), 2u);
  for (const json& run : res["runs"]) {
    EXPECT_EQ(run["policy"], "QP");
    EXPECT_EQ(run["violations"], 0) << run["solver"];
    EXPECT_GT(run["tasks_killed"].get<int>(), 0) << run["solver"];
    EXPECT_GT(run["tasks_placed"].get<int>(), 0) << run["solver"];
    EXPECT_LE(run["p50_ms"].get<double>(), run["p99_ms"].get<double>());
    EXPECT_LE(run["p99_ms"].get<double>(), run["max_ms"].get<double>());
  }
  r = RunCopse("copse-bench-sim",
               {"--experiment", "scale", "--quick", "--policy", "GFP", "--out", d.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("must be a Quincy policy"), std::string::npos) << r.err;
  r = RunCopse("copse-bench-sim", {"--experiment", "scale", "--quick", "--solver", "nope", "--out",
                                   d.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown --solver 'nope'"), std::string::npos) << r.err;
  r = RunCopse("copse-bench-sim",
               {"--experiment", "ideal", "--quick", "--policy", "QP", "--out", d.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("apply to scale only"), std::string::npos) << r.err;
}

TEST(SimSuiteTest, ScaleWithABurstReportsIt) {
  TempDir d;
  auto r = RunCopse(
      "copse-bench-sim",
      {"--experiment", "scale", "--quick", "--policy", "QFP", "--solver", "incremental_leaf",
       "--burst", "150", "--burst-at", "0", "--out", d.path().string()},
      std::chrono::seconds(100));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = json::parse(ReadFile(d.path() / "results.json"));
  EXPECT_EQ(res["command"],
            "copse bench sim --experiment scale --out DIR --seed 1 --quick --burst 150 --burst-at "
            "0.0 --policy QFP --solver incremental_leaf");
  ASSERT_EQ(res["runs"].size(), 1u);
  const json& run = res["runs"][0];
  EXPECT_EQ(run["violations"], 0);
  EXPECT_EQ(run["burst_tasks"], 150);
  EXPECT_EQ(run["burst_placed"], 150);  // 3,015 of 3,350 slots busy: QFP forces it all on
  EXPECT_GT(run["burst_round_ms"].get<double>(), 0);
  EXPECT_GE(run["burst_all_placed_s"].get<double>(), 0);
  EXPECT_NE(ReadFile(d.path() / "results.md").find("Burst (incremental_leaf, seed 1): 150 tasks"),
            std::string::npos);
  r = RunCopse("copse-bench-sim",
               {"--experiment", "ideal", "--quick", "--burst", "10", "--out", d.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--burst applies to scale only"), std::string::npos) << r.err;
}

TEST(SimSuiteTest, LoneJobTakesTheHandComputedTime) {
  // PrimeSmall with 2 partitions: root start-up 6 s, then each count vertex
  // in parallel: 1 s start-up + 6 s compute, after reading its 280 kB
  // partition (the data cost rounds to 0, so Quincy may read it remotely: at
  // most 280 kB at 1 Gbit/s = 2.24 ms); then the total vertex: 1 s start-up,
  // reading the two 16-byte counts (at most 256 ns at 1 Gbit/s).
  TempDir d;
  std::ofstream(d.path() / "w.toml")
      << "[[instance]]\nname = \"P\"\napp = \"prime_small\"\npartitions = 2\n";
  auto r = RunCopse("copse-bench-sim",
                    {"--run-one", "--config", (kSource / "cluster-configs/sim-quick.toml").string(),
                     "--workload", (d.path() / "w.toml").string(), "--policy", "QP", "--k", "1",
                     "--out", (d.path() / "run.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json run = json::parse(ReadFile(d.path() / "run.json"));
  const json& job = run["jobs"][0];
  double t = job["finish_s"].get<double>() - job["start_s"].get<double>();
  EXPECT_GE(t, 14.0);
  EXPECT_LE(t, 14.0 + (280000 + 32) * 8 / 1e9 + 1e-6);
  EXPECT_EQ(job["tasks"], 3);
  EXPECT_EQ(job["local_bytes"].get<int64_t>() + job["rack_bytes"].get<int64_t>() +
                job["core_bytes"].get<int64_t>(),
            2 * 40000 * 7 + 2 * 16);
}

// Two runs of the paper's workload where, with the leaf solver and the
// running cost before kRunningTieBreakMilli, rounds at one instant rotated
// tasks of a job without end (kill one, start an identical one; the loop
// gave up after 1,000 rounds): QP with K = 1, seed 2 (two tasks equally good
// to run, job 26), and the constrained cluster under QFPX, seed 3 (three
// tasks of job 17 between two computers, a running task on a computer
// outside its preferred lists costing more than an identical waiting one
// reaching it through X). Each must settle every instant and finish.
void ExpectPaperRunFinishes(const std::string& config, const std::string& policy,
                            const std::string& k, const std::string& seed,
                            const std::vector<std::string>& extra, size_t jobs) {
  TempDir d;
  std::vector<std::string> args = {"--run-one",
                                   "--config",
                                   (kSource / "cluster-configs" / config).string(),
                                   "--workload",
                                   (kSource / "bench/workloads/quincy30.toml").string(),
                                   "--policy",
                                   policy,
                                   "--k",
                                   k,
                                   "--seed",
                                   seed,
                                   "--out",
                                   (d.path() / "run.json").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = RunCopse("copse-bench-sim", args, std::chrono::seconds(280));
  ASSERT_EQ(r.exit_code, 0) << config << " " << policy << ": " << r.err;
  json run = json::parse(ReadFile(d.path() / "run.json"));
  EXPECT_EQ(run["jobs"].size(), jobs);
}

TEST(SimSuiteTest, APaperQpRunWhoseTasksTieSettlesEveryInstant) {
  ExpectPaperRunFinishes("paper.toml", "QP", "1", "2", {"--profiles", "none"}, 30);
}

TEST(SimSuiteTest, AConstrainedQfpxRunWhoseTasksTieSettlesEveryInstant) {
  ExpectPaperRunFinishes("paper-constrained.toml", "QFPX", "10", "3",
                         {"--profiles", "accurate", "--drop", "PrimeLarge"}, 29);
}

// Gather reads (WordCount's sum vertex pulls every count) are counted in the
// many_to_one_* fields, pointwise reads are not.
TEST(SimSuiteTest, GatherReadsAreCountedAsManyToOne) {
  TempDir d;
  std::ofstream(d.path() / "w.toml")
      << "[[instance]]\nname = \"P\"\napp = \"prime_small\"\npartitions = 2\n"
      << "[[instance]]\nname = \"W\"\napp = \"wordcount\"\npartitions = 4\n";
  auto r = RunCopse("copse-bench-sim",
                    {"--run-one", "--config", (kSource / "cluster-configs/sim-quick.toml").string(),
                     "--workload", (d.path() / "w.toml").string(), "--policy", "Q", "--k", "1",
                     "--out", (d.path() / "run.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json run = json::parse(ReadFile(d.path() / "run.json"));
  ASSERT_EQ(run["jobs"].size(), 2u);
  const json& p = run["jobs"][0];
  // Prime reads its partitions pointwise; only its total vertex gathers
  // the two 16-byte counts.
  EXPECT_EQ(p["many_to_one_bytes"], 2 * 16);
  EXPECT_LE(p["many_to_one_core_bytes"].get<int64_t>(), 2 * 16);
  EXPECT_LE(p["many_to_one_floor_core_bytes"].get<int64_t>(),
            p["many_to_one_core_bytes"].get<int64_t>());
  const json& w = run["jobs"][1];
  EXPECT_EQ(w["preempted"], 0);
  // 4 counts of 2% of 50 MB each, gathered by the sum vertex.
  EXPECT_EQ(w["many_to_one_bytes"], 4 * 1'000'000);
  EXPECT_LE(w["many_to_one_core_bytes"].get<int64_t>(), w["core_bytes"].get<int64_t>());
  EXPECT_LE(w["many_to_one_floor_core_bytes"].get<int64_t>(),
            w["many_to_one_core_bytes"].get<int64_t>());
  EXPECT_EQ(w["local_bytes"].get<int64_t>() + w["rack_bytes"].get<int64_t>() +
                w["core_bytes"].get<int64_t>(),
            4 * 50'000'000 + 4 * 1'000'000);
}

TEST(SimSuiteTest, BadInputIsRejected) {
  TempDir d;
  auto r = RunCopse("copse-bench-sim", {"--experiment", "nope", "--out", d.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown experiment"), std::string::npos);
  std::ofstream(d.path() / "w.toml") << "[[instance]]\nname = \"P\"\napp = \"x\"\npartitions = 2\n";
  r = RunCopse("copse-bench-sim",
               {"--run-one", "--config", (kSource / "cluster-configs/sim-quick.toml").string(),
                "--workload", (d.path() / "w.toml").string(), "--policy", "QP", "--out",
                (d.path() / "run.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown app"), std::string::npos);
  r = RunCopse("copse-bench-sim",
               {"--experiment", "cfq", "--quick", "--workload",
                (d.path() / "missing.toml").string(), "--out", d.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.toml: no such file"), std::string::npos) << r.err;
  r = RunCopse("copse-bench-sim", {"--experiment", "scale", "--quick", "--workload",
                                   (d.path() / "w.toml").string(), "--out", d.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("does not apply to scale"), std::string::npos) << r.err;
}

// bench/sim/report.py: REPORT.md generated from the experiments' results.
CommandResult RunReport(const std::vector<std::string>& args) {
  std::vector<std::string> a{(kSource / "bench/sim/report.py").string()};
  a.insert(a.end(), args.begin(), args.end());
  return RunCopse("/usr/bin/python3", a, std::chrono::seconds(60));
}

TEST(SimReportTest, QuickResultsGiveAFilledReport) {
  TempDir d;
  for (const char* e : {"ideal", "unconstrained", "constrained", "cfq", "scale"}) {
    RunQuick(e, d.path() / e);
  }
  auto r = RunReport({"--results", d.path().string(), "--out", (d.path() / "R.md").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string md = ReadFile(d.path() / "R.md");
  for (const char* h : {"## Table 2", "## Table 3", "## Unconstrained network", "### Why the fair",
                        "## Constrained network", "## CFQ", "## Placement latency"}) {
    EXPECT_NE(md.find(h), std::string::npos) << h;
  }
  // Every policy and solver has its row, and each results directory its command.
  for (const char* row :
       {"| G | ", "| QP | ", "| GFPH | ", "| QFPX | ", "| HFS | ", "| CFQ-naive | ", "| FIFO | ",
        "| relaxation | ", "| incremental_cs | ", "| PrimeLarge | ",
        "`copse bench sim --experiment constrained --out DIR --seed 1 --quick`"}) {
    EXPECT_NE(md.find(row), std::string::npos) << row;
  }
  // Nothing left unfilled: no empty table cell, no format directive, no NaN.
  std::istringstream lines(md);
  std::string line;
  int table_rows = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(line.find("||"), std::string::npos) << line;
    EXPECT_EQ(line.find("| |"), std::string::npos) << line;
    for (const char* bad : {"%s", "%d", " nan", "NaN", " inf", "None", "TODO", "{", "}"}) {
      EXPECT_EQ(line.find(bad), std::string::npos) << bad << " in: " << line;
    }
    if (line.starts_with("| ") && line.find("---") == std::string::npos) ++table_rows;
  }
  // Header 5 + Table 2 4 + Table 3 + 12 + 8 + 4 + 6 + scale 6.
  EXPECT_GT(table_rows, 45);
  EXPECT_NE(md.find("come from `--quick` runs"), std::string::npos);
  // A scale run that stopped at its round cap before the time horizon covers
  // less of the run than the others: the report says so exactly when one did.
  json scale = json::parse(ReadFile(d.path() / "scale" / "results.json"));
  bool capped = false;
  for (const json& run : scale["runs"]) {
    capped |= run["rounds"].get<int>() >= run["max_rounds"].get<int>() &&
              run["sim_time_s"].get<double>() < run["max_time_s"].get<double>();
  }
  EXPECT_EQ(md.find("reached their round cap before") != std::string::npos, capped);

  // A missing experiment is an error that names it, not a half-filled report.
  std::filesystem::remove_all(d.path() / "cfq");
  r = RunReport({"--results", d.path().string(), "--out", (d.path() / "R2.md").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--experiment cfq"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d.path() / "R2.md"));
}

TEST(SimReportTest, CommittedReportIsGeneratedFromCommittedResults) {
  auto r = RunReport({"--results", (kSource / "bench/results").string(), "--out",
                      (kSource / "bench/REPORT.md").string(), "--check"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace copse::bench

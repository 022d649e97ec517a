// Runs the real copse-flow executable (directly and as `copse flow ...`):
// JSON output, exit codes 0/2/3, line numbers in errors, and replay of
// evolving snapshots (its answers against LEMON's).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "scheduler/flow/dimacs.h"
#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/test_graphs.h"
#include "tests/harness/harness.h"

namespace {

using copse::testing::CommandResult;
using copse::testing::RunCopse;
using copse::testing::TempDir;

class CopseFlowCliTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_.path() / name;
    std::ofstream(p) << text;
    return p.string();
  }

  // Runs `copse-flow ARGS...`.
  static CommandResult Flow(std::vector<std::string> args) { return RunCopse("copse-flow", args); }

  // The JSON lines of `r`'s output.
  static std::vector<nlohmann::json> Lines(const CommandResult& r) {
    std::istringstream lines(r.out);
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  TempDir dir_;
};

const char* kSmall =
    "c two routes\n"
    "p min 4 4\n"
    "n 1 3\n"
    "n 4 -3\n"
    "a 1 2 0 2 1\n"
    "a 2 4 0 2 1\n"
    "a 1 3 0 3 4\n"
    "a 3 4 0 3 1\n";

TEST_F(CopseFlowCliTest, SolvePrintsJsonWithCostAndTime) {
  std::string f = Write("small.min", kSmall);
  for (const char* alg :
       {"race", "cost_scaling", "relaxation", "incremental_local", "incremental"}) {
    CommandResult r = Flow({"solve", "--check", "--algorithm", alg, f});
    ASSERT_EQ(r.exit_code, 0) << alg << ": " << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["cost"], 2 * 2 + 1 * 5) << alg;
    EXPECT_EQ(j["algorithm"], alg);
    EXPECT_TRUE(j["solve_ms"].is_number());
    EXPECT_EQ(j["check"], "ok");
  }
}

TEST_F(CopseFlowCliTest, DefaultAlgorithmThroughTheCopseClient) {
  std::string f = Write("small.min", kSmall);
  CommandResult r = RunCopse("copse", {"flow", "solve", f});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cost"], 9);
  EXPECT_EQ(j["algorithm"], "race");
}

TEST_F(CopseFlowCliTest, InfeasibleExitsThree) {
  std::string f = Write("inf.min", "p min 2 1\nn 1 5\nn 2 -5\na 1 2 0 4 1\n");
  CommandResult r = Flow({"solve", f});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["status"], "infeasible");
  EXPECT_EQ(RunCopse("copse", {"flow", "solve", f}).exit_code, 3);
}

TEST_F(CopseFlowCliTest, MalformedInputAndBadUsageExitTwo) {
  std::string f = Write("bad.min", "p min 2 1\nn 1 1\nn 2 -1\na 1 2 zero 4 1\n");
  CommandResult r = Flow({"solve", f});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.min:4:"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  std::string negative = Write("neg.min", "p min 2 1\nn 1 1\nn 2 -1\na 1 2 0 -4 1\n");
  r = Flow({"solve", negative});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("neg.min:4:"), std::string::npos) << r.err;
  EXPECT_EQ(Flow({"solve", "--algorithm", "nonsense", f}).exit_code, 2);
  // The experiment variants are the benchmark's, not copse flow's.
  r = Flow({"solve", "--algorithm", "race_always", f});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("copse bench flow"), std::string::npos) << r.err;
  EXPECT_EQ(Flow({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(Flow({"solve"}).exit_code, 2);
  EXPECT_EQ(Flow({"solve", (dir_.path() / "missing.min").string()}).exit_code, 2);
  std::string s0 = Write("s0.min", kSmall);
  r = Flow({"replay", s0, f});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.min:4:"), std::string::npos) << r.err;
}

TEST_F(CopseFlowCliTest, ReplayPrintsOneLinePerStep) {
  std::string s0 = Write("s0.min", kSmall);
  // The cheap route gets more capacity, then node 3 disappears, then the
  // supply outgrows the capacity.
  std::string s1 = Write("s1.min",
                         "p min 4 4\nn 1 3\nn 4 -3\na 1 2 0 3 1\na 2 4 0 3 1\n"
                         "a 1 3 0 3 4\na 3 4 0 3 1\n");
  std::string s2 = Write("s2.min", "p min 4 2\nn 1 3\nn 4 -3\na 1 2 0 3 1\na 2 4 0 3 2\n");
  std::string s3 = Write("s3.min", "p min 4 2\nn 1 4\nn 4 -4\na 1 2 0 3 1\na 2 4 0 3 2\n");
  for (const char* alg : {"race", "incremental", "incremental_cs", "cost_scaling"}) {
    CommandResult r = Flow({"replay", "--check", "--algorithm", alg, s0, s1, s2, s3});
    EXPECT_EQ(r.exit_code, 3) << alg << r.err;  // the last snapshot is infeasible
    std::vector<nlohmann::json> steps = Lines(r);
    ASSERT_EQ(steps.size(), 4u) << alg << r.out;
    EXPECT_EQ(steps[0]["cost"], 9);
    EXPECT_EQ(steps[1]["cost"], 6);
    EXPECT_EQ(steps[2]["cost"], 9);
    EXPECT_EQ(steps[3]["status"], "infeasible");
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(steps[i]["step"], i);
      EXPECT_EQ(steps[i]["check"], "ok");
      for (const char* field : {"solve_ms", "parse_ms", "apply_ms"}) {
        ASSERT_TRUE(steps[i][field].is_number()) << alg << " " << field << " " << steps[i];
        EXPECT_GE(steps[i][field].get<double>(), 0) << alg << " " << field;
      }
      EXPECT_GT(steps[i]["changes"].get<int>(), 0);
    }
  }
}

// Snapshots written along random change batches (as `copse bench flow
// --dimacs-dir` writes them) replay to LEMON's cost at every step, and a
// snapshot repeated is no change at all.
TEST_F(CopseFlowCliTest, ReplayOfEvolvingSnapshotsMatchesLemon) {
  namespace flow = copse::flow;
  std::mt19937_64 rng(11);
  flow::FlowGraph g = flow::testing::RandomGraph(flow::testing::Shape::kSparse, 300, 5);
  std::vector<std::string> files;
  std::vector<int64_t> lemon_cost;
  for (int step = 0; step < 6; ++step) {
    if (step > 0) flow::testing::RandomChanges(g, 30, rng, true);
    g.CommitChanges();
    std::ostringstream text;
    flow::WriteDimacs(g, text);
    files.push_back(Write("evolving-" + std::to_string(step) + ".min", text.str()));
    auto oracle = flow::lemon_ref::Solve(g, flow::lemon_ref::Algorithm::kNetworkSimplex);
    ASSERT_TRUE(oracle.feasible);
    lemon_cost.push_back(oracle.cost);
  }
  files.push_back(files.back());
  lemon_cost.push_back(lemon_cost.back());
  for (const char* alg : {"race", "incremental"}) {
    std::vector<std::string> args = {"replay", "--check", "--algorithm", alg};
    args.insert(args.end(), files.begin(), files.end());
    CommandResult r = Flow(args);
    ASSERT_EQ(r.exit_code, 0) << alg << ": " << r.err;
    std::vector<nlohmann::json> steps = Lines(r);
    ASSERT_EQ(steps.size(), files.size()) << alg << r.out;
    for (size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ(steps[i]["cost"], lemon_cost[i]) << alg << " step " << i;
      EXPECT_EQ(steps[i]["check"], "ok") << alg << " step " << i;
    }
    EXPECT_EQ(steps.back()["changes"], 0) << alg;
  }
}

}  // namespace

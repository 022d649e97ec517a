// ClusterTest: a GoogleTest fixture that brings up a real local cluster for
// each test — a master and six workers (two racks of three computers, two
// slots each) on loopback, in the test's temporary directory — and drives
// it through `copse`, as a user would. It brings the cluster down after the
// test and prints the end of every daemon's log when the test failed.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/process.h"
#include "common/subprocess.h"
#include "tests/harness/harness.h"

namespace copse::testing {

// What coreutils make of a file: `word<TAB>count`, count descending, then
// word ascending, in byte order.
inline std::string CoreutilsWordCount(const std::filesystem::path& file) {
  SpawnOptions o;
  o.program = "/bin/sh";
  o.args = {"-c",
            "LC_ALL=C tr -s ' \\t\\n\\v\\f\\r' '\\n\\n\\n\\n\\n\\n' < \"$0\" | LC_ALL=C grep -v "
            "'^$' | LC_ALL=C sort | LC_ALL=C uniq -c | LC_ALL=C awk '{print $2 \"\\t\" $1}' | "
            "LC_ALL=C sort -t \"$(printf '\\t')\" -k2,2nr -k1,1",
            file.string()};
  auto r = RunProcess(o, std::chrono::seconds(60));
  if (!r.ok() || !r->status.ok()) return "(coreutils failed)";
  return r->out;
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(LocalClusterSpec()); }

  void Start(LocalClusterSpec spec, const std::string& policy = "QFP",
             const std::string& worker_keys = "") {
    spec.slots = 2;
    spec.max_running_jobs = 3;
    spec.heartbeat_interval_ms = 100;
    spec.worker_timeout_ms = 1000;
    spec.extra_cluster_keys += "block_size_mb = 1\n";
    spec.extra_tables += fmt::format("[scheduler]\npolicy = \"{}\"\n", policy);
    spec.extra_tables += "[worker]\nkill_grace_ms = 500\n" + worker_keys;
    CommandResult r = UpLocalCluster(dir_.path(), spec, &config_path_);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    auto c = LoadClusterConfig(config_path_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    config_ = *c;
  }

  void TearDown() override {
    if (HasFailure()) DumpLogs();
    RunCopse("copse", {"--config", config_path_.string(), "cluster", "down"});
    ReapChildren();
  }

  // On a failure, the end of every daemon's log, for whoever reads CI's output.
  void DumpLogs() {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_.path() / "data")) {
      std::string name = e.path().filename();
      std::string text;
      if (name == "task.log") {
        // A root's log (it names itself on each line) says why a job ended.
        text = ReadProcFile(e.path());
        if (text.find(" [root] ") == std::string::npos) continue;
        if (text.size() > 3000) text = text.substr(text.size() - 3000);
        std::cerr << "==== " << e.path().string() << " ====\n" << text << "\n";
        continue;
      }
      if (name != "master.log" && name != "worker.log" && name != "master.stderr" &&
          name != "worker.stderr") {
        continue;
      }
      text = ReadProcFile(e.path());
      // A crash report is at the start of a daemon's stderr; the log's end
      // tells what happened last.
      bool stderr_file = name.find("stderr") != std::string::npos;
      size_t from = !stderr_file && text.size() > 6000 ? text.size() - 6000 : 0;
      std::cerr << "==== " << e.path().string() << " ====\n" << text.substr(from, 8000) << "\n";
    }
  }

  CommandResult Copse(std::vector<std::string> args,
                      std::chrono::seconds deadline = std::chrono::seconds(120)) {
    args.insert(args.begin(), {"--config", config_path_.string()});
    return RunCopse("copse", args, deadline);
  }

  std::filesystem::path Local(const std::string& name, const std::string& content) {
    std::filesystem::path p = dir_.path() / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

  void Put(const std::filesystem::path& local, const std::string& path, int partitions) {
    CommandResult r = Copse({"fs", "put", local.string(), path, "--partitions",
                             std::to_string(partitions), "--placement", "random"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::string Cat(const std::string& path) {
    CommandResult r = Copse({"fs", "cat", path});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  // The job id a submission printed on its first line.
  static uint64_t IdOf(const CommandResult& r) {
    std::istringstream in(r.out);
    std::string first;
    std::getline(in, first);
    return first.empty() ? 0 : std::stoull(first);
  }

  uint64_t Submit(const nlohmann::json& spec) {
    std::filesystem::path p = Local("spec-" + std::to_string(++specs_) + ".json", spec.dump());
    CommandResult r = Copse({"job", "submit", p.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return IdOf(r);
  }

  // A job of `n` noop vertices that each run for `hang_s` seconds.
  uint64_t SubmitHanging(int n, int hang_s) {
    return Submit({{"name", "hang"},
                   {"stages",
                    {{{"name", "spin"},
                      {"program", "noop"},
                      {"vertices", n},
                      {"params", {{"hang_s", hang_s}}}}}}});
  }

  nlohmann::json Status(uint64_t job) {
    CommandResult r = Copse({"job", "status", std::to_string(job), "--json"});
    if (r.exit_code != 0) return nullptr;
    return nlohmann::json::parse(r.out);
  }

  // Waits for the job to end; its last status.
  nlohmann::json Wait(uint64_t job, std::chrono::seconds bound = std::chrono::seconds(150)) {
    CommandResult r = Copse({"job", "wait", std::to_string(job)}, bound);
    nlohmann::json st = Status(job);
    EXPECT_NE(r.exit_code, -1) << "job " << job << " did not end in time: " << st.dump();
    return st;
  }

  // The job's history: every run with its computer and how it ended.
  nlohmann::json History(uint64_t job) {
    CommandResult r = Copse({"job", "history", std::to_string(job), "--json"});
    if (r.exit_code != 0) return nullptr;
    return nlohmann::json::parse(r.out)["runs"];
  }

  nlohmann::json PidFile() {
    std::ifstream in(dir_.path() / "data" / "cluster.pids.json");
    return nlohmann::json::parse(in);
  }
  int WorkerPid(const std::string& computer) {
    const nlohmann::json file = PidFile();
    for (const nlohmann::json& p : file["processes"]) {
      if (p["role"] == "worker" && p["computer"] == computer) return p["pid"];
    }
    return 0;
  }
  int MasterPid() {
    const nlohmann::json file = PidFile();
    for (const nlohmann::json& p : file["processes"]) {
      if (p["role"] == "master") return p["pid"];
    }
    return 0;
  }

  // Processes whose command line names `fragment` under this test's data.
  std::vector<int> ProcessesWith(const std::string& fragment) {
    std::vector<int> out;
    const std::string want = (dir_.path() / "data").string();
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      std::string name = e.path().filename();
      if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
      std::string cmd = ReadProcFile(e.path() / "cmdline");
      for (char& c : cmd) {
        if (c == '\0') c = ' ';
      }
      int pid = std::stoi(name);
      if (cmd.find(want) != std::string::npos && cmd.find(fragment) != std::string::npos &&
          ProcessAlive(pid)) {
        out.push_back(pid);
      }
    }
    return out;
  }
  // The vertex and root processes of `job`.
  std::vector<int> JobProcesses(uint64_t job) {
    return ProcessesWith("/tasks/" + std::to_string(job) + "/");
  }

  TempDir dir_;
  std::filesystem::path config_path_;
  ClusterConfig config_;
  int specs_ = 0;
};

}  // namespace copse::testing

// The worker's task manager with real child processes: programs are small
// shell scripts in a temporary apps directory, found by a fake program
// source that says which contract each was built for. Each test waits for
// the manager's reports on its own event loop, with a bound.
#include "worker/task_manager.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/process.h"
#include "common/program_name.h"
#include "copse/vertex.h"

namespace copse::worker {
namespace {

using namespace std::chrono_literals;

class Recorder final : public TaskReporter {
 public:
  void TaskStarted(uint64_t task, uint32_t attempt, int pid) override {
    started.push_back({task, attempt});
    pids.push_back(pid);
  }
  void TaskExited(const TaskExitReport& exit) override { exits.push_back(exit); }
  std::vector<std::pair<uint64_t, uint32_t>> started;
  std::vector<int> pids;
  std::vector<TaskExitReport> exits;
};

// Finds programs in the apps directory; each "links the runtime" (today's
// contract) unless `contracts` says otherwise. With `hold`, answers wait
// until Answer().
class FakePrograms final : public ProgramSource {
 public:
  explicit FakePrograms(std::filesystem::path apps) : apps_(std::move(apps)) {}
  void Resolve(const std::string& name, const std::vector<ProgramRef>& pinned,
               Done done) override {
    pinned_seen = pinned;
    if (hold) {
      held.push_back([this, name, done] { done(Find(name)); });
      return;
    }
    done(Find(name));
  }
  void Release(const std::string& lease) override { released.push_back(lease); }
  void Answer() {
    auto h = std::move(held);
    held.clear();
    for (auto& f : h) f();
  }

  std::map<std::string, int> contracts;
  bool hold = false;
  std::vector<std::function<void()>> held;
  std::vector<std::string> released;
  std::vector<ProgramRef> pinned_seen;

 private:
  Result<ResolvedProgram> Find(const std::string& name) {
    if (!ValidProgramName(name)) return InvalidArgument("'" + name + "' is not a program name");
    std::filesystem::path p = apps_ / name;
    if (!std::filesystem::exists(p)) return NotFound("no program '" + name + "' (fake)");
    auto it = contracts.find(name);
    return ResolvedProgram{p, it == contracts.end() ? kVertexContract : it->second, "lease-" + name,
                           false};
  }
  std::filesystem::path apps_;
};

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TaskManagerTest : public ::testing::Test {
 protected:
  TaskManagerTest() {
    char tmpl[] = "/tmp/copse-tasks-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::filesystem::create_directories(dir_ / "apps");
    std::filesystem::create_directories(dir_ / "bin");
    options_.computer = "c00";
    options_.config_path = "/etc/copse.toml";
    options_.data_dir = dir_ / "data";
    options_.apps_dir = dir_ / "apps";
    options_.bin_dir = dir_ / "bin";
    options_.secret = "s3cret";
    options_.limits.poll = std::chrono::milliseconds(20);
    options_.limits.kill_grace = std::chrono::milliseconds(300);
    programs_ = FakePrograms(dir_ / "apps");
  }
  ~TaskManagerTest() override {
    manager_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Program(const std::string& name, const std::string& script) {
    std::filesystem::path p = dir_ / "apps" / name;
    std::ofstream(p) << "#!/bin/sh\n" << script << "\n";
    ::chmod(p.c_str(), 0755);
  }

  TaskManager& Manager() {
    if (!manager_) manager_ = std::make_unique<TaskManager>(io_, options_, clock_, rec_, programs_);
    return *manager_;
  }

  LaunchRequest Launch(uint64_t task, const std::string& program, std::string descriptor = "{}") {
    LaunchRequest r;
    r.task = task;
    r.attempt = 1;
    r.job = 7;
    r.incarnation = 2;
    r.program = program;
    r.descriptor = std::move(descriptor);
    r.label = program + "[0] v1";
    return r;
  }

  // Runs the loop until `n` exits were reported (at most 20 s).
  void AwaitExits(size_t n) {
    auto end = std::chrono::steady_clock::now() + 20s;
    while (rec_.exits.size() < n && std::chrono::steady_clock::now() < end) {
      io_.run_one_for(100ms);
    }
    ASSERT_EQ(rec_.exits.size(), n);
  }

  std::filesystem::path dir_;
  asio::io_context io_;
  SteadyClock clock_;
  Recorder rec_;
  FakePrograms programs_{std::filesystem::path()};
  TaskManagerOptions options_;
  std::unique_ptr<TaskManager> manager_;
};

TEST_F(TaskManagerTest, RunsAProgramWithItsDescriptorAndSecretAndReportsItsResult) {
  Program("hello",
          "cat <&3 > secret.txt; cp \"$1\" seen.json; echo out; echo err >&2;"
          " echo '{\"started_ns\": 1, \"records\": 3}' > result.json");
  Manager().Launch(Launch(11, "hello", R"({"stage": "count", "params": {"n": 1}})"));
  ASSERT_EQ(rec_.started.size(), 1u);
  EXPECT_EQ(Manager().busy(), 1);
  ASSERT_EQ(Manager().Running().size(), 1u);
  EXPECT_EQ(Manager().Running()[0].label, "hello[0] v1");
  AwaitExits(1);
  const TaskExitReport& e = rec_.exits[0];
  EXPECT_EQ(e.kind, ExitKind::kCompleted) << e.reason;
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.job, 7u);
  EXPECT_NE(e.result.find("\"records\": 3"), std::string::npos);
  EXPECT_EQ(e.log_tail, "out\nerr\n");
  std::filesystem::path run = dir_ / "data" / "tasks" / "7" / "11.1";
  EXPECT_EQ(ReadFile(run / "secret.txt"), "s3cret");
  EXPECT_EQ(ReadFile(run / "task.log"), "out\nerr\n");
  auto d = nlohmann::json::parse(ReadFile(run / "seen.json"));
  EXPECT_EQ(d["stage"], "count");
  EXPECT_EQ(d["params"]["n"], 1);
  EXPECT_EQ(d["task"], 11);
  EXPECT_EQ(d["attempt"], 1);
  EXPECT_EQ(d["job"], 7);
  EXPECT_EQ(d["incarnation"], 2);
  EXPECT_EQ(d["computer"], "c00");
  EXPECT_EQ(d["config"], "/etc/copse.toml");
  EXPECT_EQ(d["secret_fd"], 3);
  EXPECT_FALSE(d.contains("secret"));
  // Kept until acknowledged, then forgotten.
  EXPECT_EQ(Manager().Unacknowledged().size(), 1u);
  Manager().Ack(11, 1);
  EXPECT_TRUE(Manager().Unacknowledged().empty());
  EXPECT_EQ(Manager().LogPath(7, 11, 1), run / "task.log");
}

TEST_F(TaskManagerTest, FailuresSayWhy) {
  Program("fails", "echo 'bad things' >&2; exit 3");
  Manager().Launch(Launch(1, "fails"));
  Manager().Launch(Launch(2, "nosuch"));
  Manager().Launch(Launch(3, "../../bin/sh"));
  Manager().Launch(Launch(4, "fails", "[not json"));
  AwaitExits(4);
  std::map<uint64_t, TaskExitReport> by_task;
  for (const TaskExitReport& e : rec_.exits) by_task[e.task] = e;
  EXPECT_EQ(by_task[1].kind, ExitKind::kFailed);
  EXPECT_EQ(by_task[1].reason, "exit code 3");
  EXPECT_EQ(by_task[1].log_tail, "bad things\n");
  // What the program source says is the reason, and the job's problem.
  EXPECT_EQ(by_task[2].kind, ExitKind::kFailed);
  EXPECT_EQ(by_task[2].reason, "no program 'nosuch' (fake)");
  EXPECT_EQ(by_task[3].kind, ExitKind::kFailed);
  EXPECT_NE(by_task[3].reason.find("is not a program name"), std::string::npos);
  EXPECT_NE(by_task[4].reason.find("not JSON"), std::string::npos);
}

TEST_F(TaskManagerTest, TimeoutKillsTheWholeGroup) {
  Program("hang", "sleep 30 & echo $! > child.pid; wait");
  LaunchRequest r = Launch(5, "hang");
  r.timeout = std::chrono::milliseconds(300);
  Manager().Launch(r);
  AwaitExits(1);
  EXPECT_EQ(rec_.exits[0].kind, ExitKind::kFailed);
  EXPECT_NE(rec_.exits[0].reason.find("timed out after"), std::string::npos);
  int child = std::stoi(ReadFile(dir_ / "data" / "tasks" / "7" / "5.1" / "child.pid"));
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = !ProcessAlive(child);
    if (!gone) io_.run_one_for(10ms);
  }
  EXPECT_TRUE(gone) << "the task's child " << child << " outlived it";
}

TEST_F(TaskManagerTest, RequestedKillEndsAsKilledAndEscalatesToSigkill) {
  Program("stubborn", "trap '' TERM; touch ready; while true; do sleep 0.05; done");
  Manager().Launch(Launch(6, "stubborn"));
  std::filesystem::path ready = dir_ / "data" / "tasks" / "7" / "6.1" / "ready";
  for (int i = 0; i < 500 && !std::filesystem::exists(ready); ++i) io_.run_one_for(10ms);
  Manager().Kill(6, 2, "wrong attempt");  // not this run: nothing happens
  Manager().Kill(6, 1, "preempted");
  AwaitExits(1);
  EXPECT_EQ(rec_.exits[0].kind, ExitKind::kKilled);
  EXPECT_EQ(rec_.exits[0].reason, "preempted");
  EXPECT_EQ(rec_.exits[0].signal, 9);  // TERM was ignored
}

TEST_F(TaskManagerTest, MemoryLimit) {
  options_.limits.memory_bytes = 64u << 20;
  Program("hog", "exec python3 -c 'import time; a = bytearray(256 << 20); time.sleep(30)'");
  Manager().Launch(Launch(8, "hog"));
  AwaitExits(1);
  EXPECT_EQ(rec_.exits[0].kind, ExitKind::kFailed);
  EXPECT_NE(rec_.exits[0].reason.find("memory limit exceeded"), std::string::npos)
      << rec_.exits[0].reason;
}

TEST_F(TaskManagerTest, WorkingDirectoryLimit) {
  options_.limits.workdir_bytes = 1u << 20;
  Program("filler", "head -c 8000000 /dev/zero > big; sleep 30");
  Manager().Launch(Launch(9, "filler"));
  AwaitExits(1);
  EXPECT_EQ(rec_.exits[0].kind, ExitKind::kFailed);
  EXPECT_NE(rec_.exits[0].reason.find("working-directory limit exceeded"), std::string::npos)
      << rec_.exits[0].reason;
}

TEST_F(TaskManagerTest, LogKeepsItsStartAndEnd) {
  options_.limits.log_bytes = 1000;  // its first 500 bytes and its last 500
  Program("chatty", "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done");
  Manager().Launch(Launch(10, "chatty"));
  AwaitExits(1);
  EXPECT_EQ(rec_.exits[0].kind, ExitKind::kCompleted);
  std::string log = ReadFile(dir_ / "data" / "tasks" / "7" / "10.1" / "task.log");
  EXPECT_EQ(log.rfind("line0\nline1\n", 0), 0u);
  EXPECT_NE(log.find("the log limit of"), std::string::npos);
  EXPECT_NE(log.find("line1999\n"), std::string::npos);
  EXPECT_EQ(log.find("line800\n"), std::string::npos);  // dropped in the middle
  EXPECT_LT(log.size(), 1100u);
  EXPECT_NE(rec_.exits[0].log_tail.find("line1999"), std::string::npos);
}

TEST_F(TaskManagerTest, DirectoriesGoAfterTheRetentionOnceTheJobEnded) {
  options_.limits.retention = Duration{0};
  Program("quick", "true");
  Manager().Launch(Launch(12, "quick"));
  AwaitExits(1);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "data" / "tasks" / "7"));
  Manager().JobEnded(7);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "data" / "tasks" / "7"));
  EXPECT_FALSE(Manager().LogPath(7, 12, 1).has_value());
}


TEST_F(TaskManagerTest, AStreamingProgramRunsUnderTheAdapterWithItsPathsInTheDescriptor) {
  // The adapter, as the worker finds it beside itself; here it shows what it got.
  std::filesystem::path adapter = dir_ / "bin" / "copse-stream";
  std::ofstream(adapter) << "#!/bin/sh\ncp \"$1\" seen.json; echo \"$LD_LIBRARY_PATH\"\n";
  ::chmod(adapter.c_str(), 0755);
  options_.lib_dir = dir_ / "lib";
  Program("mapper", "cat");
  Program("summer", "cat");
  programs_.contracts = {{"mapper", 0}, {"summer", 0}};
  LaunchRequest r = Launch(21, "mapper", R"({"streaming": {"format": "text", "combiner": "summer"}})");
  r.programs = {{"other@1", std::string(64, 'a'), "/.apps/other/1", 5, "", true}};
  Manager().Launch(r);
  AwaitExits(1);
  const TaskExitReport& e = rec_.exits[0];
  EXPECT_EQ(e.kind, ExitKind::kCompleted) << e.reason << e.log_tail;
  EXPECT_EQ(e.log_tail.rfind((dir_ / "lib").string(), 0), 0u) << e.log_tail;
  auto d = nlohmann::json::parse(ReadFile(dir_ / "data" / "tasks" / "7" / "21.1" / "seen.json"));
  EXPECT_EQ(d["exec"], (dir_ / "apps" / "mapper").string());
  EXPECT_EQ(d["combiner_exec"], (dir_ / "apps" / "summer").string());
  EXPECT_EQ(d["contract"], kVertexContract);
  // The job's pins went to the program source; its leases came back.
  ASSERT_EQ(programs_.pinned_seen.size(), 1u);
  EXPECT_EQ(programs_.pinned_seen[0].name, "other@1");
  EXPECT_EQ(programs_.released, (std::vector<std::string>{"lease-mapper", "lease-summer"}));
}

TEST_F(TaskManagerTest, AProgramOfAnotherContractIsRefusedAndNotRetried) {
  Program("old", "exit 0");
  Program("vertex", "exit 0");
  Program("mapper", "cat");
  programs_.contracts = {{"old", kVertexContract + 1}, {"mapper", 0}};
  Manager().Launch(Launch(31, "old"));
  // A combiner that links the runtime cannot filter records.
  Manager().Launch(Launch(32, "mapper", R"({"streaming": {"combiner": "vertex"}})"));
  AwaitExits(2);
  std::map<uint64_t, TaskExitReport> by_task;
  for (const TaskExitReport& e : rec_.exits) by_task[e.task] = e;
  EXPECT_EQ(by_task[31].kind, ExitKind::kFailed);
  EXPECT_EQ(by_task[31].exit_code, kExitDoNotRetry);
  EXPECT_NE(by_task[31].reason.find(fmt::format("built for vertex contract {}", kVertexContract + 1)),
            std::string::npos)
      << by_task[31].reason;
  EXPECT_NE(by_task[32].reason.find("a combiner must be a streaming program"), std::string::npos);
  EXPECT_TRUE(rec_.started.empty());
  EXPECT_EQ(Manager().busy(), 0);
}

TEST_F(TaskManagerTest, AKillWhileItsProgramIsOnItsWayEndsTheRunWithoutStartingIt) {
  Program("slow", "exit 0");
  programs_.hold = true;
  Manager().Launch(Launch(41, "slow"));
  EXPECT_EQ(Manager().busy(), 1);  // it holds its slot while it waits
  ASSERT_EQ(Manager().Running().size(), 1u);
  Manager().Kill(41, 1, "preempted");
  programs_.Answer();
  AwaitExits(1);
  EXPECT_EQ(rec_.exits[0].kind, ExitKind::kKilled);
  EXPECT_EQ(rec_.exits[0].reason, "preempted");
  EXPECT_TRUE(rec_.started.empty());
  EXPECT_EQ(programs_.released, (std::vector<std::string>{"lease-slow"}));
  EXPECT_EQ(Manager().busy(), 0);
}

}  // namespace
}  // namespace copse::worker

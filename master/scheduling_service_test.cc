// The scheduling service driven directly: its scheduler from the config, on
// an io_context the test polls, an in-memory store, a manual clock, and fake
// job service, files and messenger that record what they are told. Its core
// contract is what a job's root hears of each task: the table below gives,
// for each thing that can happen to a running vertex, the one event its root
// is sent.
#include "master/scheduling_service.h"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <functional>
#include <vector>

#include "scheduler/scheduler.h"

namespace copse::master {
namespace {

// Two computers of one slot: a job's root takes one, its vertex the other.
const char* kSchedulingConfig = R"(
[cluster]
name = "t"
data_root = "/tmp/unused"
[master]
port = 9000
worker_port_base = 9100
[[racks]]
name = "r0"
count = 2
slots = 1
)";

class RecordingMessenger final : public TaskMessenger {
 public:
  bool Launch(const std::string& computer, const LaunchRequest& r) override {
    launches.push_back({computer, r});
    return true;
  }
  bool Kill(const std::string& computer, uint64_t task, uint32_t attempt,
            const std::string&) override {
    kills.push_back({computer, task, attempt});
    return true;
  }
  void AckExit(const std::string&, uint64_t, uint32_t) override {}
  void JobEnded(uint64_t) override {}
  // False, and nothing told, while `root_away`: the root is not connected.
  bool ToRoot(uint64_t job, const TaskEvent& e) override {
    if (root_away) return false;
    told.push_back({job, e});
    return true;
  }
  struct Launched {
    std::string computer;
    LaunchRequest request;
  };
  struct Killed {
    std::string computer;
    uint64_t task;
    uint32_t attempt;
  };
  std::vector<Launched> launches;
  std::vector<Killed> kills;
  std::vector<std::pair<uint64_t, TaskEvent>> told;
  bool root_away = false;
};

class RecordingJobs final : public JobEvents {
 public:
  void OnAdmitted(uint64_t job) override { admitted.push_back(job); }
  void OnRun(const RunNews& news) override { runs.push_back(news); }
  void OnRootLost(uint64_t job, const std::string& why) override {
    roots_lost.push_back({job, why});
  }
  std::vector<uint64_t> admitted;
  std::vector<RunNews> runs;
  std::vector<std::pair<uint64_t, std::string>> roots_lost;
};

class NoFiles final : public TaskFiles {
 public:
  void AbandonRun(uint64_t task, uint32_t attempt) override {
    abandoned.push_back({task, attempt});
  }
  std::vector<std::pair<uint64_t, uint32_t>> abandoned;
};

class SchedulingServiceTest : public ::testing::Test {
 public:
  SchedulingServiceTest() : config_(*ParseClusterConfig(kSchedulingConfig, "/etc/t.toml")) {
    auto sched = scheduler::Scheduler::FromConfig(config_, 1, &clock_);
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    service_ = std::make_unique<SchedulingService>(
        io_, config_, std::move(*sched), store_, clock_,
        SchedulingService::Peers{messenger_, jobs_, files_}, SchedulingService::Options{});
    EXPECT_TRUE(service_->Start().ok());
    for (const ComputerConfig& c : config_.computers) service_->OnComputerUp(c.name);
  }

  // Runs what the service posted to its loop (scheduling rounds), a bounded
  // number of handlers: its timers take the manual clock for the real one.
  void Poll() {
    for (int i = 0; i < 100 && io_.poll_one() > 0; ++i) {
    }
  }

  // Job 1 with its root running and one vertex launched: the vertex's task
  // id, and where it went.
  void RunOneVertex(uint64_t* task, std::string* computer) {
    scheduler::JobAttributes a;
    a.submitted = clock_.Now();
    Result<uint64_t> root = service_->AddJob(1, 1, a, 0);
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    Poll();
    ASSERT_EQ(messenger_.launches.size(), 1u);
    ASSERT_TRUE(messenger_.launches[0].request.root);
    root_computer_ = messenger_.launches[0].computer;
    service_->TaskStarted(root_computer_, *root, 1);
    service_->RootConnected(1);
    Poll();
    VertexTaskRequest v;
    v.program = "true";
    v.descriptor = "{}";
    v.label = "s[0] v1";
    Result<std::vector<uint64_t>> ids = service_->Submit(1, {v});
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    Poll();
    ASSERT_EQ(messenger_.launches.size(), 2u);
    *task = (*ids)[0];
    *computer = messenger_.launches[1].computer;
    ASSERT_EQ(messenger_.launches[1].request.task, *task);
    ASSERT_NE(*computer, root_computer_);
    messenger_.told.clear();
  }

  TaskExitReport Exit(uint64_t task, ExitKind kind, int code, const std::string& reason) {
    TaskExitReport r;
    r.task = task;
    r.attempt = 1;
    r.job = 1;
    r.kind = kind;
    r.exit_code = code;
    r.reason = reason;
    r.log_tail = "the end of its log";
    r.result = kind == ExitKind::kCompleted ? "{\"records\":1}" : "";
    return r;
  }

  ClusterConfig config_;
  asio::io_context io_;
  ManualClock clock_{Timestamp{1'000'000}};
  dfs::MemMetaStore store_;
  RecordingMessenger messenger_;
  RecordingJobs jobs_;
  NoFiles files_;
  std::unique_ptr<SchedulingService> service_;
  std::string root_computer_;
};

// What happens to a running vertex -> what its root is told.
struct EndRow {
  const char* what;
  std::function<void(SchedulingServiceTest&, uint64_t task, const std::string& computer)> act;
  TaskEventKind told;
  std::string reason;  // what the reason holds ("" for none)
  int exit_code;
  bool log_tail;   // the worker's log tail is passed on
  bool abandoned;  // its files were abandoned at the name service
};

const EndRow kEndRows[] = {
    {"it starts", [](SchedulingServiceTest&, uint64_t, const std::string&) {},
     TaskEventKind::kStarted, "", -1, false, false},
    {"it completes",
     [](SchedulingServiceTest& t, uint64_t task, const std::string& c) {
       t.service_->TaskExited(c, t.Exit(task, ExitKind::kCompleted, 0, ""));
     },
     TaskEventKind::kCompleted, "", 0, true, false},
    {"it fails",
     [](SchedulingServiceTest& t, uint64_t task, const std::string& c) {
       t.service_->TaskExited(c, t.Exit(task, ExitKind::kFailed, 3, "exit code 3"));
     },
     TaskEventKind::kFailed, "exit code 3", 3, true, true},
    {"its computer is lost",
     [](SchedulingServiceTest& t, uint64_t, const std::string& c) {
       t.service_->OnComputerDown(c);
     },
     TaskEventKind::kLost, "its computer r0-c0", -1, false, false},
    {"its root withdraws it and the kill is confirmed",
     [](SchedulingServiceTest& t, uint64_t task, const std::string& c) {
       ASSERT_TRUE(t.service_->Withdraw(1, task).ok());
       t.Poll();
       ASSERT_EQ(t.messenger_.kills.size(), 1u);
       EXPECT_EQ(t.messenger_.kills[0].computer, c);
       t.service_->TaskExited(c, t.Exit(task, ExitKind::kKilled, -1, "killed: withdrawn"));
     },
     TaskEventKind::kWithdrawn, "killed: withdrawn", -1, true, true},
};

class VertexEndTest : public SchedulingServiceTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(VertexEndTest, TellsItsRootOneEvent) {
  const EndRow& row = kEndRows[GetParam()];
  SCOPED_TRACE(row.what);
  uint64_t task = 0;
  std::string computer;
  ASSERT_NO_FATAL_FAILURE(RunOneVertex(&task, &computer));
  service_->TaskStarted(computer, task, 1);
  Poll();
  if (row.told != TaskEventKind::kStarted) {
    messenger_.told.clear();
    ASSERT_NO_FATAL_FAILURE(row.act(*this, task, computer));
    Poll();
  }
  std::vector<TaskEvent> about;
  for (const auto& [job, e] : messenger_.told) {
    EXPECT_EQ(job, 1u);
    if (e.task == task) about.push_back(e);
  }
  ASSERT_EQ(about.size(), 1u) << "one event for the vertex";
  const TaskEvent& e = about[0];
  EXPECT_EQ(e.kind, row.told) << TaskEventKindName(e.kind);
  EXPECT_EQ(e.attempt, 1u);
  EXPECT_EQ(e.computer, computer);
  if (row.reason.empty()) {
    EXPECT_EQ(e.reason, "");
  } else {
    EXPECT_NE(e.reason.find(row.reason), std::string::npos) << e.reason;
  }
  EXPECT_EQ(e.exit_code, row.exit_code);
  EXPECT_EQ(e.log_tail, row.log_tail ? "the end of its log" : "");
  if (row.told == TaskEventKind::kCompleted) {
    EXPECT_EQ(e.result, "{\"records\":1}");
  }
  bool abandoned = false;
  for (const auto& [t_id, attempt] : files_.abandoned) abandoned |= t_id == task && attempt == 1;
  EXPECT_EQ(abandoned, row.abandoned);
  // The job service heard the run start, and end unless it still runs.
  int started = 0, ended = 0;
  for (const RunNews& n : jobs_.runs) {
    if (n.task != task) continue;
    started += n.what == RunNews::What::kStarted;
    ended += n.what == RunNews::What::kEnded;
  }
  EXPECT_EQ(started, 1);
  EXPECT_EQ(ended, row.told == TaskEventKind::kStarted ? 0 : 1);
  EXPECT_TRUE(jobs_.roots_lost.empty());
}

INSTANTIATE_TEST_SUITE_P(EveryEnd, VertexEndTest, ::testing::Range<size_t>(0, std::size(kEndRows)));

// The root's own end is no task event: a root whose computer is lost makes
// the job service restart the job.
TEST_F(SchedulingServiceTest, ARootWhoseComputerIsLostRestartsItsJob) {
  uint64_t task = 0;
  std::string computer;
  ASSERT_NO_FATAL_FAILURE(RunOneVertex(&task, &computer));
  service_->OnComputerDown(root_computer_);
  Poll();
  ASSERT_EQ(jobs_.roots_lost.size(), 1u);
  EXPECT_EQ(jobs_.roots_lost[0].first, 1u);
  EXPECT_NE(jobs_.roots_lost[0].second.find(root_computer_ + " was lost"), std::string::npos)
      << jobs_.roots_lost[0].second;
  for (const auto& [job, e] : messenger_.told)
    EXPECT_NE(e.task, task) << "nothing about the vertex yet";
}

// News for a root that is not connected waits, in order, until it is.
TEST_F(SchedulingServiceTest, NewsWaitsForARootThatIsAway) {
  uint64_t task = 0;
  std::string computer;
  ASSERT_NO_FATAL_FAILURE(RunOneVertex(&task, &computer));
  messenger_.root_away = true;
  service_->TaskStarted(computer, task, 1);
  service_->TaskExited(computer, Exit(task, ExitKind::kCompleted, 0, ""));
  Poll();
  EXPECT_TRUE(messenger_.told.empty());
  messenger_.root_away = false;
  service_->RootConnected(1);
  Poll();
  ASSERT_EQ(messenger_.told.size(), 2u);
  EXPECT_EQ(messenger_.told[0].second.kind, TaskEventKind::kStarted);
  EXPECT_EQ(messenger_.told[1].second.kind, TaskEventKind::kCompleted);
}

}  // namespace
}  // namespace copse::master

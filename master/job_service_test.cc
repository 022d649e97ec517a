// The job service driven directly, over an in-memory store that can be told
// to fail, fake files and manual clocks. JobServiceTest puts a real
// scheduling service (its scheduler from the config) beside it on an
// io_context the test polls; JobServiceAloneTest gives it a fake of the
// scheduling side (JobScheduling) that records what it is asked and plays the
// scheduler's part in each path of a job's life.
#include "master/job_service.h"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/text.h"
#include "master/scheduling_service.h"
#include "scheduler/scheduler.h"

namespace copse::master {
namespace {

using Json = nlohmann::json;

const char* kJobServiceConfig = R"(
[cluster]
name = "t"
data_root = "/tmp/unused"
max_running_jobs = 2
[master]
port = 9000
worker_port_base = 9100
[jobs]
max_finished = 3
max_root_restarts = 2
[[racks]]
name = "r0"
count = 2
slots = 2
)";

class FakeFiles final : public JobFiles, public TaskFiles {
 public:
  Result<std::map<std::string, rootjob::FileFacts>> InputFacts(
      const std::vector<std::string>& paths) override {
    std::map<std::string, rootjob::FileFacts> out;
    for (const std::string& p : paths) out[p] = {1, 100};
    return out;
  }
  Status OutputsFree(const std::vector<std::string>&) override { return Status::Ok(); }
  Status PublishOutputs(uint64_t job) override {
    published.push_back(job);
    return Status::Ok();
  }
  void DropOutputs(uint64_t job) override { dropped.push_back(job); }
  void DeleteScratch(uint64_t job) override { scratch_deleted.push_back(job); }
  std::set<uint64_t> JobsWithFiles() override { return with_files; }
  void AbandonRun(uint64_t, uint32_t) override {}
  std::vector<uint64_t> published, dropped, scratch_deleted;
  std::set<uint64_t> with_files;
};

class FakeMessenger final : public TaskMessenger {
 public:
  bool Launch(const std::string&, const LaunchRequest&) override { return true; }
  bool Kill(const std::string&, uint64_t, uint32_t, const std::string&) override { return true; }
  void AckExit(const std::string&, uint64_t, uint32_t) override {}
  void JobEnded(uint64_t job) override { ended.push_back(job); }
  bool ToRoot(uint64_t, const TaskEvent&) override { return true; }
  std::vector<uint64_t> ended;
};

class JobServiceTest : public ::testing::Test {
 protected:
  JobServiceTest() : config_(*ParseClusterConfig(kJobServiceConfig, "/etc/t.toml")) {
    JobService::Options jo;
    jo.apps_dir = "/bin";  // programs that exist: "true", "sh"
    jo.defer = [this](std::function<void()> f) { deferred_.push_back(std::move(f)); };
    jo.free_space = [this](const std::filesystem::path&) -> Result<uint64_t> { return free_; };
    jobs_ = std::make_unique<JobService>(config_, store_, files_, wall_, jo);
    auto sched = scheduler::Scheduler::FromConfig(config_, 1, &clock_);
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduling_ = std::make_unique<SchedulingService>(
        io_, config_, std::move(*sched), store_, clock_,
        SchedulingService::Peers{messenger_, *jobs_, files_}, SchedulingService::Options{});
    EXPECT_TRUE(scheduling_->Start().ok());
    EXPECT_TRUE(jobs_->Resume(*scheduling_).ok());
  }

  static std::string Spec(const std::string& name) {
    return DumpJson(
        Json{{"name", name}, {"stages", {{{"name", "s"}, {"program", "true"}, {"vertices", 1}}}}});
  }

  // Admits queued jobs: the scheduler decides on the loop. The service's
  // timers take this test's clock for the real one, so a wakeup may be due at
  // once again and again: the loop runs a bounded number of handlers.
  void Admit() {
    for (int i = 0; i < 100 && io_.poll_one() > 0; ++i) {
    }
  }

  const JobService::Job& Job(uint64_t id) { return jobs_->jobs().at(id); }

  void RunDeferred() {
    while (!deferred_.empty()) {
      auto f = std::move(deferred_.front());
      deferred_.pop_front();
      f();
    }
  }

  ClusterConfig config_;
  asio::io_context io_;
  ManualClock clock_{Timestamp{1'000'000}};
  ManualClock wall_{Timestamp{1'700'000'000'000'000}};
  dfs::MemMetaStore store_;
  FakeFiles files_;
  FakeMessenger messenger_;
  uint64_t free_ = uint64_t{1} << 40;
  std::deque<std::function<void()>> deferred_;
  std::unique_ptr<JobService> jobs_;
  std::unique_ptr<SchedulingService> scheduling_;
};

TEST_F(JobServiceTest, AnEndTheStoreRefusesChangesNothingAndCanBeSentAgain) {
  Result<uint64_t> id = jobs_->Submit(Spec("one"));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  Admit();
  ASSERT_EQ(Job(*id).state, JobState::kRunning);
  store_.FailNextApply(ResourceExhausted("no space on the master: disk full"));
  Status s = jobs_->Over(*id, true, "", "{}");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("job table"), std::string::npos) << s.message();
  EXPECT_EQ(Job(*id).state, JobState::kRunning) << "memory changed before the store took it";
  EXPECT_TRUE(messenger_.ended.empty());
  // The root sends the end again; publishing again is harmless.
  ASSERT_TRUE(jobs_->Over(*id, true, "", "{}").ok());
  EXPECT_EQ(Job(*id).state, JobState::kSucceeded);
  EXPECT_EQ(messenger_.ended, std::vector<uint64_t>{*id});
  // And the record says so: a restarted master reads it back.
  JobService again(config_, store_, files_, wall_, JobService::Options{});
  ASSERT_TRUE(again.Load().ok());
  EXPECT_EQ(again.jobs().at(*id).state, JobState::kSucceeded);
}

TEST_F(JobServiceTest, AFailureReasonThatIsNotUtf8IsRecordedAndShown) {
  Result<uint64_t> id = jobs_->Submit(Spec("bad-text"));
  ASSERT_TRUE(id.ok());
  Admit();
  std::string reason = "vertex s[0] failed: exit code 65; log ends: \xC3\x28\xA0\xA1\xE2\x82";
  ASSERT_TRUE(jobs_->Over(*id, false, reason, "{}").ok());
  Result<std::string> doc = jobs_->StatusJson(*id);
  ASSERT_TRUE(doc.ok());
  EXPECT_TRUE(IsValidUtf8(*doc));
  Json d = Json::parse(*doc);
  EXPECT_EQ(d["state"], "failed");
  EXPECT_NE(d["failure"].get<std::string>().find("log ends: "), std::string::npos);
  EXPECT_TRUE(IsValidUtf8(jobs_->ListJson()));
}

TEST_F(JobServiceTest, TheSameRequestIdIsOneJob) {
  Result<uint64_t> a = jobs_->Submit(Spec("x"), "req-1");
  Result<uint64_t> b = jobs_->Submit(Spec("x"), "req-1");
  Result<uint64_t> c = jobs_->Submit(Spec("x"), "req-2");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(jobs_->jobs().size(), 2u);
  // Also after a restart of the master.
  JobService again(config_, store_, files_, wall_, JobService::Options{});
  ASSERT_TRUE(again.Load().ok());
  EXPECT_EQ(again.jobs().at(*a).request_id, "req-1");
  Status too_long = jobs_->Submit(Spec("x"), std::string(65, 'r')).status();
  EXPECT_EQ(too_long.code(), StatusCode::kInvalidArgument);
}

TEST_F(JobServiceTest, FinishedJobsBeyondTheLimitAreForgottenOldestFirst) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i) {
    Result<uint64_t> id = jobs_->Submit(Spec("j" + std::to_string(i)));
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
    ASSERT_TRUE(jobs_->Kill(*id).ok());
    wall_.Advance(Duration{1'000'000});
  }
  // [jobs] max_finished = 3: the two oldest are gone, from memory and store.
  EXPECT_EQ(jobs_->jobs().count(ids[0]), 0u);
  EXPECT_EQ(jobs_->jobs().count(ids[1]), 0u);
  for (int i = 2; i < 5; ++i) EXPECT_EQ(jobs_->jobs().count(ids[i]), 1u) << i;
  JobService again(config_, store_, files_, wall_, JobService::Options{});
  ASSERT_TRUE(again.Load().ok());
  EXPECT_EQ(again.jobs().size(), 3u);
}

TEST_F(JobServiceTest, ARootLostTooOftenFailsItsJob) {
  Result<uint64_t> id = jobs_->Submit(Spec("fragile"));
  ASSERT_TRUE(id.ok());
  Admit();
  jobs_->OnRootLost(*id, "its root task ended: signal 11");
  jobs_->OnRootLost(*id, "its root task ended: signal 11");
  EXPECT_EQ(Job(*id).state, JobState::kRunning);
  EXPECT_EQ(Job(*id).incarnation, 2u);
  jobs_->OnRootLost(*id, "its root task ended: signal 11");
  EXPECT_EQ(Job(*id).state, JobState::kRunning) << "ended inside the scheduler's event";
  RunDeferred();
  EXPECT_EQ(Job(*id).state, JobState::kFailed);
  EXPECT_NE(Job(*id).failure.find("its root was lost 3 times"), std::string::npos)
      << Job(*id).failure;
  EXPECT_EQ(messenger_.ended, std::vector<uint64_t>{*id});
}

TEST_F(JobServiceTest, AFullDiskRefusesNewJobsAndNotTheirEnds) {
  Result<uint64_t> id = jobs_->Submit(Spec("before"));
  ASSERT_TRUE(id.ok());
  Admit();
  free_ = 10u << 20;  // under the 100 MiB reserve
  Status s = jobs_->Submit(Spec("after")).status();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("no space on the master"), std::string::npos) << s.message();
  EXPECT_TRUE(jobs_->Over(*id, true, "", "{}").ok());
  free_ = uint64_t{1} << 40;  // freed: it works again
  EXPECT_TRUE(jobs_->Submit(Spec("later")).ok());
}

TEST_F(JobServiceTest, AProgressDocumentFromARootIsReadWithLimits) {
  Result<uint64_t> id = jobs_->Submit(Spec("p"));
  ASSERT_TRUE(id.ok());
  Admit();
  jobs_->Progress(*id, R"({"done": 0, "stages": []})");
  uint64_t v = Job(*id).version;
  jobs_->Progress(*id, std::string(10'000, '[') + std::string(10'000, ']'));
  jobs_->Progress(*id, "{\"done\": \"\xFF\"}");
  jobs_->Progress(*id, "not json");
  EXPECT_EQ(Job(*id).version, v) << "a bad progress document changed the job";
}

// ---- the job service alone, with a fake scheduling side -----------------------

class FakeScheduling final : public JobScheduling {
 public:
  struct Added {
    uint64_t job, incarnation, root_task;
    bool operator==(const Added&) const = default;
  };
  Result<uint64_t> AddJob(uint64_t job, uint32_t incarnation, const scheduler::JobAttributes&,
                          uint64_t root_task, std::vector<ProgramRef>) override {
    added.push_back({job, incarnation, root_task});
    return root_task != 0 ? root_task : next_root++;
  }
  Status EndJob(uint64_t job, bool root_said_so) override {
    ended.push_back({job, root_said_so});
    return Status::Ok();
  }
  void SetIncarnation(uint64_t job, uint32_t incarnation) override {
    incarnations.push_back({job, incarnation});
  }
  bool RootAdopted(uint64_t job) const override { return adopted.count(job) != 0; }

  std::vector<Added> added;
  std::vector<std::pair<uint64_t, bool>> ended;
  std::vector<std::pair<uint64_t, uint32_t>> incarnations;
  std::set<uint64_t> adopted;
  uint64_t next_root = 100;
};

class JobServiceAloneTest : public ::testing::Test {
 protected:
  JobServiceAloneTest() : config_(*ParseClusterConfig(kJobServiceConfig, "/etc/t.toml")) {
    jobs_ = NewService();
    EXPECT_TRUE(jobs_->Load().ok());
    EXPECT_TRUE(jobs_->Resume(scheduling_).ok());
  }

  // A service over this test's store, as a master (re)started now builds it.
  std::unique_ptr<JobService> NewService() {
    JobService::Options jo;
    jo.apps_dir = "/bin";
    jo.defer = [this](std::function<void()> f) { deferred_.push_back(std::move(f)); };
    jo.free_space = [](const std::filesystem::path&) -> Result<uint64_t> {
      return uint64_t{1} << 40;
    };
    return std::make_unique<JobService>(config_, store_, files_, wall_, jo);
  }

  static std::string Spec(const std::string& name, const std::string& program = "true") {
    return DumpJson(
        Json{{"name", name}, {"stages", {{{"name", "s"}, {"program", program}, {"vertices", 1}}}}});
  }

  uint64_t SubmitOk(const std::string& name) {
    Result<uint64_t> id = jobs_->Submit(Spec(name));
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  const JobService::Job& Job(uint64_t id) { return jobs_->jobs().at(id); }

  ClusterConfig config_;
  ManualClock wall_{Timestamp{1'700'000'000'000'000}};
  dfs::MemMetaStore store_;
  FakeFiles files_;
  FakeScheduling scheduling_;
  std::deque<std::function<void()>> deferred_;
  std::unique_ptr<JobService> jobs_;
};

TEST_F(JobServiceAloneTest, ASubmittedJobIsQueuedAndHandedToScheduling) {
  uint64_t id = SubmitOk("q");
  ASSERT_EQ(scheduling_.added, (std::vector<FakeScheduling::Added>{{id, 0, 0}}));
  EXPECT_EQ(Job(id).state, JobState::kQueued);
  EXPECT_EQ(Job(id).root_task, 100u) << "the root task id scheduling handed out";
  EXPECT_EQ(Job(id).submitted_ms, 1'700'000'000'000);
  EXPECT_EQ(Json::parse(*jobs_->StatusJson(id))["state"], "queued");
  EXPECT_EQ(jobs_->StatusJson(id + 1).status().code(), StatusCode::kNotFound);
}

TEST_F(JobServiceAloneTest, ABadSpecOrAnUnknownProgramNeverReachesScheduling) {
  EXPECT_EQ(jobs_->Submit("not json").status().code(), StatusCode::kInvalidArgument);
  Status s = jobs_->Submit(Spec("p", "no-such-program-anywhere")).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no-such-program-anywhere"), std::string::npos) << s.message();
  EXPECT_TRUE(scheduling_.added.empty());
  EXPECT_TRUE(jobs_->jobs().empty());
}

TEST_F(JobServiceAloneTest, AFullQueueRefusesUntilAJobIsAdmitted) {
  config_.jobs.max_queued = 2;
  uint64_t a = SubmitOk("a");
  SubmitOk("b");
  Status s = jobs_->Submit(Spec("c")).status();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_EQ(scheduling_.added.size(), 2u);
  jobs_->OnAdmitted(a);
  EXPECT_TRUE(jobs_->Submit(Spec("c")).ok()) << "an admitted job left the queue";
}

TEST_F(JobServiceAloneTest, AdmissionRunsTheJobAndIsRecorded) {
  uint64_t id = SubmitOk("run");
  uint64_t version = Job(id).version;
  wall_.Advance(Duration{2'000'000});
  jobs_->OnAdmitted(id);
  EXPECT_EQ(Job(id).state, JobState::kRunning);
  EXPECT_EQ(Job(id).admitted_ms, 1'700'000'002'000);
  EXPECT_GT(Job(id).version, version);
  jobs_->OnAdmitted(id + 7);  // not a job of the table: nothing happens
  std::unique_ptr<JobService> again = NewService();
  ASSERT_TRUE(again->Load().ok());
  EXPECT_EQ(again->jobs().at(id).state, JobState::kRunning);
}

TEST_F(JobServiceAloneTest, ALostRootRestartsTheJobAsItsNextIncarnation) {
  uint64_t id = SubmitOk("phoenix");
  jobs_->OnAdmitted(id);
  jobs_->Progress(id, R"({"done": 1})");
  uint64_t root = Job(id).root_task;
  ASSERT_TRUE(jobs_->ValidateRoot(id, 0, root).ok());
  jobs_->OnRootLost(id, "its computer c1 was lost");
  EXPECT_EQ(Job(id).state, JobState::kRunning);
  EXPECT_EQ(Job(id).incarnation, 1u);
  EXPECT_EQ(scheduling_.incarnations, (std::vector<std::pair<uint64_t, uint32_t>>{{id, 1}}));
  ASSERT_EQ(Job(id).restarts.size(), 1u);
  EXPECT_EQ(Job(id).restarts[0]["why"], "its computer c1 was lost");
  EXPECT_EQ(Job(id).progress, Json::object()) << "the old incarnation's progress was kept";
  EXPECT_EQ(files_.dropped, std::vector<uint64_t>{id});
  EXPECT_EQ(files_.scratch_deleted, std::vector<uint64_t>{id});
  // The old incarnation's root is refused; the new one is welcome.
  EXPECT_EQ(jobs_->ValidateRoot(id, 0, root).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(jobs_->ValidateRoot(id, 1, root).ok());
  EXPECT_TRUE(scheduling_.ended.empty());
  EXPECT_TRUE(deferred_.empty());
}

TEST_F(JobServiceAloneTest, KillEndsAJobOnceAndDropsItsFiles) {
  uint64_t queued = SubmitOk("queued");
  uint64_t running = SubmitOk("running");
  jobs_->OnAdmitted(running);
  Result<KillResult> k = jobs_->Kill(queued);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(k->state, JobState::kKilled);
  EXPECT_FALSE(k->already_over);
  ASSERT_TRUE(jobs_->Kill(running).ok());
  EXPECT_EQ(Job(running).state, JobState::kKilled);
  EXPECT_EQ(Job(running).failure, "killed by a client");
  EXPECT_EQ(scheduling_.ended,
            (std::vector<std::pair<uint64_t, bool>>{{queued, false}, {running, false}}));
  EXPECT_EQ(files_.dropped, (std::vector<uint64_t>{queued, running}));
  EXPECT_TRUE(files_.published.empty());
  // Again: already over, and scheduling is not asked twice.
  Result<KillResult> again = jobs_->Kill(running);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_over);
  EXPECT_EQ(scheduling_.ended.size(), 2u);
  EXPECT_EQ(jobs_->Kill(999).status().code(), StatusCode::kNotFound);
  // A root of a killed job is refused.
  EXPECT_EQ(jobs_->ValidateRoot(running, 0, Job(running).root_task).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(JobServiceAloneTest, ARootThatEndsItsJobPublishesOrDropsItsOutputs) {
  uint64_t good = SubmitOk("good");
  uint64_t bad = SubmitOk("bad");
  jobs_->OnAdmitted(good);
  jobs_->OnAdmitted(bad);
  ASSERT_TRUE(jobs_->Over(good, true, "", R"({"done": 1})").ok());
  ASSERT_TRUE(jobs_->Over(bad, false, "vertex s[0] failed", "{}").ok());
  EXPECT_EQ(Job(good).state, JobState::kSucceeded);
  EXPECT_EQ(Job(bad).state, JobState::kFailed);
  EXPECT_EQ(Job(bad).failure, "vertex s[0] failed");
  EXPECT_EQ(files_.published, std::vector<uint64_t>{good});
  EXPECT_EQ(files_.dropped, std::vector<uint64_t>{bad});
  // The root said so: it exits by itself, scheduling only waits for it.
  EXPECT_EQ(scheduling_.ended, (std::vector<std::pair<uint64_t, bool>>{{good, true}, {bad, true}}));
}

TEST_F(JobServiceAloneTest, ASubmissionTheStoreRefusesIsTakenBackFromScheduling) {
  store_.FailNextApply(ResourceExhausted("disk full"));
  Result<uint64_t> id = jobs_->Submit(Spec("lost"));
  EXPECT_EQ(id.status().code(), StatusCode::kResourceExhausted);
  ASSERT_EQ(scheduling_.added.size(), 1u);
  EXPECT_EQ(scheduling_.ended,
            (std::vector<std::pair<uint64_t, bool>>{{scheduling_.added[0].job, false}}));
  EXPECT_TRUE(jobs_->jobs().empty());
}

TEST_F(JobServiceAloneTest, ARestartedMasterResumesItsJobsInOrderAndCollectsEndedOnesFiles) {
  uint64_t queued = SubmitOk("queued");
  uint64_t running = SubmitOk("running");
  uint64_t killed = SubmitOk("killed");
  jobs_->OnAdmitted(running);
  jobs_->OnRootLost(running, "its root task ended: signal 9");
  ASSERT_TRUE(jobs_->Kill(killed).ok());
  const uint64_t queued_root = Job(queued).root_task, running_root = Job(running).root_task;

  // The master restarts: the table says work was in flight.
  FakeScheduling after;
  files_.with_files = {queued, running, killed, 42};
  files_.dropped.clear();
  files_.scratch_deleted.clear();
  std::unique_ptr<JobService> again = NewService();
  Result<bool> restarted = again->Load();
  ASSERT_TRUE(restarted.ok());
  EXPECT_TRUE(*restarted);
  ASSERT_TRUE(again->Resume(after).ok());
  // Queued and running jobs, in submission order, with their incarnation and
  // root task: an adopted root is the same task.
  EXPECT_EQ(after.added, (std::vector<FakeScheduling::Added>{{queued, 0, queued_root},
                                                             {running, 1, running_root}}));
  // Files of jobs that are over (or unknown) are collected; live ones kept.
  EXPECT_EQ(files_.dropped, (std::vector<uint64_t>{killed, 42}));
  EXPECT_EQ(files_.scratch_deleted, (std::vector<uint64_t>{killed, 42}));
  EXPECT_EQ(again->jobs().at(running).state, JobState::kRunning);
  EXPECT_EQ(again->jobs().at(queued).state, JobState::kQueued);
}

TEST_F(JobServiceAloneTest, AfterRecoveryARunningJobWhoseRootDidNotComeBackRestarts) {
  uint64_t back = SubmitOk("back");
  uint64_t gone = SubmitOk("gone");
  uint64_t waiting = SubmitOk("waiting");
  jobs_->OnAdmitted(back);
  jobs_->OnAdmitted(gone);
  FakeScheduling after;
  after.adopted = {back};
  std::unique_ptr<JobService> again = NewService();
  ASSERT_TRUE(again->Load().ok());
  ASSERT_TRUE(again->Resume(after).ok());
  again->AfterRecovery();
  EXPECT_EQ(again->jobs().at(back).incarnation, 0u);
  EXPECT_EQ(again->jobs().at(gone).incarnation, 1u);
  EXPECT_EQ(again->jobs().at(waiting).incarnation, 0u) << "a queued job has no root to lose";
  EXPECT_EQ(after.incarnations, (std::vector<std::pair<uint64_t, uint32_t>>{{gone, 1}}));
  ASSERT_EQ(again->jobs().at(gone).restarts.size(), 1u);
  EXPECT_NE(again->jobs().at(gone).restarts[0]["why"].get<std::string>().find("did not come back"),
            std::string::npos);
}

}  // namespace
}  // namespace copse::master

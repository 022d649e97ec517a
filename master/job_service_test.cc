// The job service driven directly: a real scheduling service (its scheduler
// from the config) on an io_context nobody runs, an in-memory store that can
// be told to fail, fake files and messenger, and manual clocks.
#include "master/job_service.h"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/text.h"
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
  void DeleteScratch(uint64_t) override {}
  std::set<uint64_t> JobsWithFiles() override { return {}; }
  void AbandonRun(uint64_t, uint32_t) override {}
  std::vector<uint64_t> published, dropped;
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
    scheduling_ = std::make_unique<SchedulingService>(io_, config_, std::move(*sched), store_,
                                                      clock_, SchedulingService::Options{});
    scheduling_->set_messenger(&messenger_);
    scheduling_->set_jobs(jobs_.get());
    scheduling_->set_files(&files_);
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

}  // namespace
}  // namespace copse::master

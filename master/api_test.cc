// The HTTP API's snapshot, built from the master's own components in
// process: the membership table, the name service over an in-memory store,
// the job and scheduling services (the scheduler of the config) on an
// io_context the test polls, the scheduling record, with manual clocks. No
// server is started: the test refreshes the snapshot itself and reads what
// requests would be answered from.
#include "master/api.h"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "master/cluster_manager.h"
#include "master/dfs_service.h"
#include "master/job_files.h"
#include "master/job_service.h"
#include "master/scheduling_record.h"
#include "master/scheduling_service.h"
#include "proto/scheduling.capnp.h"
#include "scheduler/scheduler.h"

namespace copse::master {
namespace {

using Json = nlohmann::json;

const char* kApiConfig = R"(
[cluster]
name = "snap"
data_root = "/tmp/unused"
max_running_jobs = 2
[master]
port = 9000
worker_port_base = 9100
[[racks]]
name = "r0"
count = 2
slots = 2
)";

class NoMessenger final : public TaskMessenger {
 public:
  bool Launch(const std::string&, const LaunchRequest&) override { return true; }
  bool Kill(const std::string&, uint64_t, uint32_t, const std::string&) override { return true; }
  void AckExit(const std::string&, uint64_t, uint32_t) override {}
  void JobEnded(uint64_t) override {}
  bool ToRoot(uint64_t, const TaskEvent&) override { return true; }
};

class ApiSnapshotTest : public ::testing::Test {
 protected:
  ApiSnapshotTest()
      : config_(*ParseClusterConfig(kApiConfig, "/etc/t.toml")),
        cluster_(config_, config_.worker_timeout, proto::SCHEDULING_PROTOCOL_VERSION),
        dfs_(io_, config_, clock_, store_, cluster_),
        files_(dfs_.names()) {
    EXPECT_TRUE(dfs_.Load().ok());
    JobService::Options jo;
    jo.apps_dir = "/bin";
    jo.defer = [this](std::function<void()> f) { deferred_.push_back(std::move(f)); };
    jo.free_space = [](const std::filesystem::path&) -> Result<uint64_t> {
      return uint64_t{1} << 40;
    };
    jobs_ = std::make_unique<JobService>(config_, store_, files_, wall_, jo);
    auto sched = scheduler::Scheduler::FromConfig(config_, 1, &clock_);
    EXPECT_TRUE(sched.ok()) << sched.status().ToString();
    scheduling_ = std::make_unique<SchedulingService>(
        io_, config_, std::move(*sched), store_, clock_,
        SchedulingService::Peers{messenger_, *jobs_, files_, &record_},
        SchedulingService::Options{});
    EXPECT_TRUE(scheduling_->Start().ok());
    EXPECT_TRUE(jobs_->Resume(*scheduling_).ok());
    for (const ComputerConfig& c : config_.computers) scheduling_->OnComputerUp(c.name);
    api_ = std::make_unique<Api>(io_, config_, clock_, wall_, cluster_, dfs_, *jobs_, *scheduling_,
                                 record_, Api::Options{});
  }

  uint64_t Submit(const std::string& name) {
    Result<uint64_t> id = jobs_->Submit(DumpJson(
        Json{{"name", name}, {"stages", {{{"name", "s"}, {"program", "true"}, {"vertices", 1}}}}}));
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  // Runs the scheduling rounds the services posted (bounded: their timers
  // take the manual clock for the real one).
  void Poll() {
    for (int i = 0; i < 100 && io_.poll_one() > 0; ++i) {
    }
  }

  std::shared_ptr<const ApiSnapshot> Refreshed() {
    api_->Refresh();
    return api_->snapshot();
  }

  ClusterConfig config_;
  asio::io_context io_;
  ManualClock clock_{Timestamp{1'000'000}};
  ManualClock wall_{Timestamp{1'700'000'000'000'000}};
  dfs::MemMetaStore store_;
  ClusterManager cluster_;
  DfsService dfs_;
  NameServiceJobFiles files_;
  NoMessenger messenger_;
  SchedulingRecord record_;
  std::deque<std::function<void()>> deferred_;
  std::unique_ptr<JobService> jobs_;
  std::unique_ptr<SchedulingService> scheduling_;
  std::unique_ptr<Api> api_;
};

TEST_F(ApiSnapshotTest, NoSnapshotBeforeTheFirstRefresh) { EXPECT_EQ(api_->snapshot(), nullptr); }

TEST_F(ApiSnapshotTest, TheSnapshotListsTheJobsTheClusterAndTheRounds) {
  uint64_t a = Submit("a");
  uint64_t b = Submit("b");
  Poll();
  auto snap = Refreshed();
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(snap->taken_ms, 1'700'000'000'000);
  const Json& list = snap->jobs["jobs"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], a);
  EXPECT_EQ(list[0]["name"], "a");
  EXPECT_EQ(list[0]["state"], "running");
  EXPECT_EQ(list[1]["id"], b);
  ASSERT_EQ(snap->job.count(a), 1u);
  EXPECT_TRUE(snap->job.at(a)->live);
  EXPECT_EQ(snap->job.at(a)->status, jobs_->Document(jobs_->jobs().at(a)));
  // The cluster: both computers, their slots, the roots placed on them.
  EXPECT_EQ(snap->cluster["name"], "snap");
  EXPECT_EQ(snap->cluster["computers"], 2);
  EXPECT_EQ(snap->cluster["slots"], 4);
  EXPECT_EQ(snap->cluster["busy_slots"], 2) << snap->cluster.dump();
  ASSERT_EQ(snap->cluster["racks"].size(), 1u);
  EXPECT_EQ(snap->cluster["racks"][0]["computers"].size(), 2u);
  // The rounds that admitted them, on the wall clock: the manual steady
  // clock has not moved since, so they happened as the snapshot was taken.
  const Json& rounds = snap->scheduler["rounds"];
  ASSERT_FALSE(rounds.empty());
  EXPECT_EQ(rounds.size(), record_.rounds().size());
  EXPECT_EQ(rounds.back()["at_ms"], snap->taken_ms);
  size_t decisions = 0;
  for (const Json& r : rounds) decisions += r["decisions"].get<size_t>();
  EXPECT_GE(decisions, 2u) << "two roots were placed";
}

TEST_F(ApiSnapshotTest, AJobOverThatDidNotChangeKeepsItsViewAndALiveOneItsDocument) {
  uint64_t over = Submit("over");
  uint64_t live = Submit("live");
  Poll();
  ASSERT_TRUE(jobs_->Kill(over).ok());
  Poll();
  auto first = Refreshed();
  std::shared_ptr<const JobView> over_view = first->job.at(over);
  std::shared_ptr<const JobView> live_view = first->job.at(live);
  EXPECT_FALSE(over_view->live);
  EXPECT_EQ(over_view->status["state"], "killed");

  wall_.Advance(Duration{3'000'000});
  auto second = Refreshed();
  EXPECT_EQ(second->job.at(over), over_view) << "an unchanged job that is over was built again";
  // A live job that did not change keeps its document; its elapsed time moves.
  ASSERT_NE(second->job.at(live), live_view);
  EXPECT_DOUBLE_EQ(second->job.at(live)->status["elapsed_s"].get<double>(),
                   live_view->status["elapsed_s"].get<double>() + 3.0);
  Json without_elapsed = second->job.at(live)->status;
  Json before = live_view->status;
  without_elapsed.erase("elapsed_s");
  before.erase("elapsed_s");
  EXPECT_EQ(without_elapsed, before);
}

TEST_F(ApiSnapshotTest, AJobThatChangedIsDocumentedAgain) {
  uint64_t id = Submit("progress");
  Poll();
  auto first = Refreshed();
  uint64_t version = first->job.at(id)->version;
  jobs_->Progress(id, R"({"done": 1, "stages": []})");
  auto second = Refreshed();
  EXPECT_GT(second->job.at(id)->version, version);
  EXPECT_EQ(second->job.at(id)->status, jobs_->Document(jobs_->jobs().at(id)));
  EXPECT_NE(second->job.at(id)->status, first->job.at(id)->status);
}

}  // namespace
}  // namespace copse::master

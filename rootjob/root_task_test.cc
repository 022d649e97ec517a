// A job's root driven through fakes of its parts: the test plays the master
// (welcomes, task ids, task events, answers to the job's end) with the frames
// it hands the root, answers the name service's questions from a table, and
// fires the root's timers itself. No socket is opened and no time passes; the
// io_context is never run (the root stops it when it is done).
#include "rootjob/root_task.h"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/net/message.h"
#include "common/net/testing/fake_link.h"
#include "common/task_messages.h"
#include "proto/scheduling.capnp.h"

namespace copse::rootjob {
namespace {

using Json = nlohmann::json;
using proto::SchedulingMessage;

const char* kRootConfig = R"(
[cluster]
name = "t"
data_root = "/tmp/unused"
[master]
port = 9000
worker_port_base = 9100
[[racks]]
name = "r0"
count = 2
slots = 2
)";

// One stage reading the two partitions of /in and writing /out.
const char* kSpec = R"({"name": "copy", "stages": [
    {"name": "s", "program": "true", "inputs": [{"file": "/in"}], "output": "/out"}]})";

using net::testing::FakeLink;
using net::testing::FakeTimer;

class FakeFiles final : public RootFiles {
 public:
  Result<dfs::FileStatus> Stat(const std::string& path) override {
    ++stats;
    if (!stat_error.ok()) return stat_error;
    if (path != "/in") return NotFound(path);
    dfs::FileStatus st;
    st.path = path;
    for (int p = 0; p < 2; ++p) {
      dfs::PartitionLocation part;
      part.committed = true;
      part.size = 100;
      dfs::BlockLocation b;
      b.size = 100;
      b.replicas.push_back({dfs::Endpoint{replica_of[p], "r0", "", 0}, true});
      part.blocks.push_back(b);
      st.partitions.push_back(part);
    }
    return st;
  }
  Status Create(const std::string& path, const dfs::CreateOptions& o) override {
    created.push_back({path, o.partitions});
    return Status::Ok();
  }
  Result<int> DeleteJobScratch(const std::string& job) override {
    scratch_deleted.push_back(job);
    return 0;
  }
  Status stat_error;
  int stats = 0;
  std::vector<std::string> replica_of;
  std::vector<std::pair<std::string, int>> created;
  std::vector<std::string> scratch_deleted;
};

net::Frame Frame(capnp::MallocMessageBuilder& msg) {
  return net::Frame{net::Protocol::kScheduling, net::PayloadKind::kMessage, EncodeScheduling(msg)};
}

class RootTaskTest : public ::testing::Test {
 protected:
  RootTaskTest() : config_(*ParseClusterConfig(kRootConfig, "/etc/t.toml")) {
    files_.replica_of = {config_.computers[0].name, config_.computers[1].name};
    options_.job = 5;
    options_.incarnation = 1;
    options_.task = 9;
    options_.computer = config_.computers[0].name;
    root_ = std::make_unique<RootTask>(
        io_, config_, options_, clock_,
        RootTask::Parts{link_, files_, tick_, over_retry_, setup_retry_});
    root_->Start();
  }

  // What the root sent, decoded; `i` counts from the first message.
  SchedulingMessage::Reader Sent(size_t i) {
    EXPECT_EQ(link_.sent.at(i).protocol, net::Protocol::kScheduling);
    // The reader reads the frame's bytes in place: a copy is kept with it.
    frames_.push_back(link_.sent.at(i));
    auto reader = net::DecodeMessage(frames_.back());
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    readers_.push_back(std::move(reader).value());
    return readers_.back()->getRoot<SchedulingMessage>();
  }
  std::vector<SchedulingMessage::Which> Kinds() {
    std::vector<SchedulingMessage::Which> out;
    for (size_t i = 0; i < link_.sent.size(); ++i) out.push_back(Sent(i).which());
    return out;
  }

  void Welcome(const std::vector<std::pair<uint64_t, proto::TaskStateOnMaster>>& tasks = {}) {
    capnp::MallocMessageBuilder msg;
    auto w = msg.initRoot<SchedulingMessage>().initRootWelcome();
    w.setSpec(kSpec);
    w.setJobName("copy");
    auto list = w.initTasks(static_cast<unsigned>(tasks.size()));
    for (unsigned i = 0; i < tasks.size(); ++i) {
      list[i].setTaskId(tasks[i].first);
      list[i].setState(tasks[i].second);
    }
    root_->OnLinkFrame(Frame(msg));
  }
  void TaskIds(const std::vector<uint64_t>& ids) {
    capnp::MallocMessageBuilder msg;
    auto list = msg.initRoot<SchedulingMessage>().initSubmitTasksReply().initTaskIds(
        static_cast<unsigned>(ids.size()));
    for (unsigned i = 0; i < ids.size(); ++i) list.set(i, ids[i]);
    root_->OnLinkFrame(Frame(msg));
  }
  void Event(uint64_t task, TaskEventKind kind, const std::string& computer) {
    TaskEvent e;
    e.task = task;
    e.kind = kind;
    e.attempt = 1;
    e.computer = computer;
    e.exit_code = kind == TaskEventKind::kCompleted ? 0 : -1;
    e.result = kind == TaskEventKind::kCompleted ? "{}" : "";
    capnp::MallocMessageBuilder msg;
    WriteEvent(msg.initRoot<SchedulingMessage>().initTaskEvent(), e);
    root_->OnLinkFrame(Frame(msg));
  }
  void Error(const Status& s) {
    std::vector<uint8_t> payload = EncodeSchedError(s);
    root_->OnLinkFrame(
        net::Frame{net::Protocol::kScheduling, net::PayloadKind::kMessage, std::move(payload)});
  }
  void OverReply() {
    capnp::MallocMessageBuilder msg;
    msg.initRoot<SchedulingMessage>().initJobOverReply();
    root_->OnLinkFrame(Frame(msg));
  }

  // Hello, welcome, both vertices submitted and given ids 11 and 12.
  void Running() {
    root_->OnLinkOpen("master:9000");
    Welcome();
    TaskIds({11, 12});
    link_.sent.clear();
  }

  ClusterConfig config_;
  asio::io_context io_;
  ManualClock clock_{Timestamp{1'000'000}};
  FakeLink link_;
  FakeFiles files_;
  FakeTimer tick_, over_retry_, setup_retry_;
  RootOptions options_;
  std::unique_ptr<RootTask> root_;
  std::deque<net::Frame> frames_;
  std::vector<std::unique_ptr<capnp::FlatArrayMessageReader>> readers_;
};

TEST_F(RootTaskTest, SaysHelloAndSendsNothingElseBeforeAWelcome) {
  EXPECT_TRUE(link_.started);
  root_->OnLinkOpen("master:9000");
  ASSERT_EQ(link_.sent.size(), 1u);
  auto m = Sent(0);
  ASSERT_EQ(m.which(), SchedulingMessage::ROOT_HELLO);
  EXPECT_EQ(m.getRootHello().getJobId(), 5u);
  EXPECT_EQ(m.getRootHello().getIncarnation(), 1u);
  EXPECT_EQ(m.getRootHello().getTaskId(), 9u);
  EXPECT_EQ(m.getRootHello().getLiveTasks().size(), 0u);
  EXPECT_EQ(files_.stats, 0) << "the job was set up before the master welcomed its root";
  EXPECT_FALSE(tick_.pending);
}

TEST_F(RootTaskTest, AWelcomeSetsTheJobUpAndSubmitsItsVerticesWhereTheirInputIs) {
  root_->OnLinkOpen("master:9000");
  Welcome();
  EXPECT_EQ(files_.scratch_deleted, std::vector<std::string>{"5"});
  EXPECT_EQ(files_.created, (std::vector<std::pair<std::string, int>>{{"/out", 2}}));
  // The submission, then the first progress report.
  ASSERT_EQ(Kinds(), (std::vector<SchedulingMessage::Which>{SchedulingMessage::ROOT_HELLO,
                                                            SchedulingMessage::SUBMIT_TASKS,
                                                            SchedulingMessage::JOB_PROGRESS}));
  auto tasks = Sent(1).getSubmitTasks().getTasks();
  ASSERT_EQ(tasks.size(), 2u);
  for (unsigned i = 0; i < 2; ++i) {
    VertexTaskRequest t = ReadVertexTask(tasks[i]);
    EXPECT_EQ(t.program, "true");
    // Each vertex reads its partition, whose one replica is on computer i.
    ASSERT_FALSE(t.locality.computers.empty()) << t.label;
    EXPECT_EQ(t.locality.computers[0].name, config_.computers[i].name) << t.label;
  }
  ASSERT_EQ(tick_.armed, std::vector<Duration>{options_.tick});
}

TEST_F(RootTaskTest, AJobWhoseVerticesCompleteEndsOnceTheMasterRecordedIt) {
  Running();
  for (uint64_t task : {11u, 12u}) {
    Event(task, TaskEventKind::kStarted, config_.computers[0].name);
    Event(task, TaskEventKind::kCompleted, config_.computers[0].name);
  }
  std::vector<SchedulingMessage::Which> kinds = Kinds();
  ASSERT_FALSE(kinds.empty());
  ASSERT_EQ(kinds.back(), SchedulingMessage::JOB_OVER);
  auto over = Sent(link_.sent.size() - 1).getJobOver();
  EXPECT_TRUE(over.getSucceeded());
  EXPECT_EQ(Json::parse(over.getProgress().cStr())["done"], 2);
  EXPECT_FALSE(io_.stopped());
  OverReply();
  EXPECT_EQ(root_->exit_code(), 0);
  EXPECT_TRUE(link_.stopped);
  EXPECT_TRUE(io_.stopped());
}

TEST_F(RootTaskTest, ARefusalFromTheMasterMakesTheRootGiveUp) {
  root_->OnLinkOpen("master:9000");
  Error(FailedPrecondition("job 5 runs as incarnation 2 with root task 9"));
  EXPECT_EQ(root_->exit_code(), 1);
  EXPECT_TRUE(link_.stopped);
  EXPECT_TRUE(io_.stopped());
}

TEST_F(RootTaskTest, AnEndTheMasterCouldNotRecordIsSentAgainAfterAWhile) {
  Running();
  for (uint64_t task : {11u, 12u}) {
    Event(task, TaskEventKind::kStarted, config_.computers[0].name);
    Event(task, TaskEventKind::kCompleted, config_.computers[0].name);
  }
  link_.sent.clear();
  Error(ResourceExhausted("no space on the master"));
  EXPECT_TRUE(link_.sent.empty());
  EXPECT_FALSE(io_.stopped()) << "a retryable refusal of the end made the root give up";
  ASSERT_EQ(over_retry_.armed, std::vector<Duration>{options_.over_retry});
  over_retry_.Fire();
  EXPECT_EQ(Kinds(), std::vector<SchedulingMessage::Which>{SchedulingMessage::JOB_OVER});
  OverReply();
  EXPECT_EQ(root_->exit_code(), 0);
}

TEST_F(RootTaskTest, AfterALostConnectionTheRootNamesItsLiveTasksAndResubmitsTheUnknown) {
  Running();
  Event(11, TaskEventKind::kStarted, config_.computers[0].name);
  Event(12, TaskEventKind::kStarted, config_.computers[1].name);
  root_->OnLinkClose(Unavailable("connection reset"));
  link_.sent.clear();
  root_->OnLinkOpen("master:9000");
  ASSERT_EQ(link_.sent.size(), 1u);
  auto live = Sent(0).getRootHello().getLiveTasks();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0], 11u);
  EXPECT_EQ(live[1], 12u);
  // The restarted master knows 11 and not 12: 12's vertex runs again.
  Welcome({{11, proto::TaskStateOnMaster::RUNNING}, {12, proto::TaskStateOnMaster::UNKNOWN}});
  ASSERT_EQ(link_.sent.size(), 2u);
  auto again = Sent(1);
  ASSERT_EQ(again.which(), SchedulingMessage::SUBMIT_TASKS);
  ASSERT_EQ(again.getSubmitTasks().getTasks().size(), 1u);
  EXPECT_EQ(ReadVertexTask(again.getSubmitTasks().getTasks()[0]).locality.computers.at(0).name,
            config_.computers[1].name);
  EXPECT_EQ(files_.stats, 1) << "the job was set up again";
}

TEST_F(RootTaskTest, TheTickSendsProgress) {
  Running();
  tick_.Fire();
  EXPECT_EQ(Kinds(), std::vector<SchedulingMessage::Which>{SchedulingMessage::JOB_PROGRESS});
  Json p = Json::parse(Sent(0).getJobProgress().getJson().cStr());
  EXPECT_EQ(p["done"], 0);
  EXPECT_EQ(p["stages"][0]["submitted"], 2);
  EXPECT_EQ(tick_.armed, (std::vector<Duration>{options_.tick, options_.tick}));
}

TEST_F(RootTaskTest, AStartThatMetTheMasterGoneIsTriedAgain) {
  files_.stat_error = Unavailable("the master is not answering");
  root_->OnLinkOpen("master:9000");
  Welcome();
  EXPECT_EQ(Kinds(), std::vector<SchedulingMessage::Which>{SchedulingMessage::ROOT_HELLO});
  ASSERT_EQ(setup_retry_.armed, std::vector<Duration>{options_.over_retry});
  files_.stat_error = Status::Ok();
  setup_retry_.Fire();
  EXPECT_EQ(Kinds(), (std::vector<SchedulingMessage::Which>{SchedulingMessage::ROOT_HELLO,
                                                            SchedulingMessage::SUBMIT_TASKS,
                                                            SchedulingMessage::JOB_PROGRESS}));
}

TEST_F(RootTaskTest, AJobThatCannotStartFailsSayingWhy) {
  files_.stat_error = NotFound("no file /in");
  root_->OnLinkOpen("master:9000");
  Welcome();
  ASSERT_EQ(Kinds(), (std::vector<SchedulingMessage::Which>{SchedulingMessage::ROOT_HELLO,
                                                            SchedulingMessage::JOB_OVER}));
  auto over = Sent(1).getJobOver();
  EXPECT_FALSE(over.getSucceeded());
  EXPECT_NE(std::string(over.getReason().cStr()).find("no file /in"), std::string::npos);
}

}  // namespace
}  // namespace copse::rootjob

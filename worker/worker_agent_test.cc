// The worker's agent driven through fakes of its link to the master and of
// its heartbeat timer: the test plays the master's part with the messages it
// sends (register replies, heartbeat replies) and fires the timer, so no
// socket is opened and no time passes.
#include "worker/worker_agent.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/net/message.h"
#include "common/net/testing/fake_link.h"
#include "proto/cluster.capnp.h"
#include "proto/scheduling.capnp.h"

namespace copse::worker {
namespace {

using namespace std::chrono_literals;

const char* kAgentConfig = R"(
[cluster]
name = "t"
data_root = "/tmp/unused"
heartbeat_interval_ms = 400
[master]
port = 9000
worker_port_base = 9100
[[racks]]
name = "r0"
count = 2
slots = 3
)";

using net::testing::FakeLink;
using net::testing::FakeTimer;

// The cluster messages `link` sent so far, by kind.
std::vector<proto::ClusterMessage::Which> Kinds(const FakeLink& link) {
  std::vector<proto::ClusterMessage::Which> out;
  for (const net::Frame& f : link.sent) {
    if (f.protocol != net::Protocol::kCluster) continue;
    auto reader = net::DecodeMessage(f);
    EXPECT_TRUE(reader.ok());
    if (reader.ok()) out.push_back((*reader)->getRoot<proto::ClusterMessage>().which());
  }
  return out;
}

class RecordingPart final : public WorkerAgent::Part {
 public:
  void OnRegistered() override { ++registered; }
  Status OnMasterFrame(const net::Frame& frame) override {
    frames.push_back(frame.protocol);
    return Status::Ok();
  }
  int registered = 0;
  std::vector<net::Protocol> frames;
};

net::Frame ClusterFrame(capnp::MallocMessageBuilder& msg) {
  return net::Frame{net::Protocol::kCluster, net::PayloadKind::kMessage, net::EncodeMessage(msg)};
}

net::Frame RegisterReply(bool accepted, const std::string& reason, uint32_t interval_ms) {
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<proto::ClusterMessage>().initRegisterReply();
  r.setAccepted(accepted);
  r.setReason(reason);
  r.setHeartbeatIntervalMs(interval_ms);
  return ClusterFrame(msg);
}

net::Frame HeartbeatReply(bool reregister) {
  capnp::MallocMessageBuilder msg;
  msg.initRoot<proto::ClusterMessage>().initHeartbeatReply().setReregister(reregister);
  return ClusterFrame(msg);
}

class WorkerAgentTest : public ::testing::Test {
 protected:
  WorkerAgentTest()
      : config_(*ParseClusterConfig(kAgentConfig, "/etc/t.toml")),
        agent_(config_, config_.computers.at(0), /*incarnation=*/77, link_, timer_,
               [this](const Status& s) { fatal_ = s; }) {
    agent_.AddPart(net::Protocol::kScheduling, &part_);
    agent_.set_busy_slots([this] { return busy_; });
    agent_.Start();
  }

  // Connects and has the master accept the registration.
  void Register(uint32_t interval_ms) {
    agent_.OnLinkOpen("master:9000");
    agent_.OnLinkFrame(RegisterReply(true, "", interval_ms));
    ASSERT_TRUE(agent_.registered());
    link_.sent.clear();
  }

  proto::ClusterMessage::Reader Sent(size_t i) {
    auto reader = net::DecodeMessage(link_.sent.at(i));
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    readers_.push_back(std::move(reader).value());
    return readers_.back()->getRoot<proto::ClusterMessage>();
  }

  ClusterConfig config_;
  FakeLink link_;
  FakeTimer timer_;
  RecordingPart part_;
  int busy_ = 0;
  std::optional<Status> fatal_;
  std::vector<std::unique_ptr<capnp::FlatArrayMessageReader>> readers_;
  WorkerAgent agent_;
};

TEST_F(WorkerAgentTest, AnOpenedLinkRegistersThisComputer) {
  EXPECT_TRUE(link_.started);
  agent_.OnLinkOpen("master:9000");
  ASSERT_EQ(link_.sent.size(), 1u);
  auto r = Sent(0);
  ASSERT_EQ(r.which(), proto::ClusterMessage::REGISTER);
  auto reg = r.getRegister();
  const ComputerConfig& c = config_.computers.at(0);
  EXPECT_EQ(std::string(reg.getComputer().cStr()), c.name);
  EXPECT_EQ(std::string(reg.getRack().cStr()), c.rack);
  EXPECT_EQ(reg.getSlots(), 3u);
  EXPECT_EQ(reg.getIncarnation(), 77u);
  EXPECT_EQ(reg.getProtocolVersion(), proto::SCHEDULING_PROTOCOL_VERSION);
  EXPECT_FALSE(agent_.registered());
  EXPECT_TRUE(timer_.armed.empty()) << "heartbeats before the master accepted";
  EXPECT_FALSE(agent_.Send(net::Protocol::kScheduling, {1, 2}));
}

TEST_F(WorkerAgentTest, AnAcceptedRegistrationTellsThePartsAndLetsThemSend) {
  Register(500);
  EXPECT_EQ(part_.registered, 1);
  EXPECT_TRUE(agent_.Send(net::Protocol::kScheduling, {1, 2}));
  ASSERT_EQ(link_.sent.size(), 1u);
  EXPECT_EQ(link_.sent[0].protocol, net::Protocol::kScheduling);
  agent_.OnLinkFrame(net::Frame{net::Protocol::kScheduling, net::PayloadKind::kMessage, {}});
  EXPECT_EQ(part_.frames, std::vector<net::Protocol>{net::Protocol::kScheduling});
  EXPECT_TRUE(link_.closed.empty());
  // A protocol no part serves closes the connection.
  agent_.OnLinkFrame(net::Frame{net::Protocol::kDfs, net::PayloadKind::kMessage, {}});
  ASSERT_EQ(link_.closed.size(), 1u);
  EXPECT_EQ(link_.closed[0].code(), StatusCode::kInvalidArgument);
}

TEST_F(WorkerAgentTest, ARefusedRegistrationIsFatal) {
  agent_.OnLinkOpen("master:9000");
  agent_.OnLinkFrame(RegisterReply(false, "no computer c9 in the cluster config", 500));
  ASSERT_TRUE(fatal_.has_value());
  EXPECT_EQ(fatal_->code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(fatal_->message().find("no computer c9 in the cluster config"), std::string::npos)
      << fatal_->message();
  EXPECT_TRUE(link_.stopped) << "the agent kept trying";
  EXPECT_FALSE(agent_.registered());
  EXPECT_FALSE(timer_.pending);
  EXPECT_EQ(part_.registered, 0);
}

TEST_F(WorkerAgentTest, HeartbeatsGoAtTheIntervalTheMasterGave) {
  Register(250);
  ASSERT_EQ(timer_.armed, std::vector<Duration>{250ms});
  busy_ = 2;
  timer_.Fire();
  ASSERT_EQ(link_.sent.size(), 1u);
  auto hb = Sent(0);
  ASSERT_EQ(hb.which(), proto::ClusterMessage::HEARTBEAT);
  EXPECT_EQ(hb.getHeartbeat().getIncarnation(), 77u);
  EXPECT_EQ(hb.getHeartbeat().getBusySlots(), 2u);
  EXPECT_EQ(timer_.armed, (std::vector<Duration>{250ms, 250ms}));
  timer_.Fire();
  EXPECT_EQ(Kinds(link_), (std::vector<proto::ClusterMessage::Which>{
                              proto::ClusterMessage::HEARTBEAT, proto::ClusterMessage::HEARTBEAT}));
}

TEST_F(WorkerAgentTest, AMasterThatGivesNoIntervalLeavesTheConfigs) {
  Register(0);
  EXPECT_EQ(timer_.armed, std::vector<Duration>{400ms});
}

TEST_F(WorkerAgentTest, AHeartbeatReplyAskingToRegisterRegistersAgain) {
  Register(250);
  timer_.Fire();
  agent_.OnLinkFrame(HeartbeatReply(false));
  EXPECT_TRUE(agent_.registered());
  link_.sent.clear();
  agent_.OnLinkFrame(HeartbeatReply(true));
  EXPECT_FALSE(agent_.registered());
  EXPECT_FALSE(timer_.pending) << "heartbeats go on while unregistered";
  EXPECT_EQ(Kinds(link_),
            std::vector<proto::ClusterMessage::Which>{proto::ClusterMessage::REGISTER});
  agent_.OnLinkFrame(RegisterReply(true, "", 250));
  EXPECT_TRUE(agent_.registered());
  EXPECT_EQ(part_.registered, 2);
  EXPECT_TRUE(timer_.pending);
}

TEST_F(WorkerAgentTest, LosingTheConnectionStopsHeartbeatsUntilRegisteredAgain) {
  Register(250);
  link_.connected = false;
  agent_.OnLinkClose(Unavailable("connection reset by peer"));
  EXPECT_FALSE(agent_.registered());
  EXPECT_FALSE(timer_.pending);
  EXPECT_FALSE(agent_.Send(net::Protocol::kScheduling, {1}));
  EXPECT_FALSE(fatal_.has_value()) << "a lost connection is not fatal";
  EXPECT_FALSE(link_.stopped) << "the link stopped reconnecting";
  // The link connects again: the agent registers anew.
  link_.connected = true;
  agent_.OnLinkOpen("master:9000");
  EXPECT_EQ(Kinds(link_),
            std::vector<proto::ClusterMessage::Which>{proto::ClusterMessage::REGISTER});
}

}  // namespace
}  // namespace copse::worker

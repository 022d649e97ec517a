#include "master/cluster_manager.h"

#include <gtest/gtest.h>

#include "dfs/meta_store.h"

namespace copse::master {
namespace {

using std::chrono::milliseconds;

const char* kConfig = R"(
[cluster]
name = "t"
data_root = "/tmp/unused"
heartbeat_interval_ms = 100
worker_timeout_ms = 1000
[master]
port = 9000
worker_port_base = 9100
[[racks]]
name = "r0"
count = 2
[[racks]]
name = "r1"
count = 1
slots = 2
)";

class Recorder : public MembershipListener {
 public:
  void OnComputerUp(const std::string& c) override { events.push_back("up " + c); }
  void OnComputerDown(const std::string& c) override { events.push_back("down " + c); }
  void OnComputerDraining(const std::string& c, bool draining, bool move) override {
    events.push_back((draining ? "drain " : "undrain ") + c + (move ? " now" : ""));
  }
  std::vector<std::string> events;
};

class ClusterManagerTest : public ::testing::Test {
 protected:
  ClusterManagerTest()
      : config_(*ParseClusterConfig(kConfig, "/etc/t.toml")), cm_(config_, config_.worker_timeout) {
    cm_.AddListener(&rec_);
  }

  WorkerRegistration Reg(const std::string& name, uint32_t pid = 100) {
    const ComputerConfig* c = config_.FindComputer(name);
    return {name, c ? c->rack : "r0", c ? c->slots : 1, "127.0.0.1", 1, 2, pid, pid, "peer"};
  }

  ComputerState StateOf(const std::string& name) {
    for (const ComputerView& v : cm_.Snapshot(clock_.Now()))
      if (v.name == name) return v.state;
    return ComputerState::kUnknown;
  }

  ClusterConfig config_;
  ClusterManager cm_;
  ManualClock clock_;
  Recorder rec_;
};

TEST_F(ClusterManagerTest, RegistersKnownComputers) {
  EXPECT_EQ(StateOf("r0-c00"), ComputerState::kUnknown);
  auto d = cm_.Register(1, Reg("r0-c00"), clock_.Now());
  EXPECT_TRUE(d.accepted) << d.reason;
  EXPECT_EQ(StateOf("r0-c00"), ComputerState::kLive);
  EXPECT_EQ(cm_.LiveCount(), 1);
  EXPECT_EQ(rec_.events, std::vector<std::string>{"up r0-c00"});
}

TEST_F(ClusterManagerTest, RefusesUnknownComputer) {
  auto d = cm_.Register(1, Reg("nosuch"), clock_.Now());
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("not in this cluster's config (/etc/t.toml)"), std::string::npos);
  EXPECT_EQ(cm_.LiveCount(), 0);
}

TEST_F(ClusterManagerTest, RefusesMismatchedRackOrSlots) {
  WorkerRegistration r = Reg("r1-c00");
  r.slots = 1;
  auto d = cm_.Register(1, r, clock_.Now());
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("different configs"), std::string::npos);
}

TEST_F(ClusterManagerTest, RefusesWorkerOfAnotherProtocolVersion) {
  ClusterManager versioned(config_, config_.worker_timeout, 7);
  WorkerRegistration r = Reg("r0-c00");
  r.protocol_version = 6;
  auto d = versioned.Register(1, r, clock_.Now());
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("speaks scheduling protocol version 6, this master version 7"),
            std::string::npos)
      << d.reason;
  r.protocol_version = 7;
  EXPECT_TRUE(versioned.Register(1, r, clock_.Now()).accepted);
}

TEST_F(ClusterManagerTest, EveryListenerHearsInOrder) {
  Recorder second;
  cm_.AddListener(&second);
  ASSERT_TRUE(cm_.Register(1, Reg("r0-c00"), clock_.Now()).accepted);
  EXPECT_EQ(rec_.events, std::vector<std::string>{"up r0-c00"});
  EXPECT_EQ(second.events, std::vector<std::string>{"up r0-c00"});
}

TEST_F(ClusterManagerTest, RefusesSecondLiveWorkerForSameComputer) {
  ASSERT_TRUE(cm_.Register(1, Reg("r0-c01", 11), clock_.Now()).accepted);
  auto d = cm_.Register(2, Reg("r0-c01", 22), clock_.Now());
  EXPECT_FALSE(d.accepted);
  EXPECT_NE(d.reason.find("already served by a live worker (pid 11"), std::string::npos);
  // Once the first worker's connection is gone, a new worker may take over.
  cm_.SessionClosed(1);
  EXPECT_TRUE(cm_.Register(2, Reg("r0-c01", 22), clock_.Now()).accepted);
  EXPECT_EQ(rec_.events, std::vector<std::string>{"up r0-c01"});  // stayed live throughout
}

TEST_F(ClusterManagerTest, HeartbeatsKeepAComputerLive) {
  ASSERT_TRUE(cm_.Register(1, Reg("r0-c00"), clock_.Now()).accepted);
  for (int i = 0; i < 30; ++i) {
    clock_.Advance(milliseconds(500));
    EXPECT_TRUE(cm_.Heartbeat(1, 0, clock_.Now()));
    EXPECT_TRUE(cm_.CheckTimeouts(clock_.Now()).empty());
  }
  EXPECT_EQ(StateOf("r0-c00"), ComputerState::kLive);
}

TEST_F(ClusterManagerTest, SilentComputerDiesAfterTimeoutAndComesBackOnRegister) {
  ASSERT_TRUE(cm_.Register(1, Reg("r0-c00"), clock_.Now()).accepted);
  ASSERT_TRUE(cm_.Register(2, Reg("r0-c01"), clock_.Now()).accepted);
  clock_.Advance(milliseconds(600));
  EXPECT_TRUE(cm_.Heartbeat(2, 0, clock_.Now()));
  clock_.Advance(milliseconds(400));  // exactly the timeout: not yet
  EXPECT_TRUE(cm_.CheckTimeouts(clock_.Now()).empty());
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(cm_.CheckTimeouts(clock_.Now()), std::vector<std::string>{"r0-c00"});
  EXPECT_EQ(StateOf("r0-c00"), ComputerState::kDead);
  EXPECT_EQ(StateOf("r0-c01"), ComputerState::kLive);
  // A late heartbeat from the dead worker is told to register again.
  EXPECT_FALSE(cm_.Heartbeat(1, 0, clock_.Now()));
  ASSERT_TRUE(cm_.Register(1, Reg("r0-c00"), clock_.Now()).accepted);
  EXPECT_EQ(StateOf("r0-c00"), ComputerState::kLive);
  EXPECT_EQ(rec_.events,
            (std::vector<std::string>{"up r0-c00", "up r0-c01", "down r0-c00", "up r0-c00"}));
}

TEST_F(ClusterManagerTest, StalledWorkerIsReplacedAfterItDies) {
  ASSERT_TRUE(cm_.Register(1, Reg("r0-c00", 11), clock_.Now()).accepted);
  clock_.Advance(milliseconds(2000));
  ASSERT_EQ(cm_.CheckTimeouts(clock_.Now()).size(), 1u);
  // Its connection is still open, but it is dead: a new worker may take over.
  ASSERT_TRUE(cm_.Register(2, Reg("r0-c00", 22), clock_.Now()).accepted);
  EXPECT_FALSE(cm_.Heartbeat(1, 0, clock_.Now()));
  EXPECT_TRUE(cm_.Heartbeat(2, 0, clock_.Now()));
  // The stalled one wakes up and tries again: refused, the new one is live.
  EXPECT_FALSE(cm_.Register(1, Reg("r0-c00", 11), clock_.Now()).accepted);
}

TEST_F(ClusterManagerTest, UnregisteredSessionHeartbeatAsksToRegister) {
  EXPECT_FALSE(cm_.Heartbeat(7, 0, clock_.Now()));
}

TEST_F(ClusterManagerTest, SnapshotReportsHeartbeatAgeAndBusySlots) {
  ASSERT_TRUE(cm_.Register(1, Reg("r1-c00", 5), clock_.Now()).accepted);
  clock_.Advance(milliseconds(250));
  ASSERT_TRUE(cm_.Heartbeat(1, 2, clock_.Now()));
  clock_.Advance(milliseconds(40));
  auto views = cm_.Snapshot(clock_.Now());
  ASSERT_EQ(views.size(), 3u);
  EXPECT_EQ(views[2].name, "r1-c00");
  EXPECT_EQ(views[2].last_heartbeat_ago_ms, 40);
  EXPECT_EQ(views[2].busy_slots, 2);
  EXPECT_EQ(views[2].pid, 5u);
  EXPECT_EQ(views[0].last_heartbeat_ago_ms, -1);
}

// Drains are told to listeners, refused for unknown names and for the last
// computer that would stay, kept in the store, and told to a listener added
// after a restart.
TEST_F(ClusterManagerTest, DrainsAreCheckedToldAndKept) {
  dfs::MemMetaStore store;
  ASSERT_TRUE(cm_.LoadDrains(store).ok());
  auto unknown = cm_.SetDraining("nosuch", true, false);
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("'nosuch' is not in this cluster's config"),
            std::string::npos);
  // Nothing is live: fewer live computers than the replication factor stay.
  auto first = cm_.SetDraining("r0-c00", true, false);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_NE(first->find("fewer than the replication factor"), std::string::npos) << *first;
  ASSERT_TRUE(cm_.SetDraining("r0-c00", true, true).ok());  // again, moving its tasks
  ASSERT_TRUE(cm_.SetDraining("r0-c01", true, false).ok());
  auto last = cm_.SetDraining("r1-c00", true, false);
  EXPECT_EQ(last.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(last.status().message().find("would leave no computer"), std::string::npos);
  EXPECT_TRUE(cm_.IsDraining("r0-c00"));
  EXPECT_FALSE(cm_.IsDraining("r1-c00"));
  ASSERT_TRUE(cm_.SetDraining("r0-c01", false, false).ok());
  ASSERT_TRUE(cm_.SetDraining("r0-c01", false, false).ok());  // not draining: nothing to tell
  EXPECT_EQ(rec_.events, (std::vector<std::string>{"drain r0-c00", "drain r0-c00 now",
                                                   "drain r0-c01", "undrain r0-c01"}));
  bool drained = false;
  for (const ComputerView& v : cm_.Snapshot(clock_.Now())) {
    if (v.name == "r0-c00") drained = v.draining;
    if (v.name != "r0-c00") {
      EXPECT_FALSE(v.draining) << v.name;
    }
  }
  EXPECT_TRUE(drained);

  // A restarted master drains r0-c00 still, and says so to its listeners.
  ClusterManager restarted(config_, config_.worker_timeout);
  ASSERT_TRUE(restarted.LoadDrains(store).ok());
  EXPECT_TRUE(restarted.IsDraining("r0-c00"));
  EXPECT_FALSE(restarted.IsDraining("r0-c01"));
  Recorder later;
  restarted.AddListener(&later);
  EXPECT_EQ(later.events, std::vector<std::string>{"drain r0-c00"});
}

}  // namespace
}  // namespace copse::master

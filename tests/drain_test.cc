// `copse cluster drain` and `undrain` on a real local cluster (six
// computers in two racks, replication 3): a drained computer gets no new
// task, its blocks are copied elsewhere before the command returns, so that
// killing its worker then loses nothing; undrained, it runs tasks again.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "tests/harness/cluster_fixture.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

// Words on lines, about `bytes` long.
std::string WordsOf(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out;
  while (out.size() < bytes) {
    for (int i = 0; i < 12; ++i) out += "w" + std::to_string(rng() % 500) + " ";
    out += "\n";
  }
  return out;
}

class DrainTest : public ClusterTest {
 protected:
  // The computer's entry in `copse cluster status --json`.
  json StatusOf(const std::string& computer) {
    CommandResult r = Copse({"cluster", "status", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return nullptr;
    const json st = json::parse(r.out);
    for (const json& c : st["computers"])
      if (c["name"] == computer) return c;
    return nullptr;
  }

  // Computers that ran a vertex (not the root) of `job`.
  std::set<std::string> VertexComputers(uint64_t job) {
    std::set<std::string> out;
    for (const json& run : History(job)) {
      if (!run["root"].get<bool>()) out.insert(run["computer"].get<std::string>());
    }
    return out;
  }
};

TEST_F(DrainTest, DrainedComputerGetsNoTasksAndLosesNoBlockWhenKilled) {
  // Files whose blocks c00 surely holds: written from c00, its first
  // replica of every block is there.
  const std::string words = WordsOf(3 << 20, 1);
  const std::string more = WordsOf(1 << 20, 2);
  std::filesystem::path local = Local("words.txt", words);
  ASSERT_EQ(
      Copse({"fs", "put", local.string(), "/in/words", "--partitions", "3", "--computer", "c00"})
          .exit_code,
      0);
  Put(Local("more.txt", more), "/in/more", 2);
  json before = StatusOf("c00");
  ASSERT_FALSE(before.is_null());
  EXPECT_FALSE(before["draining"].get<bool>());
  EXPECT_TRUE(before["sole_blocks"].is_null());

  CommandResult drain = Copse({"cluster", "drain", "c00", "--timeout", "90"});
  ASSERT_EQ(drain.exit_code, 0) << drain.out << drain.err;
  EXPECT_NE(drain.out.find("c00 holds no block that exists nowhere else"), std::string::npos)
      << drain.out;
  json st = StatusOf("c00");
  EXPECT_TRUE(st["draining"].get<bool>()) << st.dump();
  EXPECT_EQ(st["sole_blocks"], 0) << st.dump();
  CommandResult table = Copse({"cluster", "status"});
  EXPECT_NE(table.out.find("draining"), std::string::npos) << table.out;

  // A job run while it drains places nothing there.
  CommandResult run = Copse({"run", "wordcount", "--input", "/in/words", "--output", "/out/wc",
                             "--partitions", "2", "--wait"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  uint64_t job = IdOf(run);
  std::set<std::string> used = VertexComputers(job);
  EXPECT_FALSE(used.empty());
  EXPECT_EQ(used.count("c00"), 0u) << History(job).dump();
  const std::string counted = Cat("/out/wc");

  // Its worker killed, every file still reads back byte for byte.
  const int pid = WorkerPid("c00");
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        ReapChildren();
        return !ProcessAlive(pid);
      },
      seconds(10)));
  EXPECT_EQ(Cat("/in/words"), words);
  EXPECT_EQ(Cat("/in/more"), more);
  EXPECT_EQ(Cat("/out/wc"), counted);
  EXPECT_EQ(counted, CoreutilsWordCount(local));

  // Back up, it is still draining until undrained; then it runs tasks again.
  ASSERT_EQ(Copse({"cluster", "up"}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return StatusOf("c00")["state"] == "live"; }, seconds(20)));
  EXPECT_TRUE(StatusOf("c00")["draining"].get<bool>());
  CommandResult undrain = Copse({"cluster", "undrain", "c00"});
  ASSERT_EQ(undrain.exit_code, 0) << undrain.out << undrain.err;
  EXPECT_FALSE(StatusOf("c00")["draining"].get<bool>());
  // Eleven vertices and a root fill all twelve slots, c00's included.
  uint64_t hang = SubmitHanging(11, 5);
  json done = Wait(hang);
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(VertexComputers(hang).count("c00"), 1u) << History(hang).dump();
}

// With --now, the vertices running on the drained computer are stopped and
// run again elsewhere; the job still succeeds and nothing of it ends there.
TEST_F(DrainTest, DrainNowMovesRunningVerticesAndTheJobSucceeds) {
  // Four vertices and a root on twelve slots: there is room elsewhere.
  uint64_t job = SubmitHanging(4, 8);
  std::string victim;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const json& run : History(job)) {
          if (!run["root"].get<bool>() && run["state"] == "running") {
            victim = run["computer"];
            return true;
          }
        }
        return false;
      },
      seconds(60)))
      << History(job).dump();
  CommandResult drain = Copse({"cluster", "drain", victim, "--now", "--timeout", "60"});
  ASSERT_EQ(drain.exit_code, 0) << drain.out << drain.err;
  json done = Wait(job);
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  int stopped_there = 0;
  for (const json& run : History(job)) {
    if (run["root"].get<bool>() || run["computer"] != victim) continue;
    EXPECT_NE(run["state"], "completed")
        << "a vertex finished on the drained computer: " << History(job).dump();
    ++stopped_there;
  }
  EXPECT_GE(stopped_there, 1) << History(job).dump();
  EXPECT_TRUE(StatusOf(victim)["draining"].get<bool>());
}

TEST_F(DrainTest, BadComputerNamesExitTwoAndSayWhich) {
  for (const char* command : {"drain", "undrain"}) {
    CommandResult r = Copse({"cluster", command, "c99"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("computer 'c99' is not in the cluster config"), std::string::npos)
        << r.err;
  }
  CommandResult r = Copse({"cluster", "drain"});
  EXPECT_EQ(r.exit_code, 2) << r.err;  // no computer named
  EXPECT_FALSE(StatusOf("c00")["draining"].get<bool>());
}

}  // namespace
}  // namespace copse::testing

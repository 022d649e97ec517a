#include "dfs/replication.h"

#include <gtest/gtest.h>

namespace copse::dfs {
namespace {

std::vector<PlacementComputer> Computers(std::vector<std::string> names) {
  std::vector<PlacementComputer> out;
  for (const std::string& n : names) out.push_back({n, std::string("r") + n[1]});
  return out;
}

const std::vector<std::string> kAll = {"c00", "c01", "c02", "c10", "c11", "c12"};

ReplicationState StateWithout(const std::vector<std::string>& dead) {
  ReplicationState s;
  for (const std::string& c : kAll) {
    if (std::find(dead.begin(), dead.end(), c) != dead.end()) continue;
    s.live.push_back({c, std::string("r") + c[1]});
    s.counted.insert(c);
  }
  s.max_copies_per_computer = 100;
  return s;
}

ReplicatedBlock Block(BlockId id, std::vector<std::string> replicas, int replication = 3) {
  return {id, 100, replication, std::move(replicas), "", false};
}

TEST(ReplicationTest, NothingToDoWhenEveryBlockHasItsReplicas) {
  std::mt19937_64 rng(1);
  auto tasks = PlanCopies({Block(1, {"c00", "c10", "c11"})}, StateWithout({}), rng);
  EXPECT_TRUE(tasks.empty());
}

TEST(ReplicationTest, ReplicasOnRecentlyDeadComputersStillCount) {
  std::mt19937_64 rng(1);
  ReplicationState s = StateWithout({"c10"});
  s.counted.insert("c10");  // dead for less than the delay
  EXPECT_TRUE(PlanCopies({Block(1, {"c00", "c10", "c11"})}, s, rng).empty());
  s.counted.erase("c10");
  auto tasks = PlanCopies({Block(1, {"c00", "c10", "c11"})}, s, rng);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_NE(tasks[0].target, "c10");
  EXPECT_TRUE(tasks[0].source == "c00" || tasks[0].source == "c11");
}

TEST(ReplicationTest, FewestLiveReplicasFirst) {
  std::mt19937_64 rng(2);
  ReplicationState s = StateWithout({"c10", "c11"});
  s.max_copies_per_computer = 1;  // room for only a few copies
  std::vector<ReplicatedBlock> blocks = {Block(1, {"c00", "c01", "c10"}),
                                         Block(2, {"c02", "c10", "c11"})};
  auto tasks = PlanCopies(blocks, s, rng);
  ASSERT_FALSE(tasks.empty());
  EXPECT_EQ(tasks[0].block, 2u);  // one live replica left
  EXPECT_EQ(tasks[0].live_replicas, 1);
}

TEST(ReplicationTest, CopiesKeepTwoRacks) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::mt19937_64 rng(seed);
    // The only other-rack replica died: the copy goes to the other rack.
    auto tasks = PlanCopies({Block(1, {"c00", "c01", "c10"})}, StateWithout({"c10"}), rng);
    ASSERT_EQ(tasks.size(), 1u);
    EXPECT_EQ(tasks[0].target[1], '1') << tasks[0].target;
  }
}

TEST(ReplicationTest, SourcePrefersTheTargetsRack) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::mt19937_64 rng(seed);
    auto tasks = PlanCopies({Block(1, {"c00", "c10", "c11"})}, StateWithout({"c11"}), rng);
    ASSERT_EQ(tasks.size(), 1u);
    EXPECT_EQ(tasks[0].source[1], tasks[0].target[1]);
  }
}

TEST(ReplicationTest, InFlightCopiesAndAvoidedComputersAreRespected) {
  std::mt19937_64 rng(3);
  ReplicationState s = StateWithout({"c10", "c11"});
  s.in_flight[1] = {"c12"};
  auto tasks = PlanCopies({Block(1, {"c00", "c10", "c11"})}, s, rng);
  ASSERT_EQ(tasks.size(), 1u);  // one copy already under way
  EXPECT_NE(tasks[0].target, "c12");
  s.in_flight.clear();
  s.avoid[1] = {"c01", "c02"};
  tasks = PlanCopies({Block(1, {"c00", "c10", "c11"})}, s, rng);
  ASSERT_EQ(tasks.size(), 1u);  // only c12 qualifies
  EXPECT_EQ(tasks[0].target, "c12");
}

TEST(ReplicationTest, BusyComputersAreNotOverloaded) {
  std::mt19937_64 rng(4);
  ReplicationState s = StateWithout({"c10", "c11"});
  s.max_copies_per_computer = 1;
  std::vector<ReplicatedBlock> blocks;
  for (BlockId id = 1; id <= 5; ++id) blocks.push_back(Block(id, {"c00", "c10", "c11"}));
  auto tasks = PlanCopies(blocks, s, rng);
  // c00 is the only source and may send one copy at a time.
  ASSERT_EQ(tasks.size(), 1u);
  s.busy["c00"] = 1;
  EXPECT_TRUE(PlanCopies(blocks, s, rng).empty());
}

TEST(ReplicationTest, LostAndScratchBlocksAreNotCopied) {
  std::mt19937_64 rng(5);
  ReplicatedBlock scratch = Block(2, {"c00"}, 1);
  scratch.scratch = true;
  scratch.replicas.clear();
  auto tasks = PlanCopies({Block(1, {"c10", "c11"}), scratch}, StateWithout({"c10", "c11"}), rng);
  EXPECT_TRUE(tasks.empty());
}

TEST(ReplicationTest, ConfinedBlocksStayInTheirRack) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    std::mt19937_64 rng(seed);
    ReplicatedBlock b = Block(1, {"c10", "c11", "c12"});
    b.confine_rack = "r1";
    auto tasks = PlanCopies({b}, StateWithout({"c12"}), rng);
    EXPECT_TRUE(tasks.empty());  // no other computer in r1
    b.replication = 2;
    b.replicas = {"c10", "c12"};
    tasks = PlanCopies({b}, StateWithout({"c12"}), rng);
    ASSERT_EQ(tasks.size(), 1u);
    EXPECT_EQ(tasks[0].target, "c11");
  }
}

TEST(ReplicationTest, TrimsSurplusFromTheMostCrowdedRack) {
  auto usable = Computers(kAll);
  auto trims =
      PlanTrims({Block(1, {"c00", "c10", "c11", "c12"}), Block(2, {"c00", "c10", "c11"})}, usable);
  ASSERT_EQ(trims.size(), 1u);
  EXPECT_EQ(trims[0].block, 1u);
  EXPECT_EQ(trims[0].computer, "c12");  // r1 holds three; its newest copy goes
  // Two racks are kept even when the newest copy is the lone one elsewhere.
  trims = PlanTrims({Block(3, {"c00", "c01", "c02", "c10"})}, usable);
  ASSERT_EQ(trims.size(), 1u);
  EXPECT_EQ(trims[0].computer, "c02");
  // Replicas on computers that are not usable do not count.
  EXPECT_TRUE(PlanTrims({Block(4, {"c00", "c10", "c11", "c12"})}, Computers({"c00", "c10", "c11"}))
                  .empty());
}

// A drained computer's replicas do not count: its blocks are copied to
// computers that stay, rack-aware, the ones it alone holds first, from
// itself only when no other replica is live.
TEST(ReplicationTest, BlocksOfADrainingComputerAreCopiedElsewhere) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    std::mt19937_64 rng(seed);
    ReplicationState s = StateWithout({});
    s.draining = {"c00"};
    std::vector<ReplicatedBlock> blocks = {Block(1, {"c00", "c10"}, 2), Block(2, {"c00"}, 1),
                                           Block(3, {"c01", "c10"}, 2)};
    auto tasks = PlanCopies(blocks, s, rng);
    ASSERT_EQ(tasks.size(), 2u);
    EXPECT_EQ(tasks[0].block, 2u);  // no copy anywhere else: first
    EXPECT_EQ(tasks[0].source, "c00");
    EXPECT_EQ(tasks[1].block, 1u);
    EXPECT_EQ(tasks[1].source, "c10");  // a replica that stays is preferred
    // Block 1 keeps two racks: c10's copy is in r1, so the new one is in r0.
    EXPECT_TRUE(tasks[1].target == "c01" || tasks[1].target == "c02") << tasks[1].target;
    for (const CopyTask& t : tasks) EXPECT_NE(t.target, "c00");
    // Once copied, nothing more is planned.
    s.in_flight[1] = {tasks[1].target};
    s.in_flight[2] = {tasks[0].target};
    EXPECT_TRUE(PlanCopies(blocks, s, rng).empty());
  }
}

TEST(ReplicationTest, NoCopyGoesToADrainingComputer) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    std::mt19937_64 rng(seed);
    ReplicationState s = StateWithout({"c10"});
    s.counted.erase("c10");
    s.draining = {"c11", "c12"};  // r1's other computers are draining
    auto tasks = PlanCopies({Block(1, {"c00", "c10"}, 2)}, s, rng);
    ASSERT_EQ(tasks.size(), 1u);
    EXPECT_TRUE(tasks[0].target == "c01" || tasks[0].target == "c02") << tasks[0].target;
  }
}

TEST(ReplicationTest, TrimsNeverDropCopiesThatStayForOnesThatDrain) {
  auto usable = Computers(kAll);
  std::vector<ReplicatedBlock> blocks = {Block(1, {"c00", "c10", "c11"}, 2)};
  // c00 drains and r1 holds the two copies that count: nothing is trimmed,
  // not the draining copy (kept until the computer leaves) nor one that stays.
  EXPECT_TRUE(PlanTrims(blocks, usable, {"c00"}).empty());
  // Undrained, c00's copy counts again and r1's surplus goes.
  auto trims = PlanTrims(blocks, usable, {});
  ASSERT_EQ(trims.size(), 1u);
  EXPECT_EQ(trims[0].computer, "c11");
}

}  // namespace
}  // namespace copse::dfs

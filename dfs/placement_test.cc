#include "dfs/placement.h"

#include <gtest/gtest.h>

#include <map>

namespace copse::dfs {
namespace {

// Two racks of three computers: c00-c02 in r0, c10-c12 in r1.
std::vector<PlacementComputer> TwoRacks() {
  std::vector<PlacementComputer> out;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      out.push_back({"c" + std::to_string(r) + std::to_string(c), "r" + std::to_string(r)});
  return out;
}

std::string RackOf(const std::string& computer) { return "r" + computer.substr(1, 1); }

TEST(PlacementTest, ParsesAndPrintsModes) {
  for (const char* text : {"writer", "random", "colocate /data/a", "confine 5 r1"}) {
    auto m = ParsePlacementMode(text);
    ASSERT_TRUE(m.ok()) << text << ": " << m.status().ToString();
    EXPECT_EQ(m->ToString(), text);
  }
  auto c = ParsePlacementMode("confine:2:r0");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->confine_count, 2);
  EXPECT_EQ(c->confine_rack, "r0");
  auto path = ParsePlacementMode("colocate:/a:b");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->colocate_path, "/a:b");
  for (const char* bad : {"", "sideways", "confine", "confine x r1", "confine 0 r1", "confine 2",
                          "colocate", "random 3"}) {
    auto m = ParsePlacementMode(bad);
    EXPECT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(PlacementTest, WriterModeFollowsHdfsDefaultPolicy) {
  auto live = TwoRacks();
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 rng(seed);
    PlacementRequest req;
    req.writer = seed % 2 ? "c01" : "c12";
    req.partitions = 3;
    auto sets = PlaceFile(live, req, rng);
    ASSERT_TRUE(sets.ok());
    for (const auto& set : *sets) {
      ASSERT_EQ(set.size(), 3u);
      EXPECT_EQ(set[0], req.writer);
      EXPECT_NE(RackOf(set[1]), RackOf(set[0])) << "second replica in another rack";
      EXPECT_EQ(RackOf(set[2]), RackOf(set[1])) << "third in the second's rack";
      EXPECT_NE(set[2], set[1]);
    }
  }
}

TEST(PlacementTest, WriterOutsideTheClusterGetsARandomFirstReplica) {
  auto live = TwoRacks();
  std::map<std::string, int> first;
  std::mt19937_64 rng(1);
  PlacementRequest req;
  req.partitions = 600;
  auto sets = PlaceFile(live, req, rng);
  ASSERT_TRUE(sets.ok());
  for (const auto& set : *sets) first[set[0]]++;
  ASSERT_EQ(first.size(), 6u);
  for (const auto& [c, n] : first) {
    EXPECT_GT(n, 60) << c;
    EXPECT_LT(n, 140) << c;
  }
}

TEST(PlacementTest, RandomModeIgnoresTheWriter) {
  auto live = TwoRacks();
  std::mt19937_64 rng(2);
  PlacementRequest req;
  req.mode.kind = PlacementMode::Kind::kRandom;
  req.writer = "c00";
  req.partitions = 60;
  auto sets = PlaceFile(live, req, rng);
  ASSERT_TRUE(sets.ok());
  std::set<std::string> firsts;
  for (const auto& set : *sets) {
    firsts.insert(set[0]);
    EXPECT_NE(RackOf(set[1]), RackOf(set[0]));
  }
  EXPECT_GT(firsts.size(), 3u);
}

TEST(PlacementTest, SameSeedSamePlacement) {
  auto live = TwoRacks();
  PlacementRequest req;
  req.mode.kind = PlacementMode::Kind::kRandom;
  req.partitions = 20;
  std::mt19937_64 a(42), b(42);
  EXPECT_EQ(*PlaceFile(live, req, a), *PlaceFile(live, req, b));
}

TEST(PlacementTest, NotEnoughComputersForTheReplication) {
  auto live = TwoRacks();
  live.resize(2);
  std::mt19937_64 rng(3);
  PlacementRequest req;
  auto r = PlaceFile(live, req, rng);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(),
            "not enough computers for the requested replication: 3 replicas need 3 live "
            "computers, 2 are live");
  req.replication = 2;
  EXPECT_TRUE(PlaceFile(live, req, rng).ok());
}

TEST(PlacementTest, OneRackStillGivesDistinctComputers) {
  std::vector<PlacementComputer> live = {{"a", "r"}, {"b", "r"}, {"c", "r"}};
  std::mt19937_64 rng(4);
  PlacementRequest req;
  req.writer = "b";
  auto r = PlaceFile(live, req, rng);
  ASSERT_TRUE(r.ok());
  auto set = (*r)[0];
  std::sort(set.begin(), set.end());
  EXPECT_EQ(set, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(PlacementTest, ColocateReusesTheOtherFilesReplicaSets) {
  auto live = TwoRacks();
  std::mt19937_64 rng(5);
  PlacementRequest req;
  req.mode = *ParsePlacementMode("colocate /other");
  req.partitions = 4;
  req.colocate_sets = {{"c00", "c10", "c11"}, {"c02", "c12", "c10"}};
  auto r = PlaceFile(live, req, rng);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0], req.colocate_sets[0]);
  EXPECT_EQ((*r)[1], req.colocate_sets[1]);
  EXPECT_EQ((*r)[2], req.colocate_sets[0]);
  // A dead member is replaced, keeping the live ones.
  live.erase(live.begin() + 3);  // c10
  auto again = PlaceFile(live, req, rng);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0][0], "c00");
  EXPECT_EQ((*again)[0][1], "c11");
  EXPECT_EQ((*again)[0].size(), 3u);
  EXPECT_NE((*again)[0][2], "c10");
}

TEST(PlacementTest, ConfineKeepsEveryReplicaOnNComputersOfOneRack) {
  std::vector<PlacementComputer> live;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 8; ++c)
      live.push_back({"r" + std::to_string(r) + "c" + std::to_string(c), "r" + std::to_string(r)});
  std::mt19937_64 rng(6);
  PlacementRequest req;
  req.mode = *ParsePlacementMode("confine 5 r1");
  req.partitions = 40;
  req.writer = "r0c0";
  auto r = PlaceFile(live, req, rng);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::set<std::string> used;
  std::map<std::string, int> load;
  for (const auto& set : *r) {
    ASSERT_EQ(set.size(), 3u);
    EXPECT_EQ(std::set<std::string>(set.begin(), set.end()).size(), 3u);
    for (const auto& c : set) {
      EXPECT_EQ(c.substr(0, 2), "r1");
      used.insert(c);
      load[c]++;
    }
  }
  EXPECT_EQ(used.size(), 5u);
  for (const auto& [c, n] : load) EXPECT_EQ(n, 24) << c;  // 40 partitions x 3 / 5, rotated
}

TEST(PlacementTest, ConfineErrorsSayWhatIsWrong) {
  auto live = TwoRacks();
  std::mt19937_64 rng(7);
  PlacementRequest req;
  req.mode = *ParsePlacementMode("confine 3 r9");
  EXPECT_NE(PlaceFile(live, req, rng).status().message().find("rack 'r9' has no live computer"),
            std::string::npos);
  req.mode = *ParsePlacementMode("confine 4 r0");
  EXPECT_NE(PlaceFile(live, req, rng).status().message().find("rack r0 has 3 live computer(s)"),
            std::string::npos);
  req.mode = *ParsePlacementMode("confine 2 r0");
  EXPECT_NE(PlaceFile(live, req, rng).status().message().find("2 computers cannot hold 3"),
            std::string::npos);
}

TEST(PlacementTest, CompleteReplicaSetKeepsTwoRacksAndHonoursExclusions) {
  auto live = TwoRacks();
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::mt19937_64 rng(seed);
    // Two survivors in one rack: the third goes to the other rack.
    auto set = CompleteReplicaSet(live, {"c10", "c11"}, 3, {"c00"}, rng);
    ASSERT_EQ(set.size(), 3u);
    EXPECT_EQ(RackOf(set[2]), "r0");
    EXPECT_NE(set[2], "c00");
  }
  std::mt19937_64 rng(9);
  std::set<std::string> all = {"c00", "c01", "c02", "c10", "c11"};
  EXPECT_EQ(CompleteReplicaSet(live, {}, 3, all, rng), std::vector<std::string>{"c12"});
}

}  // namespace
}  // namespace copse::dfs

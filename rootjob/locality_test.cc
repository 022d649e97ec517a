#include "rootjob/locality.h"

#include <gtest/gtest.h>

namespace copse::rootjob {
namespace {

// Two racks: computers 0,1,2 in rack 0 and 3,4,5 in rack 1.
const std::vector<int> kRacks = {0, 0, 0, 1, 1, 1};

TEST(LocalityTest, BytesAndPreferredListsWorkedByHand) {
  // 600 bytes on {0, 3}, 300 on {1}, 100 on {4}: total 1000.
  std::vector<InputPiece> pieces = {{600, {0, 3}}, {300, {1}}, {100, {4}}};
  scheduler::TaskLocality loc = ComputeLocality(pieces, kRacks, 2);
  // Rack 0 holds 900, rack 1 holds 700; the worst rack is rack 1.
  EXPECT_EQ(loc.worst.rack, 700);
  EXPECT_EQ(loc.worst.core, 300);
  // Computers holding more than 10%: 0 and 3 (600), then 1 (300); 4 holds
  // exactly 10% and is not preferred.
  ASSERT_EQ(loc.computers.size(), 3u);
  EXPECT_EQ(loc.computers[0].computer, 0);
  EXPECT_EQ(loc.computers[0].bytes.rack, 300);  // 900 in its rack - 600 local
  EXPECT_EQ(loc.computers[0].bytes.core, 100);
  EXPECT_EQ(loc.computers[1].computer, 3);
  EXPECT_EQ(loc.computers[1].bytes.rack, 100);
  EXPECT_EQ(loc.computers[1].bytes.core, 300);
  EXPECT_EQ(loc.computers[2].computer, 1);
  EXPECT_EQ(loc.computers[2].bytes.rack, 600);
  EXPECT_EQ(loc.computers[2].bytes.core, 100);
  ASSERT_EQ(loc.racks.size(), 2u);
  EXPECT_EQ(loc.racks[0].rack, 0);
  EXPECT_EQ(loc.racks[0].bytes.rack, 900);
  EXPECT_EQ(loc.racks[0].bytes.core, 100);
  EXPECT_EQ(loc.racks[1].bytes.core, 300);
}

TEST(LocalityTest, ListsAreCappedAndEmptyInputHasNoPreferences) {
  std::vector<InputPiece> pieces;
  for (int c = 0; c < 6; ++c) pieces.push_back({100, {c}});
  LocalityOptions opt;
  opt.max_entries = 4;
  scheduler::TaskLocality loc = ComputeLocality(pieces, kRacks, 2, opt);
  EXPECT_EQ(loc.computers.size(), 4u);
  EXPECT_EQ(loc.computers[3].computer, 3);
  scheduler::TaskLocality none = ComputeLocality({}, kRacks, 2);
  EXPECT_TRUE(none.computers.empty());
  EXPECT_TRUE(none.racks.empty());
  EXPECT_EQ(none.worst.core, 0);
}

TEST(LocalityTest, PlanReadsPrefersLocalThenRackThenFirstReplica) {
  std::vector<InputPiece> pieces = {{10, {3, 1}}, {20, {4, 5}}, {30, {0}}};
  std::vector<PlannedRead> r = PlanReads(pieces, 0, kRacks);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].source, 1);
  EXPECT_EQ(r[0].level, ReadLevel::kRack);
  EXPECT_EQ(r[1].source, 4);
  EXPECT_EQ(r[1].level, ReadLevel::kCore);
  EXPECT_EQ(r[2].source, 0);
  EXPECT_EQ(r[2].level, ReadLevel::kLocal);
}

}  // namespace
}  // namespace copse::rootjob

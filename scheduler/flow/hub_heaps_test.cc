// HubHeaps against a plain reference: random inserts, removals, key
// updates and shifts on a few hubs, with the heaps checked after each.
#include "scheduler/flow/hub_heaps.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace copse::flow {
namespace {

TEST(HubHeapsTest, AgreesWithAReferenceUnderRandomEdits) {
  constexpr NodeId kHubs = 4, kLeaves = 300;
  HubHeaps heaps;
  heaps.Resize(kHubs + kLeaves);
  std::map<NodeId, std::pair<NodeId, int64_t>> ref;  // leaf -> (hub, key)
  std::mt19937_64 rng(7);
  auto pick = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  for (int step = 0; step < 20000; ++step) {
    const NodeId leaf = kHubs + static_cast<NodeId>(pick(kLeaves));
    const int op = static_cast<int>(pick(4));
    auto it = ref.find(leaf);
    if (it == ref.end()) {
      const NodeId hub = static_cast<NodeId>(pick(kHubs));
      const int64_t key = pick(1000) - 500;
      heaps.Insert(hub, leaf, key);
      ref[leaf] = {hub, key};
    } else if (op == 0) {
      heaps.Remove(leaf);
      ref.erase(it);
    } else if (op == 1) {
      const int64_t key = pick(1000) - 500;
      heaps.Update(leaf, key);
      it->second.second = key;
    } else if (op == 2) {
      const NodeId hub = it->second.first;
      const int64_t delta = pick(21) - 10;
      heaps.Shift(hub, delta);
      for (auto& [l, hk] : ref) {
        if (hk.first == hub) hk.second += delta;
      }
    }
    if (step % 97 != 0) continue;
    for (NodeId hub = 0; hub < kHubs; ++hub) {
      ASSERT_EQ(heaps.HeapError(hub), "") << "step " << step;
      size_t size = 0;
      int64_t least = INT64_MAX;
      for (const auto& [l, hk] : ref) {
        if (hk.first != hub) continue;
        ++size;
        least = std::min(least, hk.second);
        ASSERT_EQ(heaps.hub_of(l), hub);
        ASSERT_EQ(heaps.key(l), hk.second);
      }
      ASSERT_EQ(heaps.Size(hub), size);
      if (size > 0) {
        ASSERT_EQ(heaps.TopKey(hub), least);
        ASSERT_EQ(heaps.key(heaps.Top(hub)), least);
      }
    }
  }
  // A removed leaf is in no heap, and removing it again does nothing.
  const NodeId some = ref.begin()->first;
  heaps.Remove(some);
  EXPECT_EQ(heaps.hub_of(some), kNoId);
  heaps.Remove(some);
  EXPECT_EQ(heaps.hub_of(some), kNoId);
}

// Taking hubs' leaves, a few at a time from each in turn, gives each
// hub's in the order removing its top would, ties included; the small
// hubs' leaves stay in their heaps, the large one's go; a hub not taken
// from, or empty, is untouched.
TEST(HubHeapsTest, TakingGivesTheLeavesInTheOrderRemovingTheTopWould) {
  // Hubs 0..4: walked hubs of 64, 10 and 1 leaves, one of 65 (emptied),
  // and an empty one; hub 5 holds one leaf and is never taken from.
  const std::vector<NodeId> sizes = {HubHeaps::kWalkMax, 10, 1, HubHeaps::kWalkMax + 1, 0};
  const NodeId kLarge = 3, kEmpty = 4, kUntouched = 5, kFirstLeaf = 6;
  HubHeaps taken;
  taken.Resize(kFirstLeaf + 200);
  std::mt19937_64 rng(11);
  NodeId leaf = kFirstLeaf;
  for (NodeId hub = 0; hub < sizes.size(); ++hub) {
    for (NodeId i = 0; i < sizes[hub]; ++i) {
      taken.Insert(hub, leaf++, static_cast<int64_t>(rng() % 8));  // many ties
    }
    taken.Shift(hub, 100 * (hub + 1));
  }
  const NodeId lone = leaf;
  taken.Insert(kUntouched, lone, 5);
  for (int round = 0; round < 2; ++round) {
    HubHeaps removed = taken;  // the same heaps, taken apart the usual way
    std::vector<std::vector<NodeId>> order(sizes.size());
    for (NodeId hub = 0; hub < sizes.size(); ++hub) {
      while (!removed.Empty(hub)) {
        order[hub].push_back(removed.Top(hub));
        removed.Remove(removed.Top(hub));
      }
    }
    taken.StartTaking();
    std::vector<size_t> next(sizes.size(), 0);
    for (bool any = true; any;) {
      any = false;
      for (NodeId hub = 0; hub < sizes.size(); ++hub) {
        for (int k = 0; k < 3 && next[hub] < order[hub].size(); ++k, any = true) {
          const NodeId want = order[hub][next[hub]++];
          ASSERT_FALSE(taken.NothingToTake(hub));
          ASSERT_EQ(taken.NextToTake(hub), want) << "hub " << hub << " round " << round;
          EXPECT_EQ(taken.NextKeyToTake(hub), taken.key(want));  // still in its heap
          taken.Take(hub);
          EXPECT_EQ(taken.hub_of(want), hub == kLarge ? kNoId : hub);
        }
      }
    }
    for (NodeId hub = 0; hub < sizes.size(); ++hub) {
      EXPECT_TRUE(taken.NothingToTake(hub));
      EXPECT_EQ(taken.Size(hub), hub == kLarge ? 0u : static_cast<size_t>(sizes[hub]));
      EXPECT_EQ(taken.HeapError(hub), "");
    }
    EXPECT_TRUE(taken.Empty(kEmpty));
    ASSERT_FALSE(taken.NothingToTake(kUntouched));
    EXPECT_EQ(taken.NextToTake(kUntouched), lone);
    EXPECT_EQ(taken.NextKeyToTake(kUntouched), 5);
    taken.EndTaking();
    // Put back as a search would (the large hub's leaves anew, the small
    // ones' in place, with new keys): the next round's walks start afresh.
    for (NodeId hub = 0; hub < sizes.size(); ++hub) {
      for (NodeId w : order[hub]) {
        taken.Put(hub, w, 100 * (hub + 1) + static_cast<int64_t>(rng() % 8));
        EXPECT_EQ(taken.hub_of(w), hub);
      }
      EXPECT_EQ(taken.HeapError(hub), "");
    }
  }
}

}  // namespace
}  // namespace copse::flow

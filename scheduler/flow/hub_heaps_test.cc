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

// Taking a hub's leaves gives them in the order removing each top would,
// ties included; a small hub's leaves stay in its heap, a large one's go.
TEST(HubHeapsTest, TakingGivesTheLeavesInTheOrderRemovingTheTopWould) {
  const NodeId small = 0, large = 1, other = 2;
  constexpr NodeId kFirstLeaf = 3;
  const NodeId small_leaves = HubHeaps::kWalkMax, large_leaves = HubHeaps::kWalkMax + 1;
  HubHeaps taken;
  taken.Resize(kFirstLeaf + small_leaves + large_leaves + 1);
  std::mt19937_64 rng(11);
  NodeId leaf = kFirstLeaf;
  for (const auto& [hub, n] : {std::pair{small, small_leaves}, std::pair{large, large_leaves}}) {
    for (NodeId i = 0; i < n; ++i, ++leaf) {
      const int64_t key = static_cast<int64_t>(rng() % 8);  // many ties
      taken.Insert(hub, leaf, key);
    }
    taken.Shift(hub, 100);
  }
  taken.Insert(other, leaf, 5);
  for (int round = 0; round < 2; ++round) {
    HubHeaps removed = taken;  // the same heaps, taken apart the usual way
    taken.StartTaking();
    for (NodeId hub : {small, large}) {
      std::vector<NodeId> order;
      while (!removed.Empty(hub)) {
        order.push_back(removed.Top(hub));
        removed.Remove(removed.Top(hub));
      }
      int64_t last = INT64_MIN;
      for (NodeId want : order) {
        ASSERT_FALSE(taken.NothingToTake(hub));
        EXPECT_EQ(taken.NextToTake(hub), want);
        const int64_t key = taken.NextKeyToTake(hub);
        EXPECT_GE(key, last);
        EXPECT_GE(key, 100);
        last = key;
        taken.Take(hub);
        EXPECT_EQ(taken.hub_of(want), hub == small ? small : kNoId);
      }
      EXPECT_TRUE(taken.NothingToTake(hub));
      EXPECT_EQ(taken.Size(hub), hub == small ? static_cast<size_t>(small_leaves) : 0u);
      EXPECT_EQ(taken.HeapError(hub), "");
      // Put back as a search would (the large hub's leaves anew, the
      // small one's with new keys): the next round's walk starts afresh.
      for (NodeId w : order) {
        const int64_t key = 100 + static_cast<int64_t>(rng() % 8);
        hub == large ? taken.Insert(large, w, key) : taken.Update(w, key);
      }
    }
    EXPECT_FALSE(taken.NothingToTake(other));
    EXPECT_EQ(taken.NextKeyToTake(other), 5);
  }
}

}  // namespace
}  // namespace copse::flow

// HubHeaps against a plain reference: random inserts, removals, key
// updates and shifts on a few hubs, with the heaps checked after each.
#include "scheduler/flow/hub_heaps.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

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

}  // namespace
}  // namespace copse::flow

// HubHeaps: for every hub node, a binary min-heap of the leaves that sit at
// it, keyed by a 64-bit number per leaf (LeafSspSolver keys a leaf by a
// lower bound on what its cheapest way out costs). A leaf is in at most one
// heap; every operation is O(log size of that heap) (a hub's first Take in
// a walk also copies up to kWalkMax entries), Top and Shift are O(1): a
// hub's keys are stored relative to an offset of its own, so that moving
// all of them by the same amount (a clock tick) touches none.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/flow/flow_graph.h"

namespace copse::flow {

class HubHeaps {
 public:
  // Makes room for ids below `nodes` (as hubs and as leaves).
  void Resize(size_t nodes);
  // Empties every heap.
  void Clear();

  // REQUIRES: hub_of(leaf) == kNoId.
  void Insert(NodeId hub, NodeId leaf, int64_t key);
  // No-op when the leaf is in no heap.
  void Remove(NodeId leaf);
  // REQUIRES: hub_of(leaf) != kNoId.
  void Update(NodeId leaf, int64_t key);
  // The leaf in hub's heap under key, wherever it was (Insert, Update, or
  // Remove then Insert).
  void Put(NodeId hub, NodeId leaf, int64_t key);
  // Adds `delta` to the key of every leaf of `hub`.
  void Shift(NodeId hub, int64_t delta) { offset_[hub] += delta; }

  NodeId hub_of(NodeId leaf) const { return hub_[leaf]; }
  // REQUIRES: hub_of(leaf) != kNoId.
  int64_t key(NodeId leaf) const {
    const NodeId hub = hub_[leaf];
    return heap_[hub][pos_[leaf]].key + offset_[hub];
  }
  bool Empty(NodeId hub) const { return heap_[hub].empty(); }
  size_t Size(NodeId hub) const { return heap_[hub].size(); }
  // The leaf with the smallest key, and that key. REQUIRES: !Empty(hub).
  NodeId Top(NodeId hub) const { return heap_[hub][0].leaf; }
  int64_t TopKey(NodeId hub) const { return heap_[hub][0].key + offset_[hub]; }
  // Taking hubs' leaves in key order, between StartTaking and EndTaking
  // (a search): a heap of at most kWalkMax leaves at its first Take is
  // walked over a copy of its order and its leaves stay in it (a search
  // lets in most of a small hub's leaves and puts them back with the keys
  // they had, so taking each out and putting it back was most of the
  // work); a larger heap gives its leaves up (Remove). The caller tells
  // them apart by hub_of().
  // REQUIRES: between the two, only Take changes a heap.
  static constexpr size_t kWalkMax = 64;
  void StartTaking();
  // Forgets the walks: every hub reads as its heap again.
  void EndTaking() { StartTaking(); }
  bool NothingToTake(NodeId hub) const {
    return Walked(hub) ? walk_begin_[hub] == walk_end_[hub] : Empty(hub);
  }
  // REQUIRES: !NothingToTake(hub).
  NodeId NextToTake(NodeId hub) const {
    return Walked(hub) ? walk_[walk_begin_[hub]].leaf : Top(hub);
  }
  int64_t NextKeyToTake(NodeId hub) const {
    return Walked(hub) ? walk_[walk_begin_[hub]].key + offset_[hub] : TopKey(hub);
  }
  void Take(NodeId hub);

  // Test hook: empty when hub's heap is in order and its leaves know their
  // hub and position; otherwise what is wrong.
  std::string HeapError(NodeId hub) const;

 private:
  // A heap entry keeps its key beside the leaf (less the hub's offset): the
  // sifts and a search's look at a hub's top read the hub's own array only,
  // not arrays by leaf id all over memory.
  struct Entry {
    int64_t key;
    NodeId leaf;
  };
  void SiftUp(std::vector<Entry>& h, uint32_t i, Entry e);
  void SiftDown(std::vector<Entry>& h, uint32_t i, Entry e);
  // Moves the hole at i of the n-entry heap h down to where e belongs and
  // puts e there, telling place(i, entry) of every entry put.
  template <typename PlaceFn>
  static void SiftDownIn(Entry* h, uint32_t n, uint32_t i, Entry e, PlaceFn place);
  void Place(std::vector<Entry>& h, uint32_t i, Entry e) {
    h[i] = e;
    pos_[e.leaf] = i;
  }

  std::vector<std::vector<Entry>> heap_;  // by hub
  std::vector<int64_t> offset_;           // by hub: added to its leaves' stored keys
  std::vector<uint32_t> pos_;             // by leaf: its index in its hub's heap
  std::vector<NodeId> hub_;               // by leaf: the hub whose heap holds it
  // The walks of this StartTaking: a hub whose walk_mark_ is walk_epoch_
  // has what is left of its copy in walk_[walk_begin_, walk_end_), a heap,
  // or walk_begin_ kRemoving: it was too large at its first Take.
  static constexpr uint32_t kRemoving = UINT32_MAX;
  bool Walked(NodeId hub) const {
    return walk_mark_[hub] == walk_epoch_ && walk_begin_[hub] != kRemoving;
  }
  std::vector<Entry> walk_;
  std::vector<uint32_t> walk_mark_, walk_begin_, walk_end_;  // by hub
  uint32_t walk_epoch_ = 1;
};

}  // namespace copse::flow

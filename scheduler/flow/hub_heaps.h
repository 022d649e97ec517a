// HubHeaps: for every hub node, a binary min-heap of the leaves that sit at
// it, keyed by a 64-bit number per leaf (LeafSspSolver keys a leaf by a
// lower bound on what its cheapest way out costs). A leaf is in at most one
// heap; every operation is O(log size of that heap), Top and Shift are O(1):
// a hub's keys are stored relative to an offset of its own, so that moving
// all of them by the same amount (a clock tick) touches none.
// Thread-safety: none.
#pragma once

#include <cstdint>
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
  // Adds `delta` to the key of every leaf of `hub`.
  void Shift(NodeId hub, int64_t delta) { offset_[hub] += delta; }

  NodeId hub_of(NodeId leaf) const { return hub_[leaf]; }
  // REQUIRES: hub_of(leaf) != kNoId.
  int64_t key(NodeId leaf) const { return key_[leaf] + offset_[hub_[leaf]]; }
  bool Empty(NodeId hub) const { return heap_[hub].empty(); }
  size_t Size(NodeId hub) const { return heap_[hub].size(); }
  // The leaf with the smallest key. REQUIRES: !Empty(hub).
  NodeId Top(NodeId hub) const { return heap_[hub][0]; }
  // The leaves of `hub` in heap order (for checks and full scans).
  const std::vector<NodeId>& Leaves(NodeId hub) const { return heap_[hub]; }

 private:
  void SiftUp(std::vector<NodeId>& h, uint32_t i);
  void SiftDown(std::vector<NodeId>& h, uint32_t i);
  void Place(std::vector<NodeId>& h, uint32_t i, NodeId leaf) {
    h[i] = leaf;
    pos_[leaf] = i;
  }

  std::vector<std::vector<NodeId>> heap_;  // by hub
  std::vector<int64_t> offset_;            // by hub: added to its leaves' stored keys
  std::vector<int64_t> key_;               // by leaf, less its hub's offset
  std::vector<uint32_t> pos_;              // by leaf: its index in its hub's heap
  std::vector<NodeId> hub_;                // by leaf: the hub whose heap holds it
};

}  // namespace copse::flow

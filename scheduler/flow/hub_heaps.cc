#include "scheduler/flow/hub_heaps.h"

#include <algorithm>

#include "scheduler/flow/reuse.h"

namespace copse::flow {

void HubHeaps::Resize(size_t nodes) {
  if (heap_.size() >= nodes) return;
  ReserveWithSlack(heap_, nodes);
  heap_.resize(nodes);
  ReserveWithSlack(offset_, nodes);
  offset_.resize(nodes, 0);
  ReserveWithSlack(key_, nodes);
  key_.resize(nodes, 0);
  ReserveWithSlack(pos_, nodes);
  pos_.resize(nodes, 0);
  ReserveWithSlack(hub_, nodes);
  hub_.resize(nodes, kNoId);
}

void HubHeaps::Clear() {
  for (auto& h : heap_) h.clear();
  std::fill(offset_.begin(), offset_.end(), 0);
  std::fill(hub_.begin(), hub_.end(), kNoId);
}

void HubHeaps::Insert(NodeId hub, NodeId leaf, int64_t key) {
  std::vector<NodeId>& h = heap_[hub];
  hub_[leaf] = hub;
  key_[leaf] = key - offset_[hub];
  h.push_back(leaf);
  pos_[leaf] = static_cast<uint32_t>(h.size() - 1);
  SiftUp(h, pos_[leaf]);
}

void HubHeaps::Remove(NodeId leaf) {
  const NodeId hub = hub_[leaf];
  if (hub == kNoId) return;
  std::vector<NodeId>& h = heap_[hub];
  const uint32_t i = pos_[leaf];
  hub_[leaf] = kNoId;
  const NodeId last = h.back();
  h.pop_back();
  if (last == leaf) return;
  Place(h, i, last);
  SiftUp(h, i);
  SiftDown(h, pos_[last]);
}

void HubHeaps::Update(NodeId leaf, int64_t key) {
  std::vector<NodeId>& h = heap_[hub_[leaf]];
  const int64_t old = key_[leaf];
  key = key - offset_[hub_[leaf]];
  key_[leaf] = key;
  if (key < old) {
    SiftUp(h, pos_[leaf]);
  } else if (key > old) {
    SiftDown(h, pos_[leaf]);
  }
}

void HubHeaps::SiftUp(std::vector<NodeId>& h, uint32_t i) {
  const NodeId leaf = h[i];
  const int64_t k = key_[leaf];
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (key_[h[parent]] <= k) break;
    Place(h, i, h[parent]);
    i = parent;
  }
  Place(h, i, leaf);
}

void HubHeaps::SiftDown(std::vector<NodeId>& h, uint32_t i) {
  const NodeId leaf = h[i];
  const int64_t k = key_[leaf];
  const uint32_t n = static_cast<uint32_t>(h.size());
  while (true) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && key_[h[child + 1]] < key_[h[child]]) ++child;
    if (key_[h[child]] >= k) break;
    Place(h, i, h[child]);
    i = child;
  }
  Place(h, i, leaf);
}

}  // namespace copse::flow

#include "scheduler/flow/hub_heaps.h"

#include <algorithm>

#include "scheduler/flow/reuse.h"

namespace copse::flow {

// Both sifts down (SiftDown, Take) in one loop.
template <typename PlaceFn>
void HubHeaps::SiftDownIn(Entry* h, uint32_t n, uint32_t i, Entry e, PlaceFn place) {
  while (true) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && h[child + 1].key < h[child].key) ++child;
    if (h[child].key >= e.key) break;
    place(i, h[child]);
    i = child;
  }
  place(i, e);
}

void HubHeaps::Resize(size_t nodes) {
  if (heap_.size() >= nodes) return;
  ReserveWithSlack(heap_, nodes);
  heap_.resize(nodes);
  ReserveWithSlack(offset_, nodes);
  offset_.resize(nodes, 0);
  ReserveWithSlack(pos_, nodes);
  pos_.resize(nodes, 0);
  ReserveWithSlack(hub_, nodes);
  hub_.resize(nodes, kNoId);
  for (std::vector<uint32_t>* v : {&walk_mark_, &walk_begin_, &walk_end_}) {
    ReserveWithSlack(*v, nodes);
    v->resize(nodes, 0);
  }
}

void HubHeaps::Clear() {
  for (auto& h : heap_) h.clear();
  std::fill(offset_.begin(), offset_.end(), 0);
  std::fill(hub_.begin(), hub_.end(), kNoId);
  StartTaking();
}

void HubHeaps::StartTaking() {
  walk_.clear();
  if (++walk_epoch_ == 0) {
    std::fill(walk_mark_.begin(), walk_mark_.end(), 0u);
    walk_epoch_ = 1;
  }
}

void HubHeaps::Take(NodeId hub) {
  if (walk_mark_[hub] != walk_epoch_) {
    const std::vector<Entry>& h = heap_[hub];
    walk_mark_[hub] = walk_epoch_;
    walk_begin_[hub] = h.size() > kWalkMax ? kRemoving : static_cast<uint32_t>(walk_.size());
    if (walk_begin_[hub] != kRemoving) {
      walk_.insert(walk_.end(), h.begin(), h.end());
      walk_end_[hub] = static_cast<uint32_t>(walk_.size());
    }
  }
  if (walk_begin_[hub] == kRemoving) {
    Remove(heap_[hub][0].leaf);
    return;
  }
  // As Remove takes the top: the last entry sifts down from the top, so
  // ties come out in the order they would have.
  const uint32_t b = walk_begin_[hub];
  const uint32_t n = --walk_end_[hub] - b;
  Entry* h = walk_.data() + b;
  if (n == 0) return;
  SiftDownIn(h, n, 0, h[n], [h](uint32_t i, Entry e) { h[i] = e; });
}

void HubHeaps::Put(NodeId hub, NodeId leaf, int64_t key) {
  if (hub_[leaf] == hub) {
    if (this->key(leaf) != key) Update(leaf, key);
    return;
  }
  Remove(leaf);
  Insert(hub, leaf, key);
}

std::string HubHeaps::HeapError(NodeId hub) const {
  const std::vector<Entry>& h = heap_[hub];
  for (uint32_t i = 0; i < h.size(); ++i) {
    const std::string at = "heap of " + std::to_string(hub) + " at " + std::to_string(i);
    if (hub_[h[i].leaf] != hub || pos_[h[i].leaf] != i) return at + ": leaf misplaced";
    if (i > 0 && h[(i - 1) / 2].key > h[i].key) return at + ": out of order";
  }
  return {};
}

void HubHeaps::Insert(NodeId hub, NodeId leaf, int64_t key) {
  std::vector<Entry>& h = heap_[hub];
  hub_[leaf] = hub;
  h.push_back(Entry{key - offset_[hub], leaf});
  SiftUp(h, static_cast<uint32_t>(h.size() - 1), h.back());
}

void HubHeaps::Remove(NodeId leaf) {
  const NodeId hub = hub_[leaf];
  if (hub == kNoId) return;
  std::vector<Entry>& h = heap_[hub];
  const uint32_t i = pos_[leaf];
  hub_[leaf] = kNoId;
  const Entry last = h.back();
  h.pop_back();
  if (last.leaf == leaf) return;
  if (i > 0 && last.key < h[(i - 1) / 2].key) {
    SiftUp(h, i, last);
  } else {
    SiftDown(h, i, last);
  }
}

void HubHeaps::Update(NodeId leaf, int64_t key) {
  const NodeId hub = hub_[leaf];
  std::vector<Entry>& h = heap_[hub];
  const uint32_t i = pos_[leaf];
  const Entry e{key - offset_[hub], leaf};
  if (e.key < h[i].key) {
    SiftUp(h, i, e);
  } else {
    SiftDown(h, i, e);
  }
}

// Both move the hole at i to where e belongs and put e there.
void HubHeaps::SiftUp(std::vector<Entry>& h, uint32_t i, Entry e) {
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (h[parent].key <= e.key) break;
    Place(h, i, h[parent]);
    i = parent;
  }
  Place(h, i, e);
}

void HubHeaps::SiftDown(std::vector<Entry>& h, uint32_t i, Entry e) {
  SiftDownIn(h.data(), static_cast<uint32_t>(h.size()), i, e,
             [&](uint32_t at, Entry x) { Place(h, at, x); });
}

}  // namespace copse::flow

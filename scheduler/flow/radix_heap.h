// RadixHeap: the monotone priority queue of the shortest-path searches.
// Keys are non-negative reduced-cost distances that never fall below the
// last key popped, so each entry moves down at most 64 buckets instead of
// sifting through a binary heap on every push. Values are 32-bit ids.
// Entries with equal keys come out last in, first out (a search goes deep
// into a plateau of ties, and finds a node it wants soonest when such nodes
// are common there), or first in, first out (the search goes wide: its
// trees stay shallow).
// Thread-safety: none.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace copse::flow {

class RadixHeap {
 public:
  explicit RadixHeap(bool lifo = true) : lifo_(lifo) {}

  void Clear() {
    for (auto& b : buckets_) b.clear();
    head_ = 0;
    size_ = 0;
    last_ = 0;
  }
  bool Empty() const { return size_ == 0; }
  // REQUIRES: key >= the last key popped since Clear().
  void Push(int64_t key, uint32_t value) {
    buckets_[Bucket(key)].emplace_back(key, value);
    ++size_;
  }
  // Which way ties come out. REQUIRES: Empty() (since Clear()).
  void SetLifo(bool lifo) { lifo_ = lifo; }
  bool lifo() const { return lifo_; }
  // REQUIRES: !Empty().
  std::pair<int64_t, uint32_t> Pop() {
    // Bucket 0 holds the entries with the last key popped; last in, first
    // out takes from its back (head_ stays 0), so it is used up when empty.
    if (head_ == buckets_[0].size()) {
      buckets_[0].clear();
      head_ = 0;
      size_t i = 1;
      while (buckets_[i].empty()) ++i;
      std::vector<std::pair<int64_t, uint32_t>>& b = buckets_[i];
      int64_t m = b[0].first;
      for (const auto& e : b) m = std::min(m, e.first);
      last_ = m;
      for (const auto& e : b) buckets_[Bucket(e.first)].push_back(e);
      b.clear();
    }
    --size_;
    if (lifo_) {
      std::pair<int64_t, uint32_t> e = buckets_[0].back();
      buckets_[0].pop_back();
      return e;
    }
    return buckets_[0][head_++];
  }

 private:
  size_t Bucket(int64_t key) const {
    uint64_t x = static_cast<uint64_t>(key) ^ static_cast<uint64_t>(last_);
    return x == 0 ? 0 : 64 - static_cast<size_t>(__builtin_clzll(x));
  }
  std::array<std::vector<std::pair<int64_t, uint32_t>>, 65> buckets_;
  bool lifo_;
  size_t head_ = 0;  // FIFO: bucket 0 is read from here (entries before it are gone)
  size_t size_ = 0;
  int64_t last_ = 0;
};

}  // namespace copse::flow

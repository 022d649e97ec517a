// Vector helpers that keep a buffer's capacity across solves. The solvers
// are called again and again on a graph whose size drifts by a few ids per
// batch; std::vector::assign to a larger size allocates exactly that size,
// so every solve would get fresh pages, and on this VM a first touch of a
// page costs tens of microseconds (17 MB of fresh flow array: 140 ms). These
// grow the capacity with slack instead, so later solves reuse it.
// Thread-safety: none (plain functions on the caller's vectors).
#pragma once

#include <cstddef>
#include <vector>

namespace copse::flow {

template <typename T>
void ReserveWithSlack(std::vector<T>& v, size_t n) {
  if (v.capacity() < n) v.reserve(n + n / 4 + 64);
}

// v = n copies of value, reusing v's buffer when it is large enough.
template <typename T>
void AssignReuse(std::vector<T>& v, size_t n, const T& value) {
  ReserveWithSlack(v, n);
  v.assign(n, value);
}

// Grows v to n elements, the new ones `value`; never shrinks it.
template <typename T>
void GrowTo(std::vector<T>& v, size_t n, const T& value) {
  if (v.size() >= n) return;
  ReserveWithSlack(v, n);
  v.resize(n, value);
}

// v = src, reusing v's buffer when it is large enough.
template <typename T>
void CopyReuse(std::vector<T>& v, const std::vector<T>& src) {
  ReserveWithSlack(v, src.size());
  v.assign(src.begin(), src.end());
}

}  // namespace copse::flow

// What the data generators (apps/*/generate.cc, apps/generate.h) share: a
// random number generator whose stream is the same with every compiler and
// standard library (the standard distributions are not), and the buffer
// that hands a partition to its sink in pieces ending at record boundaries.
// Thread-safety: not thread-safe; one per partition being generated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "apps/generate.h"

namespace copse::apps {

// SplitMix64's finaliser: a bijective mix of 64 bits.
inline uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// SplitMix64.
class GenRandom {
 public:
  explicit GenRandom(uint64_t seed) : state_(seed) {}
  // The stream of one partition of one file.
  static GenRandom For(const GenPartition& p) {
    return GenRandom(Mix64(Mix64(p.seed) ^ Mix64(static_cast<uint64_t>(p.file) << 32 |
                                                 static_cast<uint32_t>(p.partition))));
  }
  uint64_t Next() { return Mix64(state_ += 0x9e3779b97f4a7c15ull); }
  uint64_t operator()() { return Next(); }
  // In [0, n), uniform enough for n far below 2^64. REQUIRES: n > 0.
  uint64_t Below(uint64_t n) { return Next() % n; }
  // Uniform in [0, 1), 53 bits.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1p-53; }

 private:
  uint64_t state_;
};

// Collects a partition's records and hands them to the sink in pieces of at
// most kPieceBytes, each ending at a record boundary: append whole records
// to buf(), call RecordDone() after each, Flush() at the end.
class Pieces {
 public:
  static constexpr size_t kPieceBytes = 4 << 20;
  // `max_record`: the longest record the generator appends at once.
  Pieces(const ChunkSink& sink, size_t max_record) : sink_(sink), max_record_(max_record) {
    buf_.reserve(kPieceBytes);
  }
  std::string& buf() { return buf_; }
  // Bytes appended so far, handed on or not.
  int64_t written() const { return written_ + static_cast<int64_t>(buf_.size()); }
  // Hands the piece on when another record might not fit.
  Status RecordDone() { return buf_.size() + max_record_ > kPieceBytes ? Flush() : Status::Ok(); }
  Status Flush() {
    if (buf_.empty()) return Status::Ok();
    COPSE_RETURN_IF_ERROR(sink_(buf_));
    written_ += static_cast<int64_t>(buf_.size());
    buf_.clear();
    return Status::Ok();
  }

 private:
  const ChunkSink& sink_;
  size_t max_record_;
  std::string buf_;
  int64_t written_ = 0;
};

}  // namespace copse::apps

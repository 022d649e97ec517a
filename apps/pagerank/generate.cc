// GeneratePageRank (apps/generate.h, docs/apps/pagerank.md): a graph in
// PageRank's text format, `v<TAB>t1 t2 ... tk` a line, with skewed degrees.
//
// Every partition holds the same number n of vertices, derived from the byte
// target and the partition count alone (the n whose expected text size is
// the target), so V = n·P is known while any partition is generated:
// partition p holds v = p, p+P, ..., p+(n−1)·P, ascending. A partition's
// size is therefore close to its target (within a few per cent), not cut at
// it. Each vertex's out-degree is 0 (dangling) with probability 1/8, else
// drawn from a Zipf law P(k) ∝ k^−1.8 on 1..1000 (mean ≈ 7.2 with the
// dangling ones). Each target is the r-th most popular vertex, r drawn from
// a continuous power law of density ∝ r^−0.9 over [1, V+1) (in-degrees fall
// off like a power law with exponent ≈ 2.1), mapped to an id by a
// pseudo-random permutation of 0..V−1 keyed by the seed, so that popular
// vertices land in every partition. Self-loops and multi-edges happen and
// count. Everything is a function of the seed and the partition (a
// SplitMix64 stream per partition).
#include "apps/generate.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "apps/gen_support.h"

namespace copse::apps {
namespace {

constexpr int kMaxOutDegree = 1000;
constexpr double kOutExponent = 1.8;
constexpr uint64_t kDanglingOneIn = 8;
// Popularity density ∝ r^−(1 − 1/kInPower): exponent 0.9, drawn as a power.
constexpr int kInPower = 10;
// The app numbers a partition's vertices in 31 bits (apps/pagerank/main.cc).
constexpr uint64_t kMaxVerticesPerPartition = (uint64_t{1} << 31) - 1;

// Out-degrees: 0 with probability 1/kDanglingOneIn, else Zipf on
// 1..kMaxOutDegree.
class OutDegrees {
 public:
  OutDegrees() {
    double sum = 0, weighted = 0;
    for (int k = 1; k <= kMaxOutDegree; ++k) {
      sum += std::pow(k, -kOutExponent);
      weighted += k * std::pow(k, -kOutExponent);
      cdf_[static_cast<size_t>(k - 1)] = sum;
    }
    mean_ = weighted / sum * (1 - 1.0 / kDanglingOneIn);
  }
  double Mean() const { return mean_; }
  double Linked() const { return 1 - 1.0 / kDanglingOneIn; }  // P(k > 0)
  int Draw(GenRandom& rng) const {
    if (rng.Next() % kDanglingOneIn == 0) return 0;
    double u = rng.Unit() * cdf_.back();
    auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
    return std::min(static_cast<int>(it - cdf_.begin()) + 1, kMaxOutDegree);
  }

 private:
  std::array<double, kMaxOutDegree> cdf_{};
  double mean_ = 0;
};

// Popularity ranks 0..V−1, rank r drawn with density ∝ (r+1)^−0.9: by
// inverting the continuous law's distribution function, x = (1 + u·span)^10.
class Popularity {
 public:
  explicit Popularity(uint64_t vertices)
      : vertices_(vertices),
        span_(std::pow(static_cast<double>(vertices) + 1, 1.0 / kInPower) - 1) {}
  uint64_t Draw(GenRandom& rng) const {
    const double y = 1 + rng.Unit() * span_;
    const double y2 = y * y, y4 = y2 * y2, y5 = y4 * y;
    static_assert(kInPower == 10);
    auto r = static_cast<uint64_t>(y5 * y5) - 1;
    return std::min(r, vertices_ - 1);
  }

 private:
  uint64_t vertices_;
  double span_;
};

// A pseudo-random permutation of 0..n−1: rounds of bijections of b-bit
// words (add a key, xor-shift, multiply by an odd constant, all mod 2^b),
// with 2^b the smallest power of two covering n, cycle-walked into range.
class Permutation {
 public:
  Permutation(uint64_t n, uint64_t seed) : n_(n) {
    while (bits_ < 64 && (uint64_t{1} << bits_) < n) ++bits_;
    mask_ = bits_ == 64 ? ~uint64_t{0} : (uint64_t{1} << bits_) - 1;
    shift_ = std::max(1, bits_ / 2);
    for (size_t r = 0; r < keys_.size(); ++r)
      keys_[r] = Mix64(seed * 4 + r + 0x7061676572616e6bull);
  }
  // REQUIRES: x < n.
  uint64_t operator()(uint64_t x) const {
    do {
      x = Scramble(x);
    } while (x >= n_);
    return x;
  }

 private:
  uint64_t Scramble(uint64_t x) const {
    for (uint64_t key : keys_) {
      x = (x + key) & mask_;
      x ^= x >> shift_;
      x = (x * 0x9e3779b97f4a7c15ull) & mask_;
    }
    return x ^ (x >> shift_);
  }

  uint64_t n_;
  int bits_ = 1;
  int shift_ = 1;
  uint64_t mask_ = 0;
  std::array<uint64_t, 4> keys_{};
};

// The mean decimal length of the ids 0..n−1.
double AverageDigits(uint64_t n) {
  double total = 0;
  uint64_t low = 0, high = 10;
  for (int digits = 1; low < n; ++digits) {
    total += static_cast<double>(std::min(n, high) - low) * digits;
    low = high;
    high = high > UINT64_MAX / 10 ? UINT64_MAX : high * 10;
  }
  return n == 0 ? 1 : total / static_cast<double>(n);
}

// The vertex count per partition whose expected text is `bytes` (at least
// one when bytes > 0): a line is the id, a tab, k ids with k−1 spaces
// between, a newline; the ids' lengths depend on V = n·P, so n is settled by
// a few fixed-point steps.
uint64_t VerticesPerPartition(int64_t bytes, int partitions, const OutDegrees& degrees) {
  if (bytes <= 0) return 0;
  const auto target = static_cast<double>(bytes);
  const auto parts = static_cast<uint64_t>(partitions);
  double n = target / (degrees.Mean() * 8 + 8);
  for (int step = 0; step < 8; ++step) {
    auto vertices = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(n))) * parts;
    double digits = AverageDigits(vertices);
    double line = digits + 2 + degrees.Mean() * (digits + 1) - degrees.Linked();
    n = target / line;
  }
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(n)));
}

void AppendId(std::string* out, uint64_t id) {
  char digits[20];
  out->append(digits, std::to_chars(digits, digits + sizeof digits, id).ptr);
}

}  // namespace

Status GeneratePageRank(const GenPartition& g, const ChunkSink& sink) {
  if (g.file != 0 || g.file_bytes.empty() || g.partitions < 1 || g.partition < 0 ||
      g.partition >= g.partitions) {
    return InvalidArgument("pagerank: one input file (0) of partitions 0..P-1, with its size");
  }
  const OutDegrees degrees;
  const uint64_t n = VerticesPerPartition(g.file_bytes[0], g.partitions, degrees);
  const auto parts = static_cast<uint64_t>(g.partitions);
  if (n == 0) return Status::Ok();
  if (n > kMaxVerticesPerPartition) {
    return InvalidArgument("pagerank: " + std::to_string(g.file_bytes[0]) +
                           " bytes a partition would be more than 2^31 vertices in each");
  }
  const uint64_t vertices = n * parts;
  const Permutation ids(vertices, g.seed);
  const Popularity popularity(vertices);
  GenRandom rng = GenRandom::For(g);
  Pieces out(sink, (kMaxOutDegree + 1) * 21);  // ids of at most 20 digits and a separator
  std::string& piece = out.buf();
  for (uint64_t k = 0; k < n; ++k) {
    AppendId(&piece, static_cast<uint64_t>(g.partition) + k * parts);
    piece += '\t';
    const int degree = degrees.Draw(rng);
    for (int e = 0; e < degree; ++e) {
      if (e > 0) piece += ' ';
      AppendId(&piece, ids(popularity.Draw(rng)));
    }
    piece += '\n';
    COPSE_RETURN_IF_ERROR(out.RecordDone());
  }
  return out.Flush();
}

}  // namespace copse::apps

// Prime's input: one decimal integer a line, uniform in [2, kMaxInteger].
// With the paper's naive test (trial division by every d < n) an integer
// costs O(n) when it is prime, so the bound sets the work per line.
#include "apps/generate.h"

#include <random>
#include <string>

namespace copse::apps {
namespace {

constexpr uint64_t kMaxInteger = 1'000'000;
constexpr size_t kPiece = 1 << 20;

}  // namespace

Status GeneratePrime(const GenPartition& p, const ChunkSink& sink) {
  const int64_t target = p.file_bytes.at(static_cast<size_t>(p.file));
  std::mt19937_64 rng(p.seed * 1'000'003 + static_cast<uint64_t>(p.partition));
  std::string piece;
  int64_t written = 0;
  while (written < target) {
    piece += std::to_string(2 + rng() % (kMaxInteger - 1));
    piece += '\n';
    if (piece.size() >= kPiece || written + static_cast<int64_t>(piece.size()) >= target) {
      written += static_cast<int64_t>(piece.size());
      COPSE_RETURN_IF_ERROR(sink(piece));
      piece.clear();
    }
  }
  return Status::Ok();
}

}  // namespace copse::apps

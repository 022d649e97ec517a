// Prime's input: one decimal integer a line, uniform in [2, kMaxInteger].
// With the paper's naive test (trial division by every d < n) an integer
// costs O(n) when it is prime, so the bound sets the work per line.
#include "apps/generate.h"

#include <string>

#include "apps/gen_support.h"

namespace copse::apps {
namespace {

constexpr uint64_t kMaxInteger = 1'000'000;

}  // namespace

Status GeneratePrime(const GenPartition& p, const ChunkSink& sink) {
  const int64_t target = p.file_bytes.at(static_cast<size_t>(p.file));
  GenRandom rng = GenRandom::For(p);
  Pieces out(sink, 8);
  while (out.written() < target) {
    out.buf() += std::to_string(2 + rng.Below(kMaxInteger - 1));
    out.buf() += '\n';
    COPSE_RETURN_IF_ERROR(out.RecordDone());
  }
  return out.Flush();
}

}  // namespace copse::apps

// GenerateDatabaseJoin (apps/generate.h; docs/apps/databasejoin.md): the
// two tables of DatabaseJoin, file 0 small (`key|tag`) and file 1 big
// (`key|ref|payload`), range-partitioned alike: partition p holds the keys
// k with floor(k·P / 2^32) == p.
//
// Every partition of big has the same number of rows, R = the big target
// over a nominal row size (at most the width of a range), so that any
// partition can name the keys of any other: row r of partition p has key
//   key(p, r) = ceil(p·2^32 / P) + r·stride,   stride = max(1, floor(2^32/P) / R)
// (unique, ascending, inside range p). A big row's ref is key(p', r') of a
// random partition p' and row r' — that is what makes phase 2 shuffle — and
// its payload 60 to 90 letters, digits, '-' and '.', their lengths steered so
// that the partition comes out near its byte target (its row count is fixed,
// so it may end a little short of it or past it). A small partition has rows
// until it reaches its target; 9 in 10 of its keys are big keys of its range
// (some repeated by chance, and 1 row in 20 repeats the key before it), the
// others keys of its range that no big row has; tags are 3 to 10 lowercase
// letters. Nothing contains '|', '"' or a newline, so sqlite3 imports the
// tables as they are.
#include "apps/generate.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

#include "apps/gen_support.h"

namespace copse::apps {
namespace {

constexpr uint64_t kKeySpace = uint64_t{1} << 32;
// A big row of 10-digit key and ref and a 75-byte payload, with its
// separators and newline.
constexpr int64_t kBigRowBytes = 98;
constexpr size_t kMaxRow = 128;  // longer than any row generated
constexpr char kPayloadChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.";

// Where big's keys are: the same for both files and every partition.
struct BigKeys {
  uint64_t partitions = 1;
  uint64_t rows = 0;  // per partition
  uint64_t stride = 1;
  uint64_t width = 0;  // the narrowest range's width, floor(2^32 / P)

  BigKeys(int64_t big_bytes, int p) : partitions(static_cast<uint64_t>(p)) {
    width = kKeySpace / partitions;
    if (big_bytes > 0) {
      rows = std::clamp<uint64_t>(static_cast<uint64_t>(big_bytes / kBigRowBytes), 1, width);
      stride = std::max<uint64_t>(1, width / rows);
    }
  }
  // The first key of range p: ceil(p·2^32 / P).
  uint64_t Low(uint64_t p) const { return (p * kKeySpace + partitions - 1) / partitions; }
  uint32_t Key(uint64_t p, uint64_t r) const { return static_cast<uint32_t>(Low(p) + r * stride); }
};

void AppendDecimal(std::string* out, uint32_t n) {
  char digits[10];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
  out->append(digits, end);
}

size_t Digits(uint32_t n) {
  size_t d = 1;
  while (n >= 10) n /= 10, ++d;
  return d;
}

void AppendRandomText(std::string* out, size_t length, GenRandom& rng) {
  while (length > 0) {
    uint64_t bits = rng.Next();
    for (int i = 0; i < 10 && length > 0; ++i, --length, bits >>= 6) {
      out->push_back(kPayloadChars[bits & 63]);
    }
  }
}

// A key of range p that no big row has (a big key when there is none).
uint32_t UnmatchedKey(const BigKeys& big, uint64_t p, GenRandom& rng) {
  if (big.rows == 0) return static_cast<uint32_t>(big.Low(p) + rng.Below(big.width));
  if (big.stride > 1) {
    return static_cast<uint32_t>(big.Key(p, rng.Below(big.rows)) + 1 + rng.Below(big.stride - 1));
  }
  if (big.width > big.rows) {
    return static_cast<uint32_t>(big.Low(p) + big.rows + rng.Below(big.width - big.rows));
  }
  return big.Key(p, rng.Below(big.rows));
}

Status GenerateSmall(const GenPartition& g, const BigKeys& big, GenRandom& rng, Pieces& out) {
  const auto p = static_cast<uint64_t>(g.partition);
  const int64_t target = g.file_bytes[0];
  uint32_t key = 0;
  for (bool first = true; out.written() < target; first = false) {
    bool repeat = !first && rng.Below(20) == 0;  // the key before it again
    if (!repeat) {
      bool matched = big.rows > 0 && rng.Below(10) != 0;
      key = matched ? big.Key(p, rng.Below(big.rows)) : UnmatchedKey(big, p, rng);
    }
    std::string& buf = out.buf();
    AppendDecimal(&buf, key);
    buf.push_back('|');
    size_t tag = 3 + rng.Below(8);
    for (size_t i = 0; i < tag; ++i) buf.push_back(static_cast<char>('a' + rng.Below(26)));
    buf.push_back('\n');
    COPSE_RETURN_IF_ERROR(out.RecordDone());
  }
  return out.Flush();
}

Status GenerateBig(const GenPartition& g, const BigKeys& big, GenRandom& rng, Pieces& out) {
  const auto p = static_cast<uint64_t>(g.partition);
  const int64_t target = g.file_bytes[1];
  for (uint64_t r = 0; r < big.rows; ++r) {
    uint32_t key = big.Key(p, r);
    uint32_t ref = big.Key(rng.Below(big.partitions), rng.Below(big.rows));
    // Steer the payloads' lengths toward the target over the rows left.
    int64_t per_row = (target - out.written()) / static_cast<int64_t>(big.rows - r);
    int64_t want = per_row - static_cast<int64_t>(Digits(key) + Digits(ref) + 3);
    int64_t length = std::clamp<int64_t>(want - 15 + static_cast<int64_t>(rng.Below(31)), 60, 90);
    std::string& buf = out.buf();
    AppendDecimal(&buf, key);
    buf.push_back('|');
    AppendDecimal(&buf, ref);
    buf.push_back('|');
    AppendRandomText(&buf, static_cast<size_t>(length), rng);
    buf.push_back('\n');
    COPSE_RETURN_IF_ERROR(out.RecordDone());
  }
  return out.Flush();
}

}  // namespace

Status GenerateDatabaseJoin(const GenPartition& g, const ChunkSink& sink) {
  if (g.file != 0 && g.file != 1) {
    return InvalidArgument("databasejoin has two files: 0 (small) and 1 (big), not " +
                           std::to_string(g.file));
  }
  if (g.partitions < 1 || g.partition < 0 || g.partition >= g.partitions) {
    return InvalidArgument("databasejoin: partition " + std::to_string(g.partition) + " of " +
                           std::to_string(g.partitions));
  }
  if (g.file_bytes.size() != 2 || g.file_bytes[0] < 0 || g.file_bytes[1] < 0) {
    return InvalidArgument("databasejoin needs the byte targets of small and big, both >= 0");
  }
  BigKeys big(g.file_bytes[1], g.partitions);
  GenRandom rng = GenRandom::For(g);
  Pieces out(sink, kMaxRow);
  return g.file == 0 ? GenerateSmall(g, big, rng, out) : GenerateBig(g, big, rng, out);
}

}  // namespace copse::apps

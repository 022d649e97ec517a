// Sort's input (docs/apps/sort.md): printable 100-byte records, each a 10-byte
// key of printable non-space ASCII (33..126), 89 bytes of printable ASCII
// (32..126) and '\n' — lines that `LC_ALL=C sort` can check. About one record
// in 50 repeats the key of one of the few records before it in the same
// piece, and one in 250 the whole record, so that equal keys and equal
// records occur. A partition is the fewest whole records that reach its
// target size; pieces are whole records, at most 4 MiB.
#include "apps/generate.h"

#include <cstring>
#include <string>

#include "apps/gen_support.h"

namespace copse::apps {
namespace {

constexpr size_t kRecord = 100;
constexpr size_t kKey = 10;
constexpr uint64_t kLookBack = 16;  // how far back a repeat looks, in records

// Fills `out[0, n)` with bytes from `lo` to `lo + span - 1`, four per draw
// (16 bits each, scaled by a multiply and shift).
void FillRange(GenRandom& rng, char* out, size_t n, unsigned lo, unsigned span) {
  for (size_t k = 0; k < n; k += 4) {
    uint64_t bits = rng();
    for (size_t j = k; j < k + 4 && j < n; ++j, bits >>= 16) {
      out[j] = static_cast<char>(lo + (((bits & 0xffff) * span) >> 16));
    }
  }
}

// Appends one record to `piece`, which holds whole records of this piece.
void AppendRecord(GenRandom& rng, std::string* piece) {
  char rec[kRecord];
  const uint64_t before = piece->size() / kRecord;
  const uint64_t roll = rng() % 250;
  const char* recent =
      before == 0 ? nullptr
                  : piece->data() + (before - 1 - rng() % std::min(before, kLookBack)) * kRecord;
  if (recent && roll == 0) {
    std::memcpy(rec, recent, kRecord);
  } else {
    if (recent && roll < 5) {
      std::memcpy(rec, recent, kKey);
    } else {
      FillRange(rng, rec, kKey, 33, 94);
    }
    FillRange(rng, rec + kKey, kRecord - kKey - 1, 32, 95);
    rec[kRecord - 1] = '\n';
  }
  piece->append(rec, kRecord);
}

}  // namespace

Status GenerateSort(const GenPartition& p, const ChunkSink& sink) {
  if (p.file != 0 || p.file_bytes.empty() || p.file_bytes[0] < 0) {
    return InvalidArgument("sort has one input file: file 0 with a size of 0 or more bytes");
  }
  const uint64_t records = (static_cast<uint64_t>(p.file_bytes[0]) + kRecord - 1) / kRecord;
  GenRandom rng = GenRandom::For(p);
  Pieces out(sink, kRecord);
  for (uint64_t r = 0; r < records; ++r) {
    AppendRecord(rng, &out.buf());
    COPSE_RETURN_IF_ERROR(out.RecordDone());
  }
  return out.Flush();
}

}  // namespace copse::apps

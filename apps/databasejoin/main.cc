// databasejoin: the DatabaseJoin vertex program (Quincy §5.1;
// docs/apps/databasejoin.md): a 3-way join over two tables,
//   SELECT b2.key, s.key, s.tag, b2.payload
//   FROM small s JOIN big b1 ON b1.key = s.key JOIN big b2 ON b2.key = b1.ref
//   ORDER BY b2.key, s.key, s.tag, b2.payload;
// Inputs are text, one row a line, fields separated by '|' (what sqlite3
// imports with `.separator |`): small rows `key|tag`, big rows
// `key|ref|payload`; keys and refs are decimal integers in [0, 2^32), and a
// '\r' before the '\n' is dropped as sqlite3 drops it. Both tables have P
// partitions on the same ranges: partition p holds the rows whose key k has
// floor(k·P / 2^32) == p. A malformed row or a row in the wrong partition is
// bad input (exit 65), named by file, partition and line. The output is the
// result's rows as sqlite3 prints them in list mode with `.separator |`;
// output partition j holds the rows whose b2.key is in range j, in order.
// Its parameter "role":
//   phase1  vertex p; inputs: small partition p, big partition p; P = its
//           buckets. Checks every row of both, hash-joins them on key (a
//           hash table of the small rows, the big rows streamed past it)
//           and writes (b1.ref, s.key, s.tag) of each joined pair into
//           bucket floor(ref·P / 2^32) as a binary record: ref, s.key and
//           the tag's length as 4-byte little-endian integers, then the
//           tag's bytes.
//   phase2  vertex j; inputs: big partition j (checked by phase1 j), then
//           bucket j of every phase1 vertex. Joins the records on ref =
//           b2.key with the big rows and writes the result rows of range j
//           in order. The output must be sorted anyway, so it sorts both
//           sides — records by (ref, s.key, tag), big rows by (key,
//           payload) — and merges them: that yields the rows already in
//           ORDER BY order, and sorts fewer items than the join's output.
//           Text compares as memcmp, as SQLite's BINARY collation does.
// The engine leaves out inputs it knows to be empty, so a piece's stage
// input (VertexInput::input) says what it is, not its position.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/runtime/vertex_internal.h"

namespace {

using copse::Status;
using copse::Vertex;

constexpr uint64_t kKeySpace = uint64_t{1} << 32;
constexpr size_t kBucketFlush = 256 << 10;  // bytes buffered per phase1 bucket
constexpr size_t kOutputFlush = 4 << 20;    // bytes buffered of phase2's output
constexpr size_t kRecordHeader = 12;        // ref, s.key, tag length

// The range of `key` among `partitions`: floor(key·P / 2^32).
uint32_t RangeOf(uint32_t key, uint32_t partitions) {
  return static_cast<uint32_t>((uint64_t{key} * partitions) >> 32);
}

// Calls `fn(line)` for each line of `text` (the last may lack its '\n').
template <typename Fn>
Status ForEachLine(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    size_t end = text.find('\n');
    if (end == std::string_view::npos) return fn(text);
    COPSE_RETURN_IF_ERROR(fn(text.substr(0, end)));
    text.remove_prefix(end + 1);
  }
  return Status::Ok();
}

// Cuts a stream that arrives in pieces into lines; a line may straddle
// pieces (it is gathered in a buffer reused from line to line).
class LineStream {
 public:
  template <typename Fn>
  Status Feed(std::span<const uint8_t> piece, Fn&& fn) {
    std::string_view text(reinterpret_cast<const char*>(piece.data()), piece.size());
    if (!carry_.empty()) {
      size_t end = text.find('\n');
      carry_.append(text.substr(0, end));
      if (end == std::string_view::npos) return Status::Ok();
      COPSE_RETURN_IF_ERROR(fn(std::string_view(carry_)));
      carry_.clear();
      text.remove_prefix(end + 1);
    }
    size_t last = text.rfind('\n');
    if (last == std::string_view::npos) {
      carry_.assign(text);
      return Status::Ok();
    }
    carry_.assign(text.substr(last + 1));
    return ForEachLine(text.substr(0, last + 1), fn);
  }
  // The last line, when the stream did not end with '\n'.
  template <typename Fn>
  Status End(Fn&& fn) {
    if (carry_.empty()) return Status::Ok();
    return fn(std::string_view(carry_));
  }

 private:
  std::string carry_;
};

bool ParseKey(std::string_view s, uint32_t* key) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v >= kKeySpace) return false;
  *key = static_cast<uint32_t>(v);
  return true;
}

// Parses the rows of one partition of one table: N fields, the first N - 1
// of them keys, the first of which must lie in the partition's range
// (unchecked when `partitions` is 0). Messages say "line L: what is wrong".
template <size_t N>
class RowParser {
 public:
  RowParser(const char* table, uint32_t partition, uint32_t partitions)
      : table_(table), partition_(partition), partitions_(partitions) {}

  // Fills `keys` and `text` (the last field) from the next line.
  Status Parse(std::string_view line, std::array<uint32_t, N - 1>* keys, std::string_view* text) {
    ++line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view rest = line;
    for (size_t f = 0; f + 1 < N; ++f) {
      size_t bar = rest.find('|');
      if (bar == std::string_view::npos || !ParseKey(rest.substr(0, bar), &(*keys)[f])) {
        return Malformed(line);
      }
      rest.remove_prefix(bar + 1);
    }
    if (rest.find('|') != std::string_view::npos) return Malformed(line);
    *text = rest;
    if (partitions_ == 0) return Status::Ok();
    uint32_t range = RangeOf((*keys)[0], partitions_);
    if (range != partition_) return WrongPartition((*keys)[0], range);
    return Status::Ok();
  }

 private:
  Status Malformed(std::string_view line) const;
  Status WrongPartition(uint32_t key, uint32_t range) const;

  const char* table_;
  uint32_t partition_, partitions_;
  uint64_t line_ = 0;
};

template <size_t N>
Status RowParser<N>::Malformed(std::string_view line) const {
  constexpr size_t kShown = 80;
  std::string shown(line.substr(0, kShown));
  if (line.size() > kShown) shown += "...";
  return copse::InvalidArgument("line " + std::to_string(line_) + ": not a row of " + table_ +
                                " (" + (N == 2 ? "key|tag" : "key|ref|payload") +
                                ", keys decimal integers in [0, 2^32), text without '|'): '" +
                                shown + "'");
}

template <size_t N>
Status RowParser<N>::WrongPartition(uint32_t key, uint32_t range) const {
  return copse::InvalidArgument("line " + std::to_string(line_) + ": key " + std::to_string(key) +
                                " of " + table_ + " belongs in partition " + std::to_string(range) +
                                ", not " + std::to_string(partition_) +
                                " (the tables are range-partitioned: floor(key*P/2^32) with P = " +
                                std::to_string(partitions_) + ")");
}

// A failure found in a whole input read with ReadAll, named as the runtime
// names failures of streamed inputs.
Status AtInput(const Vertex& v, size_t i, const Status& s) {
  const copse::VertexInput& in = v.input(i);
  return Status(s.code(), "input " + std::to_string(i) + " (partition " +
                              std::to_string(in.partition) + " of " + in.path +
                              "): " + s.message());
}

// The input pieces of the stage's input `input`. The engine leaves out
// inputs it knows to be empty (an empty bucket), so there may be fewer than
// the stage input has sources.
std::vector<size_t> PiecesOf(const Vertex& v, int input) {
  std::vector<size_t> pieces;
  for (size_t i = 0; i < v.inputs(); ++i) {
    if (v.input(i).input == input) pieces.push_back(i);
  }
  return pieces;
}

Status ReadWhole(Vertex& v, size_t i, std::string* text) {
  text->reserve(text->size() + static_cast<size_t>(std::max<int64_t>(0, v.input(i).bytes)));
  return v.ReadAll(i, text);
}

// ---- phase1 ----------------------------------------------------------------

struct SmallRow {
  uint32_t key;
  uint32_t next;  // the next row with the same key, or kNone
  std::string_view tag;
};

// The small partition's rows by key: open addressing on the key, each slot
// the head of the chain of that key's rows.
class KeyIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // REQUIRES: rows.size() < kNone; `rows` outlives the index.
  explicit KeyIndex(std::vector<SmallRow>& rows) : rows_(rows) {
    size_t slots = 16;
    while (slots < rows.size() * 2) slots *= 2;
    slots_.assign(slots, Slot{0, kNone});
    shift_ = 64 - std::countr_zero(slots);
    for (uint32_t r = 0; r < rows.size(); ++r) {
      Slot& s = slots_[Probe(rows[r].key)];
      s.key = rows[r].key;
      rows[r].next = s.head;
      s.head = r;
    }
  }
  // The first row with `key`, or kNone.
  uint32_t Find(uint32_t key) const { return slots_[Probe(key)].head; }
  const SmallRow& row(uint32_t r) const { return rows_[r]; }

 private:
  struct Slot {
    uint32_t key;
    uint32_t head;
  };
  // The slot of `key`, or the empty slot where it would go.
  size_t Probe(uint32_t key) const {
    size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
    while (slots_[i].head != kNone && slots_[i].key != key) i = (i + 1) & mask;
    return i;
  }

  const std::vector<SmallRow>& rows_;
  std::vector<Slot> slots_;
  int shift_ = 0;
};

void PutU32(std::string* out, uint32_t v) {
  char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
               static_cast<char>(v >> 24)};
  out->append(b, 4);
}

uint32_t GetU32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | uint32_t{u[1]} << 8 | uint32_t{u[2]} << 16 | uint32_t{u[3]} << 24;
}

// Phase1's records, buffered per bucket and handed to the vertex in slices.
class BucketOut {
 public:
  BucketOut(Vertex& v, uint32_t buckets) : v_(v), buffers_(buckets) {}

  Status Add(uint32_t ref, uint32_t skey, std::string_view tag) {
    if (tag.size() > UINT32_MAX) return copse::InvalidArgument("a tag of 4 GiB or more");
    uint32_t b = RangeOf(ref, static_cast<uint32_t>(buffers_.size()));
    std::string& buf = buffers_[b];
    PutU32(&buf, ref);
    PutU32(&buf, skey);
    PutU32(&buf, static_cast<uint32_t>(tag.size()));
    buf.append(tag);
    ++records_;
    return buf.size() >= kBucketFlush ? Flush(b) : Status::Ok();
  }
  Status FlushAll() {
    for (uint32_t b = 0; b < buffers_.size(); ++b) COPSE_RETURN_IF_ERROR(Flush(b));
    return Status::Ok();
  }
  uint64_t records() const { return records_; }
  // The first failure to write, if any (Add returns it too).
  const Status& write_error() const { return write_error_; }

 private:
  Status Flush(uint32_t b) {
    if (buffers_[b].empty()) return Status::Ok();
    write_error_ = v_.Write(static_cast<int>(b), buffers_[b]);
    buffers_[b].clear();
    return write_error_;
  }

  Vertex& v_;
  std::vector<std::string> buffers_;
  uint64_t records_ = 0;
  Status write_error_;
};

Status ReadSmall(Vertex& v, size_t i, uint32_t p, uint32_t partitions, std::string* text,
                 std::vector<SmallRow>* rows) {
  COPSE_RETURN_IF_ERROR(ReadWhole(v, i, text));
  rows->reserve(static_cast<size_t>(std::count(text->begin(), text->end(), '\n')) + 1);
  RowParser<2> parser("small", p, partitions);
  Status s = ForEachLine(*text, [&](std::string_view line) {
    std::array<uint32_t, 1> key;
    std::string_view tag;
    COPSE_RETURN_IF_ERROR(parser.Parse(line, &key, &tag));
    if (rows->size() + 1 >= KeyIndex::kNone) {
      return copse::InvalidArgument("more rows than one partition may hold (2^32 - 1)");
    }
    rows->push_back(SmallRow{key[0], KeyIndex::kNone, tag});
    return Status::Ok();
  });
  return s.ok() ? s : AtInput(v, i, s);
}

// Streams big partition p (input piece `i`) past the small rows' index.
Status JoinBig(Vertex& v, size_t i, uint32_t p, uint32_t partitions, const KeyIndex& index,
               BucketOut* out) {
  RowParser<3> parser("big", p, partitions);
  auto join = [&](std::string_view line) {
    std::array<uint32_t, 2> keys;  // b1.key, b1.ref
    std::string_view payload;
    COPSE_RETURN_IF_ERROR(parser.Parse(line, &keys, &payload));
    for (uint32_t r = index.Find(keys[0]); r != KeyIndex::kNone; r = index.row(r).next) {
      COPSE_RETURN_IF_ERROR(out->Add(keys[1], keys[0], index.row(r).tag));
    }
    return Status::Ok();
  };
  LineStream lines;
  Status read = v.Read(i, [&](std::span<const uint8_t> piece) { return lines.Feed(piece, join); });
  // A failed write stops the read; report it as itself, not as the input's.
  if (!out->write_error().ok()) return out->write_error();
  COPSE_RETURN_IF_ERROR(read);
  Status last = lines.End(join);
  return last.ok() ? last : AtInput(v, i, last);
}

Status Phase1(Vertex& v) {
  const std::vector<size_t> small = PiecesOf(v, 0), big = PiecesOf(v, 1);
  if (small.size() > 1 || big.size() > 1 || small.size() + big.size() != v.inputs() ||
      v.buckets() < 1) {
    return copse::InvalidArgument(
        "databasejoin phase1 reads a partition of small and of big and writes P buckets");
  }
  const auto partitions = static_cast<uint32_t>(v.buckets());
  const auto p = static_cast<uint32_t>(v.index());
  for (size_t i = 0; i < v.inputs(); ++i) {
    if (static_cast<uint32_t>(v.input(i).partition) != p || p >= partitions) {
      return copse::InvalidArgument("databasejoin phase1 joins partition " + std::to_string(p) +
                                    " of the tables, one of " + std::to_string(partitions));
    }
  }
  std::string small_text;
  std::vector<SmallRow> rows;
  if (!small.empty()) {
    COPSE_RETURN_IF_ERROR(ReadSmall(v, small[0], p, partitions, &small_text, &rows));
  }
  KeyIndex index(rows);
  BucketOut out(v, partitions);
  // Big is read even when small is empty: phase2 counts on its rows having
  // been checked here.
  if (!big.empty()) COPSE_RETURN_IF_ERROR(JoinBig(v, big[0], p, partitions, index, &out));
  COPSE_RETURN_IF_ERROR(out.FlushAll());
  v.CountRecords(out.records());
  return Status::Ok();
}

// ---- phase2 ----------------------------------------------------------------

// A phase1 record: (ref << 32 | s.key) and the tag.
struct Match {
  uint64_t ref_skey;
  std::string_view tag;
  bool operator<(const Match& o) const {
    return ref_skey != o.ref_skey ? ref_skey < o.ref_skey : tag < o.tag;
  }
};

struct BigRow {
  uint32_t key;
  std::string_view payload;
  bool operator<(const BigRow& o) const { return key != o.key ? key < o.key : payload < o.payload; }
};

// Parses the records of one phase1 bucket.
Status ParseMatches(std::string_view data, std::vector<Match>* matches) {
  while (!data.empty()) {
    if (data.size() < kRecordHeader) return copse::Corruption("a record is cut short");
    uint32_t length = GetU32(data.data() + 8);
    if (data.size() - kRecordHeader < length) return copse::Corruption("a tag is cut short");
    uint64_t ref_skey = uint64_t{GetU32(data.data())} << 32 | GetU32(data.data() + 4);
    matches->push_back(Match{ref_skey, data.substr(kRecordHeader, length)});
    data.remove_prefix(kRecordHeader + length);
  }
  return Status::Ok();
}

// Reads the phase1 records of input pieces `pieces` into `data`; `matches`
// point into it.
Status ReadMatches(Vertex& v, const std::vector<size_t>& pieces, std::string* data,
                   std::vector<Match>* matches) {
  std::vector<size_t> ends;
  for (size_t i : pieces) {
    COPSE_RETURN_IF_ERROR(ReadWhole(v, i, data));
    ends.push_back(data->size());
  }
  matches->reserve(data->size() / (kRecordHeader + 8));
  size_t begin = 0;
  for (size_t k = 0; k < pieces.size(); ++k) {
    Status s = ParseMatches(std::string_view(data->data() + begin, ends[k] - begin), matches);
    if (!s.ok()) return AtInput(v, pieces[k], s);
    begin = ends[k];
  }
  return Status::Ok();
}

// Reads big partition j (input piece `i`). Its rows' ranges are not checked
// again: phase1 did it.
Status ReadBig(Vertex& v, size_t i, uint32_t j, std::string* text, std::vector<BigRow>* rows) {
  COPSE_RETURN_IF_ERROR(ReadWhole(v, i, text));
  rows->reserve(static_cast<size_t>(std::count(text->begin(), text->end(), '\n')) + 1);
  RowParser<3> parser("big", j, /*partitions=*/0);
  Status s = ForEachLine(*text, [&](std::string_view line) {
    std::array<uint32_t, 2> keys;
    std::string_view payload;
    COPSE_RETURN_IF_ERROR(parser.Parse(line, &keys, &payload));
    rows->push_back(BigRow{keys[0], payload});
    return Status::Ok();
  });
  return s.ok() ? s : AtInput(v, i, s);
}

// Phase2's output lines, buffered and handed to the vertex in slices.
class LineOut {
 public:
  explicit LineOut(Vertex& v) : v_(v) { buf_.reserve(kOutputFlush + 4096); }

  Status Add(std::string_view b2_key, std::string_view s_key, std::string_view tag,
             std::string_view payload) {
    buf_.append(b2_key);
    buf_.push_back('|');
    buf_.append(s_key);
    buf_.push_back('|');
    buf_.append(tag);
    buf_.push_back('|');
    buf_.append(payload);
    buf_.push_back('\n');
    ++lines_;
    return buf_.size() >= kOutputFlush ? Flush() : Status::Ok();
  }
  Status Flush() {
    if (buf_.empty()) return Status::Ok();
    COPSE_RETURN_IF_ERROR(v_.Write(0, buf_));
    buf_.clear();
    return Status::Ok();
  }
  uint64_t lines() const { return lines_; }

 private:
  Vertex& v_;
  std::string buf_;
  uint64_t lines_ = 0;
};

// Decimal digits of `n` in `buf`.
std::string_view Decimal(uint32_t n, std::array<char, 10>& buf) {
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), n);
  return std::string_view(buf.data(), static_cast<size_t>(end - buf.data()));
}

// The result rows of one key: matches and big rows of that key, both
// sorted. Equal matches (a repeated small row) give equal lines, which
// interleave with the other lines by payload.
Status JoinKey(std::span<const Match> matches, std::span<const BigRow> rows, LineOut* out) {
  std::array<char, 10> key_buf, skey_buf;
  std::string_view key = Decimal(rows[0].key, key_buf);
  for (size_t m = 0; m < matches.size();) {
    const Match& match = matches[m];
    size_t same = m + 1;
    while (same < matches.size() && matches[same].ref_skey == match.ref_skey &&
           matches[same].tag == match.tag) {
      ++same;
    }
    std::string_view skey = Decimal(static_cast<uint32_t>(match.ref_skey), skey_buf);
    for (const BigRow& row : rows) {
      for (size_t c = m; c < same; ++c) {
        COPSE_RETURN_IF_ERROR(out->Add(key, skey, match.tag, row.payload));
      }
    }
    m = same;
  }
  return Status::Ok();
}

// Merges sorted matches with sorted big rows, key by key.
Status MergeJoin(const std::vector<Match>& matches, const std::vector<BigRow>& rows, LineOut* out) {
  size_t m = 0, r = 0;
  while (m < matches.size() && r < rows.size()) {
    uint32_t key = static_cast<uint32_t>(matches[m].ref_skey >> 32);
    if (key != rows[r].key) {
      if (key < rows[r].key) ++m;
      if (key > rows[r].key) ++r;
      continue;
    }
    size_t m_end = m, r_end = r;
    while (m_end < matches.size() && matches[m_end].ref_skey >> 32 == key) ++m_end;
    while (r_end < rows.size() && rows[r_end].key == key) ++r_end;
    COPSE_RETURN_IF_ERROR(JoinKey(std::span(matches).subspan(m, m_end - m),
                                  std::span(rows).subspan(r, r_end - r), out));
    m = m_end;
    r = r_end;
  }
  return out->Flush();
}

Status Phase2(Vertex& v) {
  const std::vector<size_t> big = PiecesOf(v, 0), buckets = PiecesOf(v, 1);
  if (big.size() > 1 || big.size() + buckets.size() != v.inputs()) {
    return copse::InvalidArgument(
        "databasejoin phase2 reads a partition of big and a bucket of every phase1 vertex");
  }
  const auto j = static_cast<uint32_t>(v.index());
  std::string big_text, match_data;
  std::vector<BigRow> rows;
  std::vector<Match> matches;
  if (!big.empty()) COPSE_RETURN_IF_ERROR(ReadBig(v, big[0], j, &big_text, &rows));
  COPSE_RETURN_IF_ERROR(ReadMatches(v, buckets, &match_data, &matches));
  std::sort(matches.begin(), matches.end());
  std::sort(rows.begin(), rows.end());
  LineOut out(v);
  COPSE_RETURN_IF_ERROR(MergeJoin(matches, rows, &out));
  v.CountRecords(out.lines());
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t start = copse::apps::MarkStart();
  auto v = Vertex::Open(argc, argv, start);
  if (!v.ok()) return Vertex::FailEarly(v.status());
  std::string role = copse::apps::ParamsOf(**v).value("role", "");
  Status s;
  if (role == "phase1") {
    s = Phase1(**v);
  } else if (role == "phase2") {
    s = Phase2(**v);
  } else {
    s = copse::InvalidArgument("databasejoin: params.role must be phase1 or phase2, not '" + role +
                               "'");
  }
  return (*v)->Finish(s);
}

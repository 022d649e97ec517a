// sort: the Sort vertex program (docs/design.md §12, docs/apps/sort.md). Records
// are fixed-size, "record_bytes" (100) each, any bytes at all; the first 10
// are the key, but the output is ordered by the whole record (memcmp, so the
// key comes first), duplicates kept, across the output partitions in order.
// Printable records (99 bytes and '\n') therefore come out exactly as
// `LC_ALL=C sort` orders them as lines. An input partition that is not a
// whole number of records is bad input (exit 65, naming file and partition).
// Its parameter "role" says which stage it plays:
//   sample     (one vertex, gathering every input partition) reads about the
//              first "fraction" of each partition, sorts that sample and
//              writes "ranges" - 1 split records, evenly spaced in it, to
//              bucket 0
//   partition  (a vertex per input partition, with the splits broadcast as
//              its input 1) writes each record of its partition to bucket b,
//              the number of splits <= the record: equal records share a
//              bucket, and every record of bucket b sorts before bucket b+1's
//   sort       (a vertex per range, all-to-all) holds its range in memory,
//              sorts it and writes it to its output partition
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/runtime/vertex_internal.h"

namespace {

using copse::Result;
using copse::Status;
using copse::Vertex;

constexpr int64_t kMaxRecordBytes = 1 << 20;
constexpr size_t kStagingBytes = 1 << 20;  // output gathered before a Write

// ---- parameters

Result<int64_t> IntParam(const Vertex& v, const char* name, int64_t lo, int64_t hi) {
  auto it = copse::apps::ParamsOf(v).find(name);
  if (it == copse::apps::ParamsOf(v).end() || !it->is_number_integer() || it->get<int64_t>() < lo ||
      it->get<int64_t>() > hi) {
    return copse::InvalidArgument("sort: params." + std::string(name) +
                                  " must be an integer from " + std::to_string(lo) + " to " +
                                  std::to_string(hi));
  }
  return it->get<int64_t>();
}

Result<double> FractionParam(const Vertex& v) {
  auto it = copse::apps::ParamsOf(v).find("fraction");
  if (it == copse::apps::ParamsOf(v).end() || !it->is_number() || !(it->get<double>() > 0) ||
      it->get<double>() > 1) {
    return copse::InvalidArgument("sort: params.fraction must be a number in (0, 1]");
  }
  return it->get<double>();
}

// ---- record order

// A record's place in a sorted run: its first 8 bytes as a big-endian number
// (zero-padded), which orders most pairs with one integer comparison, and
// where the record starts.
struct Entry {
  uint64_t prefix;
  size_t offset;
};

uint64_t PrefixOf(const uint8_t* r, size_t size) {
  uint64_t p = 0;
  for (size_t k = 0; k < 8; ++k) p = (p << 8) | (k < size ? r[k] : 0);
  return p;
}

// Orders records of `size` bytes held in `base` as memcmp does.
class RecordLess {
 public:
  RecordLess(const uint8_t* base, size_t size)
      : base_(base), skip_(std::min<size_t>(8, size)), rest_(size - skip_) {}
  bool operator()(const Entry& a, const Entry& b) const {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return std::memcmp(base_ + a.offset + skip_, base_ + b.offset + skip_, rest_) < 0;
  }
  // Whether `rec` (whose prefix is `prefix`) sorts before the record of `e`.
  bool Before(uint64_t prefix, const uint8_t* rec, const Entry& e) const {
    if (prefix != e.prefix) return prefix < e.prefix;
    return std::memcmp(rec + skip_, base_ + e.offset + skip_, rest_) < 0;
  }

 private:
  const uint8_t* base_;
  size_t skip_;  // the bytes the prefix holds
  size_t rest_;
};

// The records of `data` (REQUIRES: a whole number of them), in memcmp order.
std::vector<Entry> SortRecords(std::span<const uint8_t> data, size_t size) {
  std::vector<Entry> entries;
  entries.reserve(data.size() / size);
  for (size_t off = 0; off < data.size(); off += size) {
    entries.push_back({PrefixOf(data.data() + off, size), off});
  }
  std::sort(entries.begin(), entries.end(), RecordLess(data.data(), size));
  return entries;
}

// ---- input

std::string_view AsChars(std::span<const uint8_t> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

Status NotWholeRecords(const copse::VertexInput& in, uint64_t bytes, size_t size) {
  std::string what = in.from_file ? "partition " + std::to_string(in.partition) + " of " + in.path
                                  : "the output of " + in.stage + "[" + std::to_string(in.index) +
                                        "] (" + in.path + ")";
  return copse::InvalidArgument("sort: " + what + " holds " + std::to_string(bytes) +
                                " bytes: not a whole number of " + std::to_string(size) +
                                "-byte records");
}

// Appends the start of input `i` to `out`: `limit` bytes, or all of it when it
// is shorter (then a whole number of records, or an error). Stops the stream
// once it has enough.
Status ReadPrefix(Vertex& v, size_t i, uint64_t limit, size_t size, std::string* out) {
  uint64_t got = 0;
  bool enough = false;
  Status s = v.Read(i, [&](std::span<const uint8_t> b) {
    if (enough) return copse::Cancelled("sort: sample complete");
    size_t take = static_cast<size_t>(std::min<uint64_t>(b.size(), limit - got));
    out->append(AsChars(b.first(take)));
    got += take;
    if (got < limit) return Status::Ok();
    // Not an error: Read gives up on the stream (its status is then the
    // DFS client's account of the stop, and not looked at).
    enough = true;
    return copse::Cancelled("sort: sample complete");
  });
  if (enough) return Status::Ok();
  COPSE_RETURN_IF_ERROR(s);
  if (got % size != 0) return NotWholeRecords(v.input(i), got, size);
  return Status::Ok();
}

// Cuts a stream delivered in pieces cut anywhere into records of `size`
// bytes, handing each to `fn` in place (a record split between two pieces
// is put together first).
class RecordCutter {
 public:
  explicit RecordCutter(size_t size) : size_(size) { carry_.reserve(size); }

  template <typename Fn>
  Status Feed(std::span<const uint8_t> b, Fn&& fn) {
    total_ += b.size();
    if (!carry_.empty()) {
      size_t take = std::min(size_ - carry_.size(), b.size());
      carry_.insert(carry_.end(), b.begin(), b.begin() + static_cast<ptrdiff_t>(take));
      b = b.subspan(take);
      if (carry_.size() < size_) return Status::Ok();
      COPSE_RETURN_IF_ERROR(fn(carry_.data()));
      carry_.clear();
    }
    size_t whole = b.size() / size_ * size_;
    for (size_t off = 0; off < whole; off += size_) COPSE_RETURN_IF_ERROR(fn(b.data() + off));
    carry_.assign(b.begin() + static_cast<ptrdiff_t>(whole), b.end());
    return Status::Ok();
  }
  uint64_t total() const { return total_; }
  bool whole() const { return carry_.empty(); }

 private:
  size_t size_;
  std::vector<uint8_t> carry_;
  uint64_t total_ = 0;
};

// ---- the roles

Status Sample(Vertex& v, size_t size) {
  COPSE_ASSIGN_OR_RETURN(double fraction, FractionParam(v));
  COPSE_ASSIGN_OR_RETURN(int64_t ranges, IntParam(v, "ranges", 1, 1'000'000));
  std::string sample;
  for (size_t i = 0; i < v.inputs(); ++i) {
    // The root knows partition sizes on average only: `bytes` is that.
    double want = std::ceil(fraction * static_cast<double>(v.input(i).bytes) / size);
    uint64_t limit = std::max<uint64_t>(1, static_cast<uint64_t>(want)) * size;
    COPSE_RETURN_IF_ERROR(ReadPrefix(v, i, limit, size, &sample));
  }
  const auto* base = reinterpret_cast<const uint8_t*>(sample.data());
  std::vector<Entry> sorted = SortRecords({base, sample.size()}, size);
  if (sorted.empty()) return Status::Ok();  // no input: every record goes to bucket 0
  std::string splits;
  const auto m = static_cast<uint64_t>(sorted.size());
  for (uint64_t k = 1; k < static_cast<uint64_t>(ranges); ++k) {
    splits.append(sample, sorted[k * m / static_cast<uint64_t>(ranges)].offset, size);
  }
  v.CountRecords(static_cast<uint64_t>(ranges) - 1);
  return v.Write(0, splits);
}

// The splits the sample vertex wrote: input 1 of the stage (absent when
// there are none).
Status ReadSplits(Vertex& v, size_t size, std::string* splits) {
  for (size_t i = 0; i < v.inputs(); ++i) {
    if (v.input(i).input != 1) continue;
    size_t before = splits->size();
    COPSE_RETURN_IF_ERROR(v.ReadAll(i, splits));
    if ((splits->size() - before) % size != 0) {
      return NotWholeRecords(v.input(i), splits->size() - before, size);
    }
  }
  const size_t count = splits->size() / size;
  if (count + 1 > static_cast<size_t>(v.buckets())) {
    return copse::InvalidArgument("sort: the sample wrote " + std::to_string(count) +
                                  " splits for " + std::to_string(v.buckets()) + " buckets");
  }
  return Status::Ok();
}

Status Partition(Vertex& v, size_t size) {
  if (v.buckets() < 1) return copse::InvalidArgument("sort: a partition vertex needs buckets");
  std::string splits;
  COPSE_RETURN_IF_ERROR(ReadSplits(v, size, &splits));
  const auto* base = reinterpret_cast<const uint8_t*>(splits.data());
  std::vector<Entry> bounds;
  for (size_t off = 0; off < splits.size(); off += size) {
    bounds.push_back({PrefixOf(base + off, size), off});
  }
  const RecordLess less(base, size);
  if (!std::is_sorted(bounds.begin(), bounds.end(), less)) {
    return copse::InvalidArgument("sort: the sample's splits are not in order");
  }
  uint64_t records = 0;
  auto route = [&](const uint8_t* rec) {
    uint64_t prefix = PrefixOf(rec, size);
    // The first split above the record: the number of splits <= it.
    auto above = std::upper_bound(
        bounds.begin(), bounds.end(), rec,
        [&](const uint8_t* r, const Entry& e) { return less.Before(prefix, r, e); });
    ++records;
    return v.Write(static_cast<int>(above - bounds.begin()),
                   {reinterpret_cast<const char*>(rec), size});
  };
  for (size_t i = 0; i < v.inputs(); ++i) {
    if (v.input(i).input != 0) continue;
    RecordCutter cutter(size);
    COPSE_RETURN_IF_ERROR(
        v.Read(i, [&](std::span<const uint8_t> b) { return cutter.Feed(b, route); }));
    if (!cutter.whole()) return NotWholeRecords(v.input(i), cutter.total(), size);
  }
  v.CountRecords(records);
  return Status::Ok();
}

Status Sort(Vertex& v, size_t size) {
  int64_t expected = 0;
  for (size_t i = 0; i < v.inputs(); ++i) expected += std::max<int64_t>(0, v.input(i).bytes);
  std::vector<uint8_t> data;
  data.reserve(static_cast<size_t>(expected));
  for (size_t i = 0; i < v.inputs(); ++i) {
    size_t before = data.size();
    COPSE_RETURN_IF_ERROR(v.Read(i, [&](std::span<const uint8_t> b) {
      data.insert(data.end(), b.begin(), b.end());
      return Status::Ok();
    }));
    if ((data.size() - before) % size != 0) {
      return NotWholeRecords(v.input(i), data.size() - before, size);
    }
  }
  std::vector<Entry> sorted = SortRecords(data, size);
  const size_t batch = std::max(kStagingBytes / size, size_t{1}) * size;
  std::string staging;
  staging.reserve(batch);
  for (const Entry& e : sorted) {
    if (staging.size() + size > batch) {
      COPSE_RETURN_IF_ERROR(v.Write(0, staging));
      staging.clear();
    }
    staging.append(reinterpret_cast<const char*>(data.data() + e.offset), size);
  }
  if (!staging.empty()) COPSE_RETURN_IF_ERROR(v.Write(0, staging));
  v.CountRecords(sorted.size());
  return Status::Ok();
}

Status Run(Vertex& v) {
  COPSE_ASSIGN_OR_RETURN(int64_t size, IntParam(v, "record_bytes", 1, kMaxRecordBytes));
  auto role = copse::apps::ParamsOf(v).find("role");
  std::string name =
      role != copse::apps::ParamsOf(v).end() && role->is_string() ? role->get<std::string>() : "";
  if (name == "sample") return Sample(v, static_cast<size_t>(size));
  if (name == "partition") return Partition(v, static_cast<size_t>(size));
  if (name == "sort") return Sort(v, static_cast<size_t>(size));
  return copse::InvalidArgument("sort: params.role must be sample, partition or sort, not '" +
                                name + "'");
}

}  // namespace

int main(int argc, char** argv) {
  int64_t start = copse::apps::MarkStart();
  auto v = copse::Vertex::Open(argc, argv, start);
  if (!v.ok()) return copse::Vertex::FailEarly(v.status());
  return (*v)->Finish(Run(**v));
}

#include "apps/runtime/sorter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <queue>

#include "apps/runtime/records.h"

namespace copse::apps {
namespace {

// One sorted run on disk, read record by record.
class RunFile {
 public:
  explicit RunFile(const std::filesystem::path& p) : in_(p, std::ios::binary), path_(p) {
    in_.rdbuf()->pubsetbuf(buf_, sizeof buf_);
  }
  Status Open() const {
    if (in_.is_open()) return Status::Ok();
    return IoError(
        fmt::format("cannot open the sort run {}: {}", path_.string(), std::strerror(errno)));
  }
  // False at the end of the run; kIoError when it cannot be read.
  Result<bool> Next() {
    uint8_t len[4];
    if (!in_.read(reinterpret_cast<char*>(len), 4)) {
      if (in_.gcount() == 0 && in_.eof()) return false;
      return Bad();
    }
    key_.resize(Length(len));
    if (!in_.read(key_.data(), static_cast<std::streamsize>(key_.size()))) return Bad();
    if (!in_.read(reinterpret_cast<char*>(len), 4)) return Bad();
    value_.resize(Length(len));
    if (!in_.read(value_.data(), static_cast<std::streamsize>(value_.size()))) return Bad();
    return true;
  }
  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }

 private:
  static uint32_t Length(const uint8_t* b) {
    return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  }
  Status Bad() const { return IoError("cannot read the sort run " + path_.string()); }
  std::ifstream in_;
  std::filesystem::path path_;
  char buf_[1 << 16];
  std::string key_, value_;
};

}  // namespace

// The batch in memory, sorted.
class ExternalSorter::MemoryReader final : public Reader {
 public:
  explicit MemoryReader(ExternalSorter& s) : s_(s) {}
  Result<bool> Next(Record* r) override {
    if (i_ >= s_.order_.size()) return false;
    const Entry& e = s_.entries_[s_.order_[i_++].index];
    r->key = std::string_view(s_.arena_.data() + e.offset, e.key_len);
    r->value = std::string_view(s_.arena_.data() + e.offset + e.key_len, e.value_len);
    return true;
  }

 private:
  ExternalSorter& s_;
  size_t i_ = 0;
};

// Runs merged: the smallest key first; of equal keys, the older run first.
class ExternalSorter::MergeReader final : public Reader {
 public:
  static Result<std::unique_ptr<MergeReader>> Open(const std::vector<std::filesystem::path>& runs) {
    std::unique_ptr<MergeReader> m(new MergeReader());
    for (const auto& p : runs) {
      m->runs_.push_back(std::make_unique<RunFile>(p));
      COPSE_RETURN_IF_ERROR(m->runs_.back()->Open());
      COPSE_ASSIGN_OR_RETURN(bool more, m->runs_.back()->Next());
      if (more) m->heap_.push(m->runs_.size() - 1);
    }
    return m;
  }
  Result<bool> Next(Record* r) override {
    if (last_ >= 0) {  // the record handed out last: its run moves on
      COPSE_ASSIGN_OR_RETURN(bool more, runs_[static_cast<size_t>(last_)]->Next());
      if (more) heap_.push(static_cast<size_t>(last_));
      last_ = -1;
    }
    if (heap_.empty()) return false;
    size_t i = heap_.top();
    heap_.pop();
    last_ = static_cast<int64_t>(i);
    r->key = runs_[i]->key();
    r->value = runs_[i]->value();
    return true;
  }

 private:
  MergeReader() : heap_(Later{this}) {}
  struct Later {
    MergeReader* m;
    bool operator()(size_t a, size_t b) const {
      int c = m->runs_[a]->key().compare(m->runs_[b]->key());
      return c != 0 ? c > 0 : a > b;
    }
  };
  std::vector<std::unique_ptr<RunFile>> runs_;
  std::priority_queue<size_t, std::vector<size_t>, Later> heap_;
  int64_t last_ = -1;
};

ExternalSorter::ExternalSorter(std::filesystem::path dir, size_t memory_bytes, std::string name)
    : dir_(std::move(dir)),
      // A batch's offsets are 32-bit; records are at most 1 GiB each.
      memory_bytes_(std::clamp<size_t>(memory_bytes, 1, size_t{2} << 30)),
      name_(std::move(name)) {}

ExternalSorter::~ExternalSorter() {
  for (const auto& p : made_) {
    std::error_code ec;
    std::filesystem::remove(p, ec);
  }
}

namespace {

uint64_t KeyPrefix(std::string_view key) {
  uint64_t p = 0;
  const size_t n = std::min<size_t>(key.size(), 8);
  for (size_t i = 0; i < n; ++i) p |= uint64_t{static_cast<unsigned char>(key[i])} << (56 - 8 * i);
  return p;
}

}  // namespace

void ExternalSorter::Expect(uint64_t bytes) {
  const uint64_t cap = std::min<uint64_t>(bytes, memory_bytes_);
  arena_.reserve(static_cast<size_t>(cap));
  // Records of about 8 bytes (a short key, a short value) at most.
  entries_.reserve(static_cast<size_t>(cap / 8));
}

Status ExternalSorter::Add(std::string_view key, std::string_view value) {
  entries_.push_back({static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(key.size()),
                      static_cast<uint32_t>(value.size())});
  ++records_;
  arena_.append(key);
  arena_.append(value);
  if (memory_used() >= memory_bytes_) return Spill();
  return Status::Ok();
}

void ExternalSorter::SortBatch() {
  if (entries_.empty()) {
    order_.clear();
    return;
  }
  const char* base = arena_.data();
  const size_t n = entries_.size();
  order_.resize(n);
  scratch_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    order_[i] = {KeyPrefix(std::string_view(base + entries_[i].offset, entries_[i].key_len)),
                 static_cast<uint32_t>(i)};
  }
  // A stable LSD radix sort on the prefix, a byte a pass (passes over a
  // byte every record shares are skipped): equal prefixes stay in the order
  // they came.
  for (int shift = 0; shift < 64; shift += 8) {
    size_t count[257] = {};
    for (const Slot& s : order_) ++count[((s.prefix >> shift) & 0xff) + 1];
    if (count[((order_[0].prefix >> shift) & 0xff) + 1] == n) continue;
    for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
    for (const Slot& s : order_) scratch_[count[(s.prefix >> shift) & 0xff]++] = s;
    order_.swap(scratch_);
  }
  // Runs of one prefix hold one key, unless a key is longer than 8 bytes or
  // their lengths differ (a key ending in zero bytes): those runs are
  // sorted again by the whole key.
  auto key = [&](const Slot& s) {
    const Entry& e = entries_[s.index];
    return std::string_view(base + e.offset, e.key_len);
  };
  for (size_t i = 0; i < order_.size();) {
    size_t j = i + 1;
    bool mixed = false;
    const uint32_t len = entries_[order_[i].index].key_len;
    while (j < order_.size() && order_[j].prefix == order_[i].prefix) {
      const uint32_t l = entries_[order_[j].index].key_len;
      mixed |= l != len || l > 8;
      ++j;
    }
    mixed |= len > 8 && j - i > 1;
    if (mixed) {
      std::sort(order_.begin() + static_cast<std::ptrdiff_t>(i),
                order_.begin() + static_cast<std::ptrdiff_t>(j), [&](const Slot& a, const Slot& b) {
                  int c = key(a).compare(key(b));
                  return c != 0 ? c < 0 : a.index < b.index;
                });
    }
    i = j;
  }
}

std::filesystem::path ExternalSorter::NewRunPath() {
  std::filesystem::path p = dir_ / fmt::format("{}.run{}", name_, made_.size());
  made_.push_back(p);
  ++runs_made_;
  return p;
}

namespace {

// Writes records to a run file in big pieces.
class RunWriter {
 public:
  explicit RunWriter(const std::filesystem::path& p)
      : out_(p, std::ios::binary | std::ios::trunc), path_(p) {}
  void Add(std::string_view k, std::string_view v) {
    (void)AppendRecord(RecordFormat::kBinary, k, v, &buf_);
    if (buf_.size() >= (1 << 16)) Flush();
  }
  Result<uint64_t> Close() {
    Flush();
    out_.close();
    if (!out_) {
      return IoError(
          fmt::format("cannot write the sort run {}: {}", path_.string(), std::strerror(errno)));
    }
    return written_;
  }

 private:
  void Flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    written_ += buf_.size();
    buf_.clear();
  }
  std::ofstream out_;
  std::filesystem::path path_;
  std::string buf_;
  uint64_t written_ = 0;
};

}  // namespace

Status ExternalSorter::Spill() {
  if (entries_.empty()) return Status::Ok();
  SortBatch();
  std::filesystem::path p = NewRunPath();
  RunWriter w(p);
  for (const Slot& s : order_) {
    const Entry& e = entries_[s.index];
    w.Add(std::string_view(arena_.data() + e.offset, e.key_len),
          std::string_view(arena_.data() + e.offset + e.key_len, e.value_len));
  }
  COPSE_ASSIGN_OR_RETURN(uint64_t n, w.Close());
  spilled_bytes_ += n;
  runs_.push_back(p);
  entries_.clear();
  order_.clear();
  scratch_.clear();
  arena_.clear();
  arena_.shrink_to_fit();
  return Status::Ok();
}

Status ExternalSorter::MergeRuns(size_t first, size_t n) {
  std::vector<std::filesystem::path> group(runs_.begin() + static_cast<std::ptrdiff_t>(first),
                                           runs_.begin() + static_cast<std::ptrdiff_t>(first + n));
  COPSE_ASSIGN_OR_RETURN(auto in, MergeReader::Open(group));
  std::filesystem::path p = NewRunPath();
  RunWriter w(p);
  Record r;
  while (true) {
    COPSE_ASSIGN_OR_RETURN(bool more, in->Next(&r));
    if (!more) break;
    w.Add(r.key, r.value);
  }
  in.reset();
  COPSE_ASSIGN_OR_RETURN(uint64_t written, w.Close());
  spilled_bytes_ += written;
  for (const auto& old : group) {
    std::error_code ec;
    std::filesystem::remove(old, ec);
  }
  // The merged run takes the group's place: runs stay oldest first.
  runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(first),
              runs_.begin() + static_cast<std::ptrdiff_t>(first + n));
  runs_.insert(runs_.begin() + static_cast<std::ptrdiff_t>(first), p);
  return Status::Ok();
}

Result<std::unique_ptr<ExternalSorter::Reader>> ExternalSorter::Sorted() {
  if (runs_.empty()) {  // all in memory
    SortBatch();
    return std::unique_ptr<Reader>(std::make_unique<MemoryReader>(*this));
  }
  COPSE_RETURN_IF_ERROR(Spill());
  // Consecutive groups keep the order of equal keys: older runs first.
  while (runs_.size() > kMaxFanIn) {
    for (size_t first = 0; first + 1 < runs_.size() && runs_.size() > kMaxFanIn; ++first) {
      COPSE_RETURN_IF_ERROR(MergeRuns(first, std::min(kMaxFanIn, runs_.size() - first)));
    }
  }
  COPSE_ASSIGN_OR_RETURN(auto merged, MergeReader::Open(runs_));
  return std::unique_ptr<Reader>(std::move(merged));
}

Status ExternalSorter::Drain(const std::function<Status(const Record&)>& sink) {
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, Sorted());
  Record r;
  while (true) {
    COPSE_ASSIGN_OR_RETURN(bool more, reader->Next(&r));
    if (!more) return Status::Ok();
    COPSE_RETURN_IF_ERROR(sink(r));
  }
}

}  // namespace copse::apps

// ExternalSorter: sorts records by key (byte order) in bounded memory. Records
// are kept in memory until they take `memory_bytes`; then the batch is
// sorted and written to a run file in `dir` (binary records). At the end the
// runs and what is still in memory are merged, at most kMaxFanIn runs at a
// time (more are first merged into longer runs), so the open files stay
// bounded however much was sorted. Records of equal keys come out in the
// order they were added (a stable sort), so a reducer sees each key's values
// as the producers wrote them, producer by producer. Run files are removed
// when the sorter is destroyed.
// Thread-safety: one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "copse/status.h"
#include "copse/vertex.h"

namespace copse::apps {

class ExternalSorter {
 public:
  static constexpr size_t kMaxFanIn = 64;

  // REQUIRES: `dir` exists and is writable.
  ExternalSorter(std::filesystem::path dir, size_t memory_bytes, std::string name = "sort");
  ~ExternalSorter();
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;

  // kIoError naming the run file when a spill cannot be written (a full
  // disk).
  Status Add(std::string_view key, std::string_view value);
  // About how many bytes of records will come: memory for them is taken at
  // once (at most the sorter's bound) instead of grown by copying.
  void Expect(uint64_t bytes);

  // The sorted records, one at a time. REQUIRES: nothing is added once
  // reading began.
  class Reader {
   public:
    virtual ~Reader() = default;
    // False at the end. The record stays valid until the next call.
    virtual Result<bool> Next(Record* r) = 0;
  };
  Result<std::unique_ptr<Reader>> Sorted();
  // Hands every record to `sink` in key order.
  Status Drain(const std::function<Status(const Record&)>& sink);

  uint64_t records() const { return records_; }
  int runs() const { return runs_made_; }
  uint64_t spilled_bytes() const { return spilled_bytes_; }
  // What the batch in memory takes now (with its sort order to come).
  size_t memory_used() const {
    return arena_.size() + entries_.size() * (sizeof(Entry) + 2 * sizeof(Slot));
  }

 private:
  // A record of the batch in memory, in the order it came. Records are
  // small (a word and a count is a few bytes), so what is kept per record
  // is kept small: a batch is at most 4 GiB (its offsets are 32-bit).
  struct Entry {
    uint32_t offset;
    uint32_t key_len, value_len;
  };
  // Its place in the sorted order: `prefix` holds the key's first 8 bytes,
  // big-endian and zero-padded, so most comparisons of short keys need
  // neither the arena nor memcmp; `index` (into entries_) breaks ties, which
  // keeps equal keys in the order they came.
#pragma pack(push, 4)
  struct Slot {
    uint64_t prefix;
    uint32_t index;
  };
#pragma pack(pop)
  class MemoryReader;
  class MergeReader;
  void SortBatch();
  Status Spill();
  // Merges the runs in [first, first + n) into one new run.
  Status MergeRuns(size_t first, size_t n);
  std::filesystem::path NewRunPath();

  std::filesystem::path dir_;
  size_t memory_bytes_;
  std::string name_;
  std::string arena_;                        // keys and values of the batch in memory
  std::vector<Entry> entries_;               // the batch, by where its bytes are
  std::vector<Slot> order_;                  // the batch sorted (SortBatch)
  std::vector<Slot> scratch_;                // the radix sort's other buffer
  std::vector<std::filesystem::path> runs_;  // unmerged runs, oldest first
  std::vector<std::filesystem::path> made_;  // every run file made, to remove
  int runs_made_ = 0;
  uint64_t records_ = 0;
  uint64_t spilled_bytes_ = 0;
};

}  // namespace copse::apps

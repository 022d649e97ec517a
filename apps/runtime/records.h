// Records as bytes (copse/vertex.h RecordFormat): a parser that takes a
// stream cut at arbitrary points and hands out whole records, and the one
// writer of each format. The vertex runtime's ReadLines, ReadRecords and
// Emit and the streaming adapter (apps/streaming/) use them.
// Thread-safety: a RecordParser belongs to one thread; the rest are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "copse/status.h"
#include "copse/vertex.h"

namespace copse::apps {

// Splits a text line into key and value at its first TAB (no TAB: all key).
Record SplitTextLine(std::string_view line);

// Appends `r` to `out` in `format`. kInvalidArgument, naming `what` (for
// example "record 12 of the program's output"), for a record the text
// format cannot hold (a key with a TAB or '\n', a value with '\n').
Status AppendRecord(RecordFormat format, std::string_view key, std::string_view value,
                    std::string* out, std::string_view what = "a record");

// AppendRecord for a record a RecordParser of the same format gave (so the
// text format can hold it): no checks.
void AppendParsedRecord(RecordFormat format, std::string_view key, std::string_view value,
                        std::string* out);

// Reassembles records from pieces of a stream.
class RecordParser {
 public:
  // `where` names the stream in messages ("input 2", "the program's
  // output").
  RecordParser(RecordFormat format, size_t max_record_bytes, std::string where);

  // Hands every whole record in `bytes` (and what earlier pieces left
  // over) to `sink`. kResourceExhausted naming the record's number for one
  // over the limit; the sink's own error as it is.
  Status Feed(std::span<const uint8_t> bytes, const std::function<Status(const Record&)>& sink);
  // The stream ended: a last text line without '\n' is a record; a binary
  // record cut short is kInvalidArgument.
  Status End(const std::function<Status(const Record&)>& sink);

  uint64_t records() const { return records_; }
  // During a sink's call: the record's bytes as they came (a text line
  // without its '\n'; a binary record with its lengths).
  std::string_view raw() const { return raw_; }

 private:
  Status Emit(std::string_view bytes, const std::function<Status(const Record&)>& sink);
  Status TooLong() const;
  // The binary format: how many bytes the record at the start of `buf`
  // spans, 0 when it is not all there yet.
  Result<size_t> BinaryRecordSize(std::string_view buf) const;

  RecordFormat format_;
  size_t max_;
  std::string where_;
  std::string carry_;  // the start of a record the last piece cut
  std::string_view raw_;
  uint64_t records_ = 0;
};

}  // namespace copse::apps

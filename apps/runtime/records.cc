#include "apps/runtime/records.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace copse::apps {
namespace {

void PutLength(uint32_t n, std::string* out) {
  const char b[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                     static_cast<char>(n >> 8), static_cast<char>(n)};
  out->append(b, 4);
}

uint32_t GetLength(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

}  // namespace

Record SplitTextLine(std::string_view line) {
  size_t tab = line.find('\t');
  if (tab == std::string_view::npos) return {line, {}};
  return {line.substr(0, tab), line.substr(tab + 1)};
}

void AppendParsedRecord(RecordFormat format, std::string_view key, std::string_view value,
                        std::string* out) {
  if (format == RecordFormat::kBinary) {
    PutLength(static_cast<uint32_t>(key.size()), out);
    out->append(key);
    PutLength(static_cast<uint32_t>(value.size()), out);
    out->append(value);
    return;
  }
  out->append(key);
  if (!value.empty()) {
    out->push_back('\t');
    out->append(value);
  }
  out->push_back('\n');
}

Status AppendRecord(RecordFormat format, std::string_view key, std::string_view value,
                    std::string* out, std::string_view what) {
  if (format == RecordFormat::kBinary) {
    if (key.size() > UINT32_MAX || value.size() > UINT32_MAX) {
      return InvalidArgument(fmt::format("{}: over 4 GiB", what));
    }
    PutLength(static_cast<uint32_t>(key.size()), out);
    out->append(key);
    PutLength(static_cast<uint32_t>(value.size()), out);
    out->append(value);
    return Status::Ok();
  }
  if (key.find_first_of("\t\n") != std::string_view::npos) {
    return InvalidArgument(
        fmt::format("{}: a key holds a TAB or a newline, which the text format cannot "
                    "hold (use the binary format)",
                    what));
  }
  if (value.find('\n') != std::string_view::npos) {
    return InvalidArgument(fmt::format(
        "{}: a value holds a newline, which the text format cannot hold (use the binary format)",
        what));
  }
  out->append(key);
  if (!value.empty()) {
    out->push_back('\t');
    out->append(value);
  }
  out->push_back('\n');
  return Status::Ok();
}

RecordParser::RecordParser(RecordFormat format, size_t max_record_bytes, std::string where)
    : format_(format), max_(max_record_bytes), where_(std::move(where)) {}

Status RecordParser::TooLong() const {
  return ResourceExhausted(fmt::format("{}: {} {} is longer than the limit of {} bytes", where_,
                                       format_ == RecordFormat::kText ? "line" : "record",
                                       records_ + 1, max_));
}

Status RecordParser::Emit(std::string_view bytes,
                          const std::function<Status(const Record&)>& sink) {
  Record r;
  raw_ = bytes;
  if (format_ == RecordFormat::kText) {
    r = SplitTextLine(bytes);
  } else {
    uint32_t klen = GetLength(bytes.data());
    r.key = bytes.substr(4, klen);
    r.value = bytes.substr(8 + klen);
  }
  ++records_;
  return sink(r);
}

Result<size_t> RecordParser::BinaryRecordSize(std::string_view buf) const {
  if (buf.size() < 4) return size_t{0};
  uint64_t klen = GetLength(buf.data());
  if (klen + 8 > max_ + 8) return TooLong();
  if (buf.size() < 8 + klen) return size_t{0};
  uint64_t vlen = GetLength(buf.data() + 4 + klen);
  if (klen + vlen > max_) return TooLong();
  if (buf.size() < 8 + klen + vlen) return size_t{0};
  return static_cast<size_t>(8 + klen + vlen);
}

Status RecordParser::Feed(std::span<const uint8_t> bytes,
                          const std::function<Status(const Record&)>& sink) {
  std::string_view in(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (format_ == RecordFormat::kText) {
    while (!in.empty()) {
      size_t nl = in.find('\n');
      if (nl == std::string_view::npos) {
        if (carry_.size() + in.size() > max_) return TooLong();
        carry_.append(in);
        return Status::Ok();
      }
      if (carry_.size() + nl > max_) return TooLong();
      if (carry_.empty()) {
        COPSE_RETURN_IF_ERROR(Emit(in.substr(0, nl), sink));
      } else {
        carry_.append(in.substr(0, nl));
        COPSE_RETURN_IF_ERROR(Emit(carry_, sink));
        carry_.clear();
      }
      in.remove_prefix(nl + 1);
    }
    return Status::Ok();
  }
  // Binary: complete the carried record first, then records in place.
  while (!carry_.empty() && !in.empty()) {
    COPSE_ASSIGN_OR_RETURN(size_t need, BinaryRecordSize(carry_));
    if (need != 0) break;
    // Take just enough to know the size, or to finish the record.
    size_t want = carry_.size() < 4 ? 4 - carry_.size() : 0;
    if (want == 0) {
      uint64_t klen = GetLength(carry_.data());
      if (carry_.size() < 8 + klen) {
        want = static_cast<size_t>(8 + klen - carry_.size());
      } else {
        uint64_t vlen = GetLength(carry_.data() + 4 + klen);
        want = static_cast<size_t>(8 + klen + vlen - carry_.size());
      }
    }
    size_t take = std::min(want, in.size());
    carry_.append(in.substr(0, take));
    in.remove_prefix(take);
  }
  if (!carry_.empty()) {
    COPSE_ASSIGN_OR_RETURN(size_t need, BinaryRecordSize(carry_));
    if (need == 0) return Status::Ok();  // `in` is used up
    COPSE_RETURN_IF_ERROR(Emit(carry_, sink));
    carry_.clear();
  }
  while (!in.empty()) {
    COPSE_ASSIGN_OR_RETURN(size_t need, BinaryRecordSize(in));
    if (need == 0) {
      carry_.assign(in);
      return Status::Ok();
    }
    COPSE_RETURN_IF_ERROR(Emit(in.substr(0, need), sink));
    in.remove_prefix(need);
  }
  return Status::Ok();
}

Status RecordParser::End(const std::function<Status(const Record&)>& sink) {
  if (carry_.empty()) return Status::Ok();
  if (format_ == RecordFormat::kText) {
    Status s = Emit(carry_, sink);
    carry_.clear();
    return s;
  }
  return InvalidArgument(fmt::format("{}: record {} is cut short ({} bytes of a binary record)",
                                     where_, records_ + 1, carry_.size()));
}

}  // namespace copse::apps

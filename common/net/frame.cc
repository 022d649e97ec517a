#include "common/net/frame.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace copse::net {

const char* ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kAuth:
      return "auth";
    case Protocol::kCluster:
      return "cluster";
    case Protocol::kScheduling:
      return "scheduling";
    case Protocol::kDfs:
      return "dfs";
    case Protocol::kJob:
      return "job";
  }
  return "unknown";
}

std::array<uint8_t, kFrameHeaderSize> EncodeFrameHeader(Protocol protocol, PayloadKind kind,
                                                        uint32_t size) {
  return {kMagic0,
          kMagic1,
          static_cast<uint8_t>(protocol),
          static_cast<uint8_t>(kind),
          static_cast<uint8_t>(size),
          static_cast<uint8_t>(size >> 8),
          static_cast<uint8_t>(size >> 16),
          static_cast<uint8_t>(size >> 24)};
}

Status FrameDecoder::StartPayload() {
  if (header_[0] != kMagic0 || header_[1] != kMagic1) {
    return Corruption(
        fmt::format("bad frame magic {:02x}{:02x} (not a Copse peer?)", header_[0], header_[1]));
  }
  uint8_t proto = header_[2];
  if (proto < static_cast<uint8_t>(Protocol::kAuth) || proto > static_cast<uint8_t>(Protocol::kJob))
    return Corruption(fmt::format("unknown protocol id {} in frame header", proto));
  uint8_t kind = header_[3];
  if (kind > static_cast<uint8_t>(PayloadKind::kRaw))
    return Corruption(fmt::format("unknown payload kind {} in frame header", kind));
  uint32_t size = static_cast<uint32_t>(header_[4]) | (static_cast<uint32_t>(header_[5]) << 8) |
                  (static_cast<uint32_t>(header_[6]) << 16) |
                  (static_cast<uint32_t>(header_[7]) << 24);
  if (size > max_payload_) {
    return ResourceExhausted(
        fmt::format("frame of {} bytes exceeds the limit of {} bytes", size, max_payload_));
  }
  if (kind == static_cast<uint8_t>(PayloadKind::kMessage) && (size == 0 || size % 8 != 0)) {
    return Corruption(
        fmt::format("message frame of {} bytes is not a whole number of 8-byte words", size));
  }
  current_ = Frame{static_cast<Protocol>(proto), static_cast<PayloadKind>(kind), {}};
  // Reserved, not resized: bytes are appended as they arrive (no memset of
  // the whole payload first), and room for reading straight into the payload
  // is zero-filled a piece at a time (MissingPayload), while it is cache-hot.
  current_.payload.reserve(size);
  payload_size_ = size;
  payload_fill_ = 0;
  in_payload_ = true;
  return Status::Ok();
}

void FrameDecoder::FinishFrameIfComplete(std::vector<Frame>* out) {
  if (!in_payload_ || payload_fill_ < payload_size_) return;
  out->push_back(std::move(current_));
  current_ = Frame{};
  in_payload_ = false;
  header_fill_ = 0;
  payload_fill_ = 0;
  payload_size_ = 0;
}

std::span<uint8_t> FrameDecoder::MissingPayload(size_t piece) {
  if (failed_ || !in_payload_ || payload_fill_ == payload_size_) return {};
  std::vector<uint8_t>& p = current_.payload;
  if (p.size() == payload_fill_) {
    // Within the reserved capacity: the storage does not move.
    p.resize(payload_fill_ + std::min(std::max<size_t>(piece, 1), payload_size_ - payload_fill_));
  }
  return std::span<uint8_t>(p).subspan(payload_fill_);
}

void FrameDecoder::PayloadArrived(size_t n, std::vector<Frame>* out) {
  if (!in_payload_) return;
  payload_fill_ += std::min(n, current_.payload.size() - payload_fill_);
  FinishFrameIfComplete(out);
}

Status FrameDecoder::Feed(std::span<const uint8_t> bytes, std::vector<Frame>* out) {
  if (failed_) return FailedPrecondition("frame decoder already failed");
  while (!bytes.empty()) {
    if (!in_payload_) {
      size_t take = std::min(bytes.size(), kFrameHeaderSize - header_fill_);
      std::memcpy(header_.data() + header_fill_, bytes.data(), take);
      header_fill_ += take;
      bytes = bytes.subspan(take);
      if (header_fill_ < kFrameHeaderSize) break;
      Status s = StartPayload();
      if (!s.ok()) {
        failed_ = true;
        return s;
      }
    }
    size_t take = std::min(bytes.size(), payload_size_ - payload_fill_);
    std::vector<uint8_t>& p = current_.payload;
    // Into room MissingPayload prepared, then appended.
    size_t into_room = std::min(take, p.size() - payload_fill_);
    if (into_room > 0) std::memcpy(p.data() + payload_fill_, bytes.data(), into_room);
    if (take > into_room) {
      p.insert(p.end(), bytes.begin() + static_cast<ptrdiff_t>(into_room),
               bytes.begin() + static_cast<ptrdiff_t>(take));
    }
    payload_fill_ += take;
    bytes = bytes.subspan(take);
    FinishFrameIfComplete(out);
  }
  return Status::Ok();
}

std::string FrameDecoder::PartialDescription() const {
  if (in_payload_) {
    return fmt::format("truncated frame: got {} of {} payload bytes", payload_fill_, payload_size_);
  }
  return fmt::format("truncated frame: got {} of {} header bytes", header_fill_, kFrameHeaderSize);
}

}  // namespace copse::net

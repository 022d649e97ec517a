// Framing for every Copse connection (docs/design.md §3). A frame is an 8-byte
// header followed by a payload:
//
//   bytes 0-1  magic 0xC0 0x5E
//   byte  2    protocol (auth, cluster, scheduling, dfs, job)
//   byte  3    payload kind: a Cap'n Proto message (flat array, a multiple of
//              8 bytes) or raw bytes (bulk block data)
//   bytes 4-7  payload length, little-endian
//
// FrameDecoder turns a byte stream into frames. It checks the header (magic,
// protocol, kind, the size limit) before it allocates the payload, so an
// oversized or garbage frame costs nothing. Thread-safety: not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "copse/status.h"

namespace copse::net {

enum class Protocol : uint8_t { kAuth = 1, kCluster = 2, kScheduling = 3, kDfs = 4, kJob = 5 };
enum class PayloadKind : uint8_t { kMessage = 0, kRaw = 1 };

inline constexpr size_t kFrameHeaderSize = 8;
inline constexpr uint8_t kMagic0 = 0xC0;
inline constexpr uint8_t kMagic1 = 0x5E;

const char* ProtocolName(Protocol p);

struct Frame {
  Protocol protocol = Protocol::kAuth;
  PayloadKind kind = PayloadKind::kMessage;
  // Heap storage from operator new, so data() is aligned for Cap'n Proto words.
  std::vector<uint8_t> payload;
};

// The header for a payload of `size` bytes.
std::array<uint8_t, kFrameHeaderSize> EncodeFrameHeader(Protocol protocol, PayloadKind kind,
                                                        uint32_t size);

class FrameDecoder {
 public:
  explicit FrameDecoder(size_t max_payload) : max_payload_(max_payload) {}

  // Frames larger than this are refused at their header.
  void set_max_payload(size_t max_payload) { max_payload_ = max_payload; }
  size_t max_payload() const { return max_payload_; }

  // Consumes `bytes`, appending each completed frame to `out`. Returns an
  // error (kCorruption for garbage, kResourceExhausted for an oversized frame)
  // at the first bad header; the decoder is then unusable.
  Status Feed(std::span<const uint8_t> bytes, std::vector<Frame>* out);

  // While a frame's payload is being received: room for the next bytes of
  // it (at most `piece` of them, zero-filled when first offered), into which
  // the caller may read straight from the stream (no copy through a read
  // buffer) and then report them with PayloadArrived. Empty between frames
  // and after a failure.
  std::span<uint8_t> MissingPayload(size_t piece);
  // The first `n` bytes of the last MissingPayload() arrived (REQUIRES: n is
  // at most its size); appends the frame to `out` when it is complete.
  void PayloadArrived(size_t n, std::vector<Frame>* out);

  // True when part of a frame has been received: the stream ending now would
  // truncate it. `PartialDescription` says how much arrived.
  bool HasPartialFrame() const { return header_fill_ > 0 || in_payload_; }
  std::string PartialDescription() const;

 private:
  Status StartPayload();
  void FinishFrameIfComplete(std::vector<Frame>* out);

  size_t max_payload_;
  std::array<uint8_t, kFrameHeaderSize> header_{};
  size_t header_fill_ = 0;
  bool in_payload_ = false;
  bool failed_ = false;
  // The frame being received. Its payload holds the bytes received so far
  // (payload_fill_), then any room MissingPayload offered that is not yet
  // filled; its capacity is the frame's size.
  Frame current_;
  size_t payload_size_ = 0;  // of the frame being received (from its header)
  size_t payload_fill_ = 0;  // bytes of it received so far
};

}  // namespace copse::net

// The local read path's wire format and socket helpers, shared by its client
// (dfs/local_read.h) and its server (dfs/local_read_server.h). Internal to
// those two; include from their .cc files only.
//
// Wire format (little-endian):
//   worker: "CPSL" u32 version nonce[32]        client: nonce[32] proof[32]
//   worker: proof[32]
//   client: "RDBK" u32 first_chunk u64 block    (repeated)
//   worker: "RPLY" u32 code u64 size u32 chunks u32 first u32 files u32 n
//           + n x (u32 file u32 length u64 offset) when code is 0 (ok), with
//             `files` descriptors attached; else n bytes of error text.
//
// Thread-safety: pure functions and blocking I/O on a descriptor the caller
// owns; thread-safe.
#pragma once

#include <sys/un.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "common/net/auth.h"
#include "copse/status.h"

namespace copse::dfs::local_read_wire {

inline constexpr uint32_t kHelloMagic = 0x4c535043;    // "CPSL"
inline constexpr uint32_t kRequestMagic = 0x4b424452;  // "RDBK"
inline constexpr uint32_t kReplyMagic = 0x594c5052;    // "RPLY"
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kHelloSize = 8 + net::kNonceSize;
inline constexpr size_t kProofSize = 32;  // HMAC-SHA256
inline constexpr size_t kRequestSize = 16;
inline constexpr size_t kReplyHeaderSize = 32;
inline constexpr size_t kChunkRecordSize = 16;
inline constexpr size_t kMaxFilesPerReply = 250;  // below the kernel's SCM_MAX_FD
inline constexpr size_t kMaxErrorText = 4096;

inline void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t Get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
inline uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Sets the socket's send and receive timeouts.
void SetTimeouts(int fd, std::chrono::milliseconds t);
// `what` failed with `err`: kDeadlineExceeded for a timeout, else kIoError.
Status Errno(const std::string& what, int err);
// Sends exactly n bytes.
Status WriteAll(int fd, const uint8_t* p, size_t n, const char* what);
// Reads exactly n bytes; kDisconnected when the peer closes first.
Status ReadAll(int fd, uint8_t* p, size_t n, const char* what);
// Fills *addr with the Unix-domain address `path`; kInvalidArgument when the
// path is too long for one.
Status BindPath(const std::filesystem::path& path, sockaddr_un* addr);

}  // namespace copse::dfs::local_read_wire

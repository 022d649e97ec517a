// CRC32C (Castagnoli), the checksum the DFS keeps for every 1 MiB chunk of a
// block (docs/design.md §4). Uses the SSE4.2 crc32 instruction when the CPU has it
// and a portable table-driven version otherwise, and with AVX-512 VPCLMULQDQ
// carry-less multiplication folding, about twice as fast again; all give the
// same values (RFC 3720's test vectors are in crc32c_test.cc).
// Thread-safety: pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <span>

namespace copse::dfs {

// The CRC32C of `data`.
uint32_t Crc32c(std::span<const uint8_t> data);

// The CRC32C of the bytes whose CRC is `crc` followed by `data`, so that
// Crc32cExtend(Crc32c(a), b) == Crc32c(a + b).
uint32_t Crc32cExtend(uint32_t crc, std::span<const uint8_t> data);

// The implementations, fastest last. kLanes: three interleaved lanes of the
// SSE4.2 crc32 instruction; kFold: carry-less multiplication folding with
// AVX-512 VPCLMULQDQ over 64 bytes at a time (buffers of 256 bytes and more;
// shorter ones and the remainder go through kLanes).
enum class Crc32cKind { kPortable, kLanes, kFold };

// The best implementation this CPU has; Crc32cExtend uses it.
Crc32cKind Crc32cBestKind();

// Crc32cExtend through implementation `kind`, or the best one below it that
// this CPU has; exposed so tests can compare them.
uint32_t Crc32cExtendWith(Crc32cKind kind, uint32_t crc, std::span<const uint8_t> data);

// The portable implementation, exposed so tests can compare the two.
uint32_t Crc32cPortableExtend(uint32_t crc, std::span<const uint8_t> data);

// True when Crc32c uses the CPU's crc32 instruction.
bool Crc32cIsHardware();

}  // namespace copse::dfs

#include "dfs/crc32c.h"

#include <array>
#include <cstring>

namespace copse::dfs {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // reflected Castagnoli polynomial

// Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t HardwareExtend(uint32_t crc, const uint8_t* p,
                                                          size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = __builtin_ia32_crc32qi(static_cast<uint32_t>(c), *p++);
    --n;
  }
  // Four independent 8-byte lanes would need a combine step; one lane already
  // runs at several GB/s, far above what a chunk's trip through the DFS costs.
  while (n >= 32) {
    c = __builtin_ia32_crc32di(c, Load64(p));
    c = __builtin_ia32_crc32di(c, Load64(p + 8));
    c = __builtin_ia32_crc32di(c, Load64(p + 16));
    c = __builtin_ia32_crc32di(c, Load64(p + 24));
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    c = __builtin_ia32_crc32di(c, Load64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = __builtin_ia32_crc32qi(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return ~static_cast<uint32_t>(c);
}

const bool kHaveHardware = __builtin_cpu_supports("sse4.2");
#else
const bool kHaveHardware = false;
#endif

}  // namespace

uint32_t Crc32cPortableExtend(uint32_t crc, std::span<const uint8_t> data) {
  uint32_t c = ~crc;
  const uint8_t* p = data.data();
  size_t n = data.size();
  while (n >= 8) {
    uint64_t v = Load64(p) ^ c;  // little-endian hosts only, as Copse requires
    c = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
        kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^ kTables[2][(v >> 40) & 0xff] ^
        kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xff];
    --n;
  }
  return ~c;
}

uint32_t Crc32cExtend(uint32_t crc, std::span<const uint8_t> data) {
#if defined(__x86_64__)
  if (kHaveHardware) return HardwareExtend(crc, data.data(), data.size());
#endif
  return Crc32cPortableExtend(crc, data);
}

uint32_t Crc32c(std::span<const uint8_t> data) { return Crc32cExtend(0, data); }

bool Crc32cIsHardware() { return kHaveHardware; }

}  // namespace copse::dfs

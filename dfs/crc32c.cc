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
// The crc32 instruction has a latency of three cycles and a throughput of one
// per cycle, so one dependent chain runs at a third of the possible speed.
// Long buffers are cut into three adjacent lanes computed at once; the lanes'
// CRCs are then combined by "shifting" a CRC over a lane's length of zero
// bytes, a linear map over GF(2) tabulated once per lane length (the method
// of Mark Adler's crc32c.c).
constexpr size_t kLongLane = 8192;
constexpr size_t kShortLane = 256;

uint32_t Gf2MatrixTimes(const uint32_t* mat, uint32_t vec) {
  uint32_t sum = 0;
  for (; vec != 0; vec >>= 1, ++mat) {
    if (vec & 1) sum ^= *mat;
  }
  return sum;
}

void Gf2MatrixSquare(uint32_t* square, const uint32_t* mat) {
  for (int n = 0; n < 32; ++n) square[n] = Gf2MatrixTimes(mat, mat[n]);
}

// Tables that advance a CRC over `len` zero bytes (len a power of two).
using ShiftTables = std::array<std::array<uint32_t, 256>, 4>;

ShiftTables MakeShiftTables(size_t len) {
  uint32_t even[32], odd[32];
  odd[0] = kPoly;  // one zero bit
  for (int n = 1; n < 32; ++n) odd[n] = 1u << (n - 1);
  Gf2MatrixSquare(even, odd);  // two zero bits
  Gf2MatrixSquare(odd, even);  // four zero bits
  const uint32_t* op = nullptr;
  for (;;) {
    Gf2MatrixSquare(even, odd);  // 1, 4, 16, ... zero bytes
    len >>= 1;
    if (len == 0) {
      op = even;
      break;
    }
    Gf2MatrixSquare(odd, even);  // 2, 8, 32, ... zero bytes
    len >>= 1;
    if (len == 0) {
      op = odd;
      break;
    }
  }
  ShiftTables t{};
  for (uint32_t n = 0; n < 256; ++n) {
    for (int k = 0; k < 4; ++k) t[k][n] = Gf2MatrixTimes(op, n << (8 * k));
  }
  return t;
}

const ShiftTables kLongShift = MakeShiftTables(kLongLane);
const ShiftTables kShortShift = MakeShiftTables(kShortLane);

uint32_t Shift(const ShiftTables& t, uint32_t crc) {
  return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

__attribute__((target("sse4.2"))) uint64_t ThreeLanes(uint64_t c0, const uint8_t** p, size_t* n,
                                                      size_t lane, const ShiftTables& shift) {
  while (*n >= 3 * lane) {
    uint64_t c1 = 0, c2 = 0;
    const uint8_t* q = *p;
    const uint8_t* end = q + lane;
    while (q < end) {
      c0 = __builtin_ia32_crc32di(c0, Load64(q));
      c1 = __builtin_ia32_crc32di(c1, Load64(q + lane));
      c2 = __builtin_ia32_crc32di(c2, Load64(q + 2 * lane));
      q += 8;
    }
    c0 = Shift(shift, static_cast<uint32_t>(c0)) ^ c1;
    c0 = Shift(shift, static_cast<uint32_t>(c0)) ^ c2;
    *p += 3 * lane;
    *n -= 3 * lane;
  }
  return c0;
}

__attribute__((target("sse4.2"))) uint32_t HardwareExtend(uint32_t crc, const uint8_t* p,
                                                          size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = __builtin_ia32_crc32qi(static_cast<uint32_t>(c), *p++);
    --n;
  }
  c = ThreeLanes(c, &p, &n, kLongLane, kLongShift);
  c = ThreeLanes(c, &p, &n, kShortLane, kShortShift);
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

#include "dfs/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

// Folding with carry-less multiplication (the method of Intel's "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ"), 64 bytes per
// instruction with AVX-512's VPCLMULQDQ: about twice the crc32 lanes' speed.
// Four 512-bit accumulators each hold 64 bytes of message; folding an
// accumulator forward by D bits replaces it by a 128-bit-per-lane value
// congruent to it times x^D modulo the polynomial, XORed into the data D bits
// further on. The last 16 bytes go through the crc32 instruction, which does
// the final reduction.
//
// In the reflected representation a 64-bit word's bit t is the coefficient of
// degree 63 - t. For a 128-bit lane whose low word L precedes its high word H,
// L x^(D+64) + H x^D is obtained as clmul(L, k(D+32)) ^ clmul(H, k(D-32)),
// where k(e) is x^e mod P bit-reflected into 32 bits and shifted left by one
// (the product of two reflected words is itself reflected, one bit short).

// x^e mod P in the ordinary (unreflected) representation, P = x^32 + 0x1EDC6F41.
uint32_t XPowMod(uint64_t e) {
  auto mulmod = [](uint32_t a, uint32_t b) {
    uint64_t prod = 0;
    for (int i = 0; i < 32; ++i) {
      if ((b >> i) & 1) prod ^= static_cast<uint64_t>(a) << i;
    }
    for (int i = 63; i >= 32; --i) {
      if ((prod >> i) & 1) prod ^= 0x11EDC6F41ull << (i - 32);
    }
    return static_cast<uint32_t>(prod);
  };
  uint32_t base = 2, result = 1;  // x, 1
  for (; e != 0; e >>= 1) {
    if (e & 1) result = mulmod(result, base);
    base = mulmod(base, base);
  }
  return result;
}

uint64_t FoldConstant(uint64_t e) {
  uint32_t r = XPowMod(e), reflected = 0;
  for (int i = 0; i < 32; ++i) {
    if ((r >> i) & 1) reflected |= 1u << (31 - i);
  }
  return static_cast<uint64_t>(reflected) << 1;
}

// The two constants that fold a 128-bit lane forward by `bits`.
struct FoldBy {
  explicit FoldBy(uint64_t bits) : low(FoldConstant(bits + 32)), high(FoldConstant(bits - 32)) {}
  uint64_t low, high;
};

const FoldBy kFold2048(2048), kFold512(512), kFold384(384), kFold256(256), kFold128(128);

#define COPSE_FOLD_TARGET \
  __attribute__((target("avx512f,avx512vl,avx512bw,vpclmulqdq,pclmul,sse4.2")))

COPSE_FOLD_TARGET __m512i Fold512(__m512i x, __m512i k, __m512i data) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                   _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}

COPSE_FOLD_TARGET __m128i Fold128(__m128i x, const FoldBy& f, __m128i data) {
  __m128i k = _mm_set_epi64x(static_cast<int64_t>(f.high), static_cast<int64_t>(f.low));
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), data);
}

// `f` in each 128-bit lane.
COPSE_FOLD_TARGET __m512i Constants512(const FoldBy& f) {
  auto lo = static_cast<int64_t>(f.low), hi = static_cast<int64_t>(f.high);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

COPSE_FOLD_TARGET __m512i Load512(const uint8_t* p) { return _mm512_loadu_si512(p); }

// Extends `crc` over at least kFoldMin bytes, all but fewer than 256 of them
// by folding; the rest by HardwareExtend.
constexpr size_t kFoldMin = 256;

COPSE_FOLD_TARGET uint32_t FoldExtend(uint32_t crc, const uint8_t* p, size_t n) {
  const __m512i k2048 = Constants512(kFold2048), k512 = Constants512(kFold512);
  __m512i x0 = Load512(p), x1 = Load512(p + 64), x2 = Load512(p + 128), x3 = Load512(p + 192);
  // The running CRC enters as if XORed into the message's first four bytes.
  x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(~crc))));
  p += 256;
  n -= 256;
  for (; n >= 256; p += 256, n -= 256) {
    x0 = Fold512(x0, k2048, Load512(p));
    x1 = Fold512(x1, k2048, Load512(p + 64));
    x2 = Fold512(x2, k2048, Load512(p + 128));
    x3 = Fold512(x3, k2048, Load512(p + 192));
  }
  x1 = Fold512(x0, k512, x1);
  x2 = Fold512(x1, k512, x2);
  x3 = Fold512(x2, k512, x3);
  alignas(64) __m128i lane[4];
  _mm512_store_si512(lane, x3);
  __m128i r = Fold128(lane[0], kFold384, lane[3]);
  r = Fold128(lane[1], kFold256, r);
  r = Fold128(lane[2], kFold128, r);
  uint64_t c = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(r)));
  c = _mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(r, 1)));
  return HardwareExtend(~static_cast<uint32_t>(c), p, n);
}

#undef COPSE_FOLD_TARGET

const bool kHaveHardware = __builtin_cpu_supports("sse4.2");
const bool kHaveFold = kHaveHardware && __builtin_cpu_supports("pclmul") &&
                       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("vpclmulqdq");
#else
const bool kHaveHardware = false;
const bool kHaveFold = false;
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

uint32_t Crc32cExtendWith(Crc32cKind kind, uint32_t crc, std::span<const uint8_t> data) {
  switch (kind) {
#if defined(__x86_64__)
    case Crc32cKind::kFold:
      if (kHaveFold && data.size() >= kFoldMin) return FoldExtend(crc, data.data(), data.size());
      [[fallthrough]];
    case Crc32cKind::kLanes:
      if (kHaveHardware) return HardwareExtend(crc, data.data(), data.size());
      [[fallthrough]];
#else
    case Crc32cKind::kFold:
    case Crc32cKind::kLanes:
#endif
    case Crc32cKind::kPortable:
      break;
  }
  return Crc32cPortableExtend(crc, data);
}

uint32_t Crc32cExtend(uint32_t crc, std::span<const uint8_t> data) {
  return Crc32cExtendWith(Crc32cBestKind(), crc, data);
}

Crc32cKind Crc32cBestKind() {
  return kHaveFold ? Crc32cKind::kFold : kHaveHardware ? Crc32cKind::kLanes : Crc32cKind::kPortable;
}

uint32_t Crc32c(std::span<const uint8_t> data) { return Crc32cExtend(0, data); }

bool Crc32cIsHardware() { return kHaveHardware; }

}  // namespace copse::dfs

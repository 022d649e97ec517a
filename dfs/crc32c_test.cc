#include "dfs/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace copse::dfs {
namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(Crc32c(Bytes("")), 0u);
  EXPECT_EQ(Crc32c(Bytes("123456789")), 0xE3069283u);
  // RFC 3720, appendix B.4.
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xff), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<uint8_t>(i);
    down[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(Crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(up), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(down), 0x113FDB5Cu);
}

TEST(Crc32cTest, HardwareAndPortableAgreeOnEveryLengthAndAlignment) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> buf(4096 + 16);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t len : {0, 1, 7, 8, 9, 31, 32, 33, 100, 1000, 4096}) {
      std::span<const uint8_t> s(buf.data() + offset, len);
      EXPECT_EQ(Crc32c(s), Crc32cPortableExtend(0, s)) << offset << " " << len;
    }
  }
}

TEST(Crc32cTest, HardwareAndPortableAgreeOnLongBuffers) {
  // Long enough for the three-lane paths (3 x 8 KiB and 3 x 256 bytes) and
  // their remainders.
  std::mt19937_64 rng(11);
  std::vector<uint8_t> buf((1u << 20) + 64);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t offset : {0u, 3u}) {
    for (size_t len : {767u, 768u, 769u, 24575u, 24576u, 24577u, 24576u + 768u + 13u, 1u << 20}) {
      std::span<const uint8_t> s(buf.data() + offset, len);
      EXPECT_EQ(Crc32c(s), Crc32cPortableExtend(0, s)) << offset << " " << len;
      EXPECT_EQ(Crc32cExtend(0x12345678, s), Crc32cPortableExtend(0x12345678, s)) << len;
    }
  }
}

TEST(Crc32cTest, FoldingAgreesWithLanesAndPortable) {
  if (Crc32cBestKind() != Crc32cKind::kFold)
    GTEST_SKIP() << "this CPU has no AVX-512 VPCLMULQDQ: the folding path is not used";
  // Lengths around the fold's 256-byte step and 64-byte lanes, odd offsets,
  // and a non-zero running CRC.
  std::mt19937_64 rng(13);
  std::vector<uint8_t> buf((1u << 20) + 4096);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t offset : {0u, 1u, 5u, 12u, 63u}) {
    for (size_t len : {255u, 256u, 257u, 319u, 320u, 511u, 512u, 513u, 767u, 1000u, 4096u, 4099u,
                       65536u + 17u, (1u << 20) + 4u}) {
      std::span<const uint8_t> s(buf.data() + offset, len);
      for (uint32_t crc : {0u, 0xFFFFFFFFu, 0x12345678u}) {
        uint32_t portable = Crc32cPortableExtend(crc, s);
        EXPECT_EQ(Crc32cExtendWith(Crc32cKind::kFold, crc, s), portable) << offset << " " << len;
        EXPECT_EQ(Crc32cExtendWith(Crc32cKind::kLanes, crc, s), portable) << offset << " " << len;
        EXPECT_EQ(Crc32cExtend(crc, s), portable) << offset << " " << len;
      }
    }
  }
  // Every single-bit flip in a folded buffer changes the value.
  std::vector<uint8_t> data(buf.begin(), buf.begin() + 2048);
  uint32_t good = Crc32cExtendWith(Crc32cKind::kFold, 0, data);
  for (size_t bit = 0; bit < data.size() * 8; bit += 13) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(Crc32cExtendWith(Crc32cKind::kFold, 0, data), good) << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  std::string a = "the quick brown fox ", b = "jumps over the lazy dog";
  EXPECT_EQ(Crc32cExtend(Crc32c(Bytes(a)), Bytes(b)), Crc32c(Bytes(a + b)));
}

TEST(Crc32cTest, DetectsEverySingleBitFlip) {
  std::vector<uint8_t> data(1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 31);
  uint32_t good = Crc32c(data);
  for (size_t bit = 0; bit < data.size() * 8; bit += 7) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(Crc32c(data), good) << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
  EXPECT_EQ(Crc32c(data), good);
}

}  // namespace
}  // namespace copse::dfs

#include "common/net/frame.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "common/net/message.h"
#include "proto/cluster.capnp.h"

namespace copse::net {
namespace {

std::vector<uint8_t> HeartbeatPayload(uint64_t incarnation) {
  capnp::MallocMessageBuilder msg;
  auto hb = msg.initRoot<proto::ClusterMessage>().initHeartbeat();
  hb.setIncarnation(incarnation);
  hb.setBusySlots(3);
  return EncodeMessage(msg);
}

std::vector<uint8_t> Wire(Protocol p, PayloadKind k, const std::vector<uint8_t>& payload) {
  auto h = EncodeFrameHeader(p, k, static_cast<uint32_t>(payload.size()));
  std::vector<uint8_t> out(h.size() + payload.size());
  std::copy(h.begin(), h.end(), out.begin());
  std::copy(payload.begin(), payload.end(), out.begin() + static_cast<ptrdiff_t>(h.size()));
  return out;
}

uint64_t IncarnationOf(const Frame& f) {
  auto reader = DecodeMessage(f);
  EXPECT_TRUE(reader.ok());
  return (*reader)->getRoot<proto::ClusterMessage>().getHeartbeat().getIncarnation();
}

TEST(FrameTest, RoundTripsAMessage) {
  FrameDecoder d(1 << 20);
  std::vector<Frame> frames;
  ASSERT_TRUE(
      d.Feed(Wire(Protocol::kCluster, PayloadKind::kMessage, HeartbeatPayload(42)), &frames).ok());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].protocol, Protocol::kCluster);
  EXPECT_EQ(IncarnationOf(frames[0]), 42u);
  EXPECT_FALSE(d.HasPartialFrame());
}

TEST(FrameTest, SplitReadsOneByteAtATime) {
  FrameDecoder d(1 << 20);
  std::vector<uint8_t> wire = Wire(Protocol::kCluster, PayloadKind::kMessage, HeartbeatPayload(7));
  std::vector<Frame> frames;
  for (size_t i = 0; i < wire.size(); ++i) {
    ASSERT_TRUE(d.Feed(std::span<const uint8_t>(&wire[i], 1), &frames).ok());
    if (i + 1 < wire.size()) {
      EXPECT_TRUE(frames.empty());
      EXPECT_TRUE(d.HasPartialFrame());
    }
  }
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(IncarnationOf(frames[0]), 7u);
}

TEST(FrameTest, CoalescedFramesInOneRead) {
  FrameDecoder d(1 << 20);
  std::vector<uint8_t> wire;
  for (uint64_t i = 0; i < 5; ++i) {
    auto w = Wire(Protocol::kCluster, PayloadKind::kMessage, HeartbeatPayload(i));
    wire.insert(wire.end(), w.begin(), w.end());
  }
  auto raw = Wire(Protocol::kDfs, PayloadKind::kRaw, {});
  wire.insert(wire.end(), raw.begin(), raw.end());
  // A partial sixth message at the end stays buffered.
  auto tail = Wire(Protocol::kCluster, PayloadKind::kMessage, HeartbeatPayload(99));
  wire.insert(wire.end(), tail.begin(), tail.begin() + 5);
  std::vector<Frame> frames;
  ASSERT_TRUE(d.Feed(wire, &frames).ok());
  ASSERT_EQ(frames.size(), 6u);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(IncarnationOf(frames[i]), i);
  EXPECT_EQ(frames[5].kind, PayloadKind::kRaw);
  EXPECT_TRUE(frames[5].payload.empty());
  EXPECT_TRUE(d.HasPartialFrame());
  EXPECT_EQ(d.PartialDescription(), "truncated frame: got 5 of 8 header bytes");
  ASSERT_TRUE(d.Feed(std::span<const uint8_t>(tail).subspan(5), &frames).ok());
  ASSERT_EQ(frames.size(), 7u);
  EXPECT_EQ(IncarnationOf(frames[6]), 99u);
}

TEST(FrameTest, OversizedFrameIsRefusedAtItsHeader) {
  FrameDecoder d(1024);
  auto h = EncodeFrameHeader(Protocol::kDfs, PayloadKind::kRaw, 0xFFFFFFF0u);
  std::vector<Frame> frames;
  Status s = d.Feed(h, &frames);  // header only: nothing of the payload was sent
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("exceeds the limit of 1024"), std::string::npos);
  EXPECT_FALSE(d.Feed(h, &frames).ok());  // a failed decoder stays failed
}

TEST(FrameTest, GarbageIsRejected) {
  FrameDecoder d(1 << 20);
  std::vector<uint8_t> http = {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P'};
  std::vector<Frame> frames;
  Status s = d.Feed(http, &frames);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("magic"), std::string::npos);

  FrameDecoder d2(1 << 20);
  std::vector<uint8_t> bad_proto = {kMagic0, kMagic1, 77, 0, 8, 0, 0, 0};
  EXPECT_NE(d2.Feed(bad_proto, &frames).message().find("protocol"), std::string::npos);

  FrameDecoder d3(1 << 20);
  std::vector<uint8_t> odd_message = {kMagic0, kMagic1, 2, 0, 7, 0, 0, 0};
  EXPECT_NE(d3.Feed(odd_message, &frames).message().find("8-byte words"), std::string::npos);
  EXPECT_TRUE(frames.empty());
}

TEST(FrameTest, TruncatedPayloadIsReported) {
  FrameDecoder d(1 << 20);
  auto wire = Wire(Protocol::kCluster, PayloadKind::kMessage, HeartbeatPayload(1));
  std::vector<Frame> frames;
  ASSERT_TRUE(d.Feed(std::span<const uint8_t>(wire).first(wire.size() - 3), &frames).ok());
  EXPECT_TRUE(frames.empty());
  ASSERT_TRUE(d.HasPartialFrame());
  EXPECT_NE(d.PartialDescription().find("payload bytes"), std::string::npos);
}

TEST(FrameTest, PayloadReadStraightIntoPlaceMixesWithFeed) {
  // A raw frame whose header and first bytes are fed, the rest written into
  // MissingPayload() in two pieces, then a second frame fed behind it.
  std::vector<uint8_t> payload(300000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> wire = Wire(Protocol::kDfs, PayloadKind::kRaw, payload);
  FrameDecoder d(1 << 20);
  EXPECT_TRUE(d.MissingPayload(1 << 20).empty());
  std::vector<Frame> frames;
  ASSERT_TRUE(d.Feed(std::span<const uint8_t>(wire).first(kFrameHeaderSize + 1000), &frames).ok());
  std::span<uint8_t> missing = d.MissingPayload(1 << 20);
  ASSERT_EQ(missing.size(), payload.size() - 1000);
  std::memcpy(missing.data(), payload.data() + 1000, 5000);
  d.PayloadArrived(5000, &frames);
  EXPECT_TRUE(frames.empty());
  EXPECT_TRUE(d.HasPartialFrame());
  EXPECT_NE(d.PartialDescription().find("got 6000 of 300000"), std::string::npos)
      << d.PartialDescription();
  missing = d.MissingPayload(1 << 20);  // what is left of the room offered before
  ASSERT_EQ(missing.size(), payload.size() - 6000);
  std::memcpy(missing.data(), payload.data() + 6000, missing.size());
  d.PayloadArrived(missing.size(), &frames);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].kind, PayloadKind::kRaw);
  EXPECT_EQ(frames[0].payload, payload);
  EXPECT_FALSE(d.HasPartialFrame());
  EXPECT_TRUE(d.MissingPayload(1 << 20).empty());
  ASSERT_TRUE(
      d.Feed(Wire(Protocol::kCluster, PayloadKind::kMessage, HeartbeatPayload(9)), &frames).ok());
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(IncarnationOf(frames[1]), 9u);
}

TEST(FrameTest, RoomIsOfferedAPieceAtATimeAndFeedFillsWhatIsLeftOfIt) {
  std::vector<uint8_t> payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 13 + 1);
  std::vector<uint8_t> wire = Wire(Protocol::kDfs, PayloadKind::kRaw, payload);
  FrameDecoder d(1 << 20);
  std::vector<Frame> frames;
  ASSERT_TRUE(d.Feed(std::span<const uint8_t>(wire).first(kFrameHeaderSize), &frames).ok());
  std::span<uint8_t> room = d.MissingPayload(100);
  ASSERT_EQ(room.size(), 100u);
  std::memcpy(room.data(), payload.data(), 40);
  d.PayloadArrived(40, &frames);
  // The 60 bytes of room left are offered again, not grown.
  EXPECT_EQ(d.MissingPayload(100).size(), 60u);
  // Fed bytes fill that room, then are appended.
  ASSERT_TRUE(d.Feed(std::span<const uint8_t>(wire).subspan(kFrameHeaderSize + 40), &frames).ok());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, payload);
}

TEST(FrameTest, EmptyRawFrameCompletesAtItsHeader) {
  FrameDecoder d(1 << 20);
  std::vector<Frame> frames;
  ASSERT_TRUE(d.Feed(EncodeFrameHeader(Protocol::kDfs, PayloadKind::kRaw, 0), &frames).ok());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_TRUE(frames[0].payload.empty());
  EXPECT_FALSE(d.HasPartialFrame());
  EXPECT_TRUE(d.MissingPayload(1 << 20).empty());
}

TEST(FrameTest, NothingIsOfferedForAFrameRefusedAtItsHeader) {
  // The limit before authentication: a larger frame never gets room.
  FrameDecoder d(4096);
  std::vector<Frame> frames;
  auto h = EncodeFrameHeader(Protocol::kDfs, PayloadKind::kRaw, 1u << 20);
  EXPECT_EQ(d.Feed(h, &frames).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(d.MissingPayload(1 << 20).empty());
  EXPECT_TRUE(frames.empty());
}

TEST(FrameTest, RandomPayloadsNeverCrashTheDecoder) {
  std::mt19937_64 rng(1234);
  int decoded = 0;
  for (int i = 0; i < 2000; ++i) {
    Frame f;
    f.protocol = Protocol::kCluster;
    f.payload.resize(8 * (1 + rng() % 16));
    for (auto& b : f.payload) b = static_cast<uint8_t>(rng());
    if (i % 3 == 0) {  // a valid one-segment table, so the pointers inside get exercised
      uint32_t words = static_cast<uint32_t>(f.payload.size() / 8 - 1);
      std::memset(f.payload.data(), 0, 4);
      std::memcpy(f.payload.data() + 4, &words, 4);
      // Root: a struct pointer right after itself with 1 data word and 1 pointer.
      uint64_t root = (uint64_t{1} << 32) | (uint64_t{1} << 48);
      if (words >= 3) std::memcpy(f.payload.data() + 8, &root, 8);
    }
    Status s = GuardRequest([&]() -> Status {
      COPSE_ASSIGN_OR_RETURN(auto reader, DecodeMessage(f));
      auto root = reader->getRoot<proto::ClusterMessage>();
      if (root.which() == proto::ClusterMessage::REGISTER) {
        (void)root.getRegister().getComputer().size();
      }
      ++decoded;
      return Status::Ok();
    });
    if (!s.ok()) {
      EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    }
  }
  EXPECT_GT(decoded, 0);
}

TEST(FrameTest, DecodeRejectsRawFrames) {
  Frame f{Protocol::kDfs, PayloadKind::kRaw, std::vector<uint8_t>(16, 0)};
  EXPECT_EQ(DecodeMessage(f).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace copse::net

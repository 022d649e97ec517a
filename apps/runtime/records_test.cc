// Records as bytes: the parser over streams cut anywhere, the writers, and
// the limits.
#include "apps/runtime/records.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace copse::apps {
namespace {

std::span<const uint8_t> Bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Feeds `stream` cut every `step` bytes; returns "key=value" per record.
Result<std::vector<std::string>> ParseCut(RecordFormat f, const std::string& stream, size_t step,
                                          size_t max = 1 << 20) {
  RecordParser p(f, max, "input 0");
  std::vector<std::string> out;
  auto sink = [&](const Record& r) {
    out.push_back(std::string(r.key) + "=" + std::string(r.value));
    return Status::Ok();
  };
  for (size_t i = 0; i < stream.size(); i += step) {
    COPSE_RETURN_IF_ERROR(p.Feed(Bytes(std::string_view(stream).substr(i, step)), sink));
  }
  COPSE_RETURN_IF_ERROR(p.End(sink));
  return out;
}

TEST(RecordsTest, TextRecordsSplitAtTheFirstTabWhereverTheStreamIsCut) {
  const std::string text = "a\t1\nno tab here\nk\tv\twith tab\n\nlast";
  const std::vector<std::string> want = {"a=1", "no tab here=", "k=v\twith tab", "=", "last="};
  for (size_t step : {1, 2, 3, 7, 100}) {
    auto got = ParseCut(RecordFormat::kText, text, step);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, want) << "cut every " << step;
  }
}

TEST(RecordsTest, BinaryRecordsRoundTripWithAnyBytesWhereverTheStreamIsCut) {
  std::string stream;
  const std::vector<std::pair<std::string, std::string>> records = {
      {"k1", "v1"}, {std::string("\0\t\n", 3), std::string(300, '\xff')}, {"", ""}, {"x", ""}};
  for (const auto& [k, v] : records) ASSERT_TRUE(AppendRecord(RecordFormat::kBinary, k, v, &stream).ok());
  for (size_t step : {1, 3, 5, 1000}) {
    auto got = ParseCut(RecordFormat::kBinary, stream, step);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      EXPECT_EQ((*got)[i], records[i].first + "=" + records[i].second) << step;
    }
  }
}

TEST(RecordsTest, ARecordOverTheLimitIsNamedByItsNumber) {
  auto text = ParseCut(RecordFormat::kText, "short\n" + std::string(100, 'x') + "\n", 7, 64);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(text.status().message().find("line 2 is longer than the limit of 64 bytes"),
            std::string::npos)
      << text.status().message();
  // A last line with no newline counts too.
  EXPECT_FALSE(ParseCut(RecordFormat::kText, std::string(100, 'x'), 9, 64).ok());
  std::string big;
  ASSERT_TRUE(AppendRecord(RecordFormat::kBinary, "k", std::string(100, 'v'), &big).ok());
  auto bin = ParseCut(RecordFormat::kBinary, big, 4, 64);
  ASSERT_FALSE(bin.ok());
  EXPECT_NE(bin.status().message().find("record 1"), std::string::npos);
}

TEST(RecordsTest, ABinaryRecordCutShortAtTheEndIsAnError) {
  std::string stream;
  ASSERT_TRUE(AppendRecord(RecordFormat::kBinary, "key", "value", &stream).ok());
  stream.pop_back();
  auto got = ParseCut(RecordFormat::kBinary, stream, 2);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("cut short"), std::string::npos);
}

TEST(RecordsTest, TheTextFormatRefusesWhatItCannotHold) {
  std::string out;
  EXPECT_EQ(AppendRecord(RecordFormat::kText, "a\tb", "v", &out).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(AppendRecord(RecordFormat::kText, "a", "v\nw", &out).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(AppendRecord(RecordFormat::kText, "a", "", &out).ok());
  ASSERT_TRUE(AppendRecord(RecordFormat::kText, "b", "v\tw", &out).ok());
  EXPECT_EQ(out, "a\nb\tv\tw\n");
}

TEST(RecordsTest, PartitionersSpreadByHashAndCutByRange) {
  auto hash = HashPartitioner();
  std::vector<int> seen(4, 0);
  for (int i = 0; i < 1000; ++i) ++seen[hash->Bucket("key" + std::to_string(i), 4)];
  for (int n : seen) EXPECT_GT(n, 150);
  EXPECT_EQ(hash->Bucket("same", 7), hash->Bucket("same", 7));
  auto range = RangePartitioner({"g", "p"});
  EXPECT_EQ(range->Bucket("apple", 3), 0);
  EXPECT_EQ(range->Bucket("g", 3), 1);
  EXPECT_EQ(range->Bucket("orange", 3), 1);
  EXPECT_EQ(range->Bucket("zebra", 3), 2);
  EXPECT_EQ(range->Bucket("zebra", 2), 1);  // past the bucket count: the last
}

}  // namespace
}  // namespace copse::apps

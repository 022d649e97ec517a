// The external sort: in memory, and spilling to run files when records
// exceed its memory, with equal keys in the order they came.
#include "apps/runtime/sorter.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <random>
#include <string>
#include <vector>

namespace copse::apps {
namespace {

class SorterTest : public ::testing::Test {
 protected:
  SorterTest() {
    char tmpl[] = "/tmp/copse-sorter-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~SorterTest() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Adds n records (keys drawn at random from `keys` distinct ones, each
  // value the record's number) and drains them.
  std::vector<std::pair<std::string, std::string>> SortRandom(ExternalSorter& s, int n, int keys) {
    std::mt19937 rng(7);
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(s.Add("k" + std::to_string(rng() % keys), std::to_string(i)).ok());
    }
    std::vector<std::pair<std::string, std::string>> out;
    EXPECT_TRUE(s.Drain([&](const Record& r) {
                  out.emplace_back(std::string(r.key), std::string(r.value));
                  return Status::Ok();
                }).ok());
    return out;
  }
  static void ExpectSortedAndStable(const std::vector<std::pair<std::string, std::string>>& out) {
    for (size_t i = 1; i < out.size(); ++i) {
      ASSERT_LE(out[i - 1].first, out[i].first) << i;
      if (out[i - 1].first == out[i].first) {
        ASSERT_LT(std::stoi(out[i - 1].second), std::stoi(out[i].second)) << "not stable at " << i;
      }
    }
  }
  std::filesystem::path dir_;
};

TEST_F(SorterTest, SortsInMemoryWithoutARunFile) {
  ExternalSorter s(dir_, 64 << 20);
  auto out = SortRandom(s, 5000, 50);
  EXPECT_EQ(out.size(), 5000u);
  ExpectSortedAndStable(out);
  EXPECT_EQ(s.runs(), 0);
  EXPECT_EQ(s.spilled_bytes(), 0u);
}

TEST_F(SorterTest, SpillsPastItsMemoryAndMergesTheRunsStably) {
  ExternalSorter s(dir_, 16 << 10);  // 16 KiB: many runs
  auto out = SortRandom(s, 20000, 300);
  EXPECT_EQ(out.size(), 20000u);
  ExpectSortedAndStable(out);
  EXPECT_GT(s.runs(), 10);
  EXPECT_GT(s.spilled_bytes(), 0u);
}

TEST_F(SorterTest, ManyRunsAreMergedInPassesWithFewFilesOpen) {
  ExternalSorter s(dir_, 1 << 10);  // 1 KiB: hundreds of runs
  auto out = SortRandom(s, 20000, 500);
  EXPECT_EQ(out.size(), 20000u);
  ExpectSortedAndStable(out);
  EXPECT_GT(s.runs(), static_cast<int>(ExternalSorter::kMaxFanIn) * 2);
}

TEST_F(SorterTest, RunFilesGoWithTheSorter) {
  {
    ExternalSorter s(dir_, 1024);
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(s.Add(std::to_string(i), "v").ok());
    ASSERT_GT(s.runs(), 0);
    EXPECT_FALSE(std::filesystem::is_empty(dir_));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(SorterTest, ASpillThatCannotBeWrittenSaysWhere) {
  ExternalSorter s(dir_ / "gone", 64);
  Status st = Status::Ok();
  for (int i = 0; i < 100 && st.ok(); ++i) st = s.Add("key" + std::to_string(i), "value");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find("gone"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace copse::apps

// Sort end to end on a real local cluster (docs/apps/sort.md): generated
// printable records come out exactly as `LC_ALL=C sort` orders their lines;
// binary records (0, '\n' and bytes above 127 among them) as a memcmp sort
// done here orders them; an input partition that is not a whole number of
// records fails the job, naming the file and the partition.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/subprocess.h"
#include "tests/harness/cluster_fixture.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

constexpr size_t kRecord = 100;
using Record = std::array<uint8_t, kRecord>;

class SortAppTest : public ClusterTest {
 protected:
  // The sizes of the partitions of DFS file `path`.
  std::vector<int64_t> PartitionSizes(const std::string& path) {
    CommandResult r = Copse({"fs", "stat", path, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<int64_t> sizes;
    if (r.exit_code != 0) return sizes;
    const json st = json::parse(r.out);
    for (const json& p : st["partitions"]) sizes.push_back(p["size"]);
    return sizes;
  }
};

// What `LC_ALL=C sort` makes of the lines of `file`.
std::string GnuSort(const std::filesystem::path& file) {
  SpawnOptions o;
  o.program = "/bin/sh";
  o.args = {"-c", "LC_ALL=C sort \"$0\"", file.string()};
  auto r = RunProcess(o, std::chrono::seconds(60), 64u << 20);
  if (!r.ok() || !r->status.ok()) return "(sort failed)";
  return r->out;
}

// Record `i` of `s` with bytes outside printable ASCII as \xNN.
std::string RecordAt(const std::string& s, size_t i) {
  std::string out;
  for (char c : std::string_view(s).substr(std::min(s.size(), i * kRecord), kRecord)) {
    auto b = static_cast<unsigned char>(c);
    out += b >= 32 && b < 127 && b != '\\' ? std::string(1, c) : fmt::format("\\x{:02x}", b);
  }
  return out;
}

// Equal, or the first record where they part (whole outputs are too big to
// print).
void ExpectSameRecords(const std::string& actual, const std::string& expected) {
  EXPECT_EQ(actual.size(), expected.size());
  auto at = std::mismatch(actual.begin(), actual.end(), expected.begin(), expected.end());
  if (at.first == actual.end() && at.second == expected.end()) return;
  size_t record = static_cast<size_t>(at.first - actual.begin()) / kRecord;
  ADD_FAILURE() << "the outputs part at record " << record << ":\n  actual   "
                << RecordAt(actual, record) << "\n  expected " << RecordAt(expected, record);
}

TEST_F(SortAppTest, GeneratedRecordsComeOutAsGnuSortOrdersTheirLines) {
  CommandResult g =
      Copse({"gen", "sort", "--output", "/in", "--partitions", "4", "--scale", "0.0005"});
  ASSERT_EQ(g.exit_code, 0) << g.out << g.err;
  std::string input = Cat("/in");
  ASSERT_GT(input.size(), 4'000'000u);
  ASSERT_EQ(input.size() % kRecord, 0u);
  // Printable lines of 99 bytes, with equal keys and a few equal records.
  const size_t n = input.size() / kRecord;
  EXPECT_EQ(static_cast<size_t>(std::count(input.begin(), input.end(), '\n')), n);
  std::set<std::string_view> keys, records;
  size_t unterminated = 0;
  for (size_t at = 0; at < input.size(); at += kRecord) {
    unterminated += input[at + kRecord - 1] != '\n';
    keys.insert(std::string_view(input).substr(at, 10));
    records.insert(std::string_view(input).substr(at, kRecord));
  }
  EXPECT_EQ(unterminated, 0u);
  EXPECT_GT(n - keys.size(), n / 100);
  EXPECT_GT(n - records.size(), 0u);

  CommandResult r =
      Copse({"run", "sort", "--input", "/in", "--output", "/out", "--partitions", "3", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectSameRecords(Cat("/out"), GnuSort(Local("in.txt", input)));

  std::vector<int64_t> sizes = PartitionSizes("/out");
  ASSERT_EQ(sizes.size(), 3u);
  for (int64_t s : sizes) {
    EXPECT_EQ(s % static_cast<int64_t>(kRecord), 0) << s;
    // The sample's splits cut even ranges: none is far off a third.
    EXPECT_GT(s, static_cast<int64_t>(input.size()) / 6) << s;
  }
  json st = Status(IdOf(r));
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_EQ(st["vertices"]["total"], 1 + 4 + 3);
}

// Records of any bytes, many sharing long prefixes (so that the order is
// decided past the first 8 bytes), with whole duplicates.
std::vector<Record> BinaryRecords(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint8_t special[] = {0x00, '\n', 0x01, 0x7f, 0x80, 0xff};
  std::vector<Record> out;
  out.reserve(n);
  while (out.size() < n) {
    uint64_t roll = rng() % 100;
    if (!out.empty() && roll < 5) {
      out.push_back(out[rng() % out.size()]);
      continue;
    }
    Record r;
    size_t shared = 0;
    if (!out.empty() && roll < 40) {
      shared = 1 + rng() % (kRecord - 1);
      const Record& from = out[rng() % out.size()];
      std::copy(from.begin(), from.begin() + static_cast<ptrdiff_t>(shared), r.begin());
    }
    for (size_t k = shared; k < kRecord; ++k) {
      r[k] = rng() % 3 == 0 ? special[rng() % 6] : static_cast<uint8_t>(rng());
    }
    out.push_back(r);
  }
  return out;
}

std::string Concatenated(const std::vector<Record>& records) {
  std::string s;
  s.reserve(records.size() * kRecord);
  for (const Record& r : records) s.append(reinterpret_cast<const char*>(r.data()), kRecord);
  return s;
}

TEST_F(SortAppTest, BinaryRecordsComeOutInMemcmpOrder) {
  std::vector<Record> records = BinaryRecords(20'000, 11);
  std::filesystem::path local = Local("records.bin", Concatenated(records));
  CommandResult put = Copse({"fs", "put", local.string(), "/bin", "--partitions", "3",
                             "--record-size", "100", "--placement", "random"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  CommandResult r = Copse(
      {"run", "sort", "--input", "/bin", "--output", "/sorted", "--partitions", "4", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // std::array<uint8_t, N> compares lexicographically as unsigned bytes: memcmp.
  std::sort(records.begin(), records.end());
  ExpectSameRecords(Cat("/sorted"), Concatenated(records));
  std::vector<int64_t> sizes = PartitionSizes("/sorted");
  ASSERT_EQ(sizes.size(), 4u);
  for (int64_t s : sizes) EXPECT_EQ(s % static_cast<int64_t>(kRecord), 0) << s;
}

TEST_F(SortAppTest, APartitionOfPartRecordsFailsTheJobNamingIt) {
  // Lines of 99 bytes and '\n', and one short line: `fs put` cuts text at
  // line ends, so one partition holds part of a record.
  std::string line(99, 'k');
  line += '\n';
  std::string text;
  for (int i = 0; i < 10; ++i) text += line;
  text += std::string(50, 's') + "\n";
  for (int i = 0; i < 10; ++i) text += line;
  Put(Local("bad.txt", text), "/bad", 3);
  std::vector<int64_t> sizes = PartitionSizes("/bad");
  auto bad = std::find_if(sizes.begin(), sizes.end(),
                          [](int64_t s) { return s % static_cast<int64_t>(kRecord) != 0; });
  ASSERT_NE(bad, sizes.end());
  const std::string names = "partition " + std::to_string(bad - sizes.begin()) + " of /bad holds " +
                            std::to_string(*bad) + " bytes: not a whole number of 100-byte records";

  CommandResult r = Copse({"run", "sort", "--input", "/bad", "--output", "/never", "--wait"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json st = Status(IdOf(r));
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["state"], "failed");
  std::string why = st["failure"];
  EXPECT_NE(why.find(names), std::string::npos) << why;
  EXPECT_NE(Copse({"fs", "stat", "/never"}).exit_code, 0);
}

}  // namespace
}  // namespace copse::testing

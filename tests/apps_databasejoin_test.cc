// DatabaseJoin end to end (docs/apps/databasejoin.md): generated and
// hand-written tables joined on a local cluster, the output checked byte for
// byte against sqlite3 running the same query over the same tables; and bad
// input failing the job with a message that names it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/subprocess.h"
#include "tests/harness/cluster_fixture.h"

namespace copse::testing {
namespace {

using std::chrono::seconds;
namespace fs = std::filesystem;

constexpr const char* kSqlite = "/usr/bin/sqlite3";

// The query of docs/apps/databasejoin.md, over tables imported from `small`
// and `big` (files of `key|tag` and `key|ref|payload` lines).
std::string QueryScript(const fs::path& small, const fs::path& big) {
  return "CREATE TABLE small(key INTEGER, tag TEXT);\n"
         "CREATE TABLE big(key INTEGER, ref INTEGER, payload TEXT);\n"
         ".mode list\n"
         ".separator |\n"
         ".import '" +
         small.string() + "' small\n.import '" + big.string() +
         "' big\n"
         "SELECT b2.key, s.key, s.tag, b2.payload\n"
         "FROM small s JOIN big b1 ON b1.key = s.key JOIN big b2 ON b2.key = b1.ref\n"
         "ORDER BY b2.key, s.key, s.tag, b2.payload;\n";
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` with '.' added to the end of the last line of each part (before
// its '\n') so that every part has the same length: `copse fs put` then cuts
// the file exactly between the parts.
std::string EqualParts(std::vector<std::string> parts) {
  size_t longest = 0;
  for (const std::string& p : parts) longest = std::max(longest, p.size());
  std::string out;
  for (std::string& p : parts) {
    p.insert(p.size() - 1, longest - p.size(), '.');
    out += p;
  }
  return out;
}

// Where `got` first differs from `want`, for a failure message (the whole
// of either is megabytes).
std::string FirstDifference(const std::string& got, const std::string& want) {
  size_t at = std::mismatch(got.begin(), got.end(), want.begin(), want.end()).first - got.begin();
  size_t line_start = got.rfind('\n', at == 0 ? 0 : at - 1);
  line_start = line_start == std::string::npos || at == 0 ? 0 : line_start + 1;
  auto line = [&](const std::string& s) {
    return "'" + s.substr(line_start, s.find('\n', line_start) - line_start) + "'";
  };
  return "the join's " + std::to_string(got.size()) + " bytes differ from sqlite3's " +
         std::to_string(want.size()) + " at line " +
         std::to_string(std::count(got.begin(), got.begin() + static_cast<long>(at), '\n') + 1) +
         ": " + line(got) + " where sqlite3 has " + line(want);
}

class DatabaseJoinTest : public ClusterTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kSqlite)) GTEST_SKIP() << kSqlite << " is missing (apt-get install sqlite3)";
    ClusterTest::SetUp();
  }
  void TearDown() override {
    if (!config_path_.empty()) ClusterTest::TearDown();  // no cluster when skipped
  }

  // `copse fs get` of `path` into the test's directory.
  fs::path Get(const std::string& path, const std::string& local) {
    fs::path p = dir_.path() / local;
    CommandResult r = Copse({"fs", "get", path, p.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return p;
  }

  // What sqlite3 answers for the tables at DFS paths `small` and `big`, or
  // a line starting "sqlite3 failed".
  std::string SqliteAnswer(const std::string& small, const std::string& big) {
    fs::path script = Local("query.sql", QueryScript(Get(small, "small.txt"), Get(big, "big.txt")));
    fs::path answer = dir_.path() / "sqlite.out";
    SpawnOptions o;
    o.program = "/bin/sh";
    o.args = {"-c", std::string(kSqlite) + " -batch -bail :memory: < \"$0\" > \"$1\"",
              script.string(), answer.string()};
    auto r = RunProcess(o, std::chrono::seconds(60));
    if (!r.ok()) return "sqlite3 failed: " + r.status().ToString();
    // A warning (a row with too few or too many fields) means the tables
    // were not what the test meant: fail on it too.
    if (!r->status.ok() || !r->err.empty()) {
      return "sqlite3 failed (" + r->status.ToString() + "): " + r->err;
    }
    return ReadFile(answer);
  }

  // Runs the join of the tables `small` and `big` into `output`.
  CommandResult Join(const std::string& small, const std::string& big, const std::string& output) {
    return Copse(
        {"run", "databasejoin", "--input", small + "," + big, "--output", output, "--wait"},
        seconds(150));
  }

  // The vertices of stage `stage` in a job's status, and how many are done.
  static std::pair<int, int> Vertices(const nlohmann::json& status, const std::string& stage) {
    for (const nlohmann::json& s : status["stages"]) {
      if (s["name"] == stage) return {s.value("vertices", 0), s.value("done", 0)};
    }
    return {0, 0};
  }
};

TEST_F(DatabaseJoinTest, GeneratedTablesJoinAsSqliteJoinsThem) {
  // Scale 1 is the paper's 11.8 GB and 41.8 GB: about 1.2 MB and 4.2 MB here.
  CommandResult g =
      Copse({"gen", "databasejoin", "--output", "/db", "--partitions", "4", "--scale", "0.0001"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  CommandResult r = Join("/db/small", "/db/big", "/joined");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  std::string joined = ReadFile(Get("/joined", "joined.txt"));
  std::string expected = SqliteAnswer("/db/small", "/db/big");
  ASSERT_FALSE(expected.starts_with("sqlite3 failed")) << expected;
  EXPECT_GT(expected.size(), 100'000u);  // the generated keys do join
  EXPECT_TRUE(joined == expected) << FirstDifference(joined, expected);

  nlohmann::json st = Status(IdOf(r));
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_EQ(Vertices(st, "phase1"), std::make_pair(4, 4)) << st.dump();
  EXPECT_EQ(Vertices(st, "phase2"), std::make_pair(4, 4)) << st.dump();
  CommandResult stat = Copse({"fs", "stat", "/joined", "--json"});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_EQ(nlohmann::json::parse(stat.out)["partitions"].size(), 4u);
}

TEST_F(DatabaseJoinTest, DatabaseJoin5OnASmallerRackSpreadsOverTheWholeRack) {
  // The paper's DatabaseJoin5 confines its tables to 5 computers of r1; this
  // cluster's r1 has 3, so gen spreads them over those 3 and says so.
  CommandResult g = Copse({"gen", "databasejoin", "--output", "/dj5", "--partitions", "3",
                           "--scale", "0.00001", "--placement", "confine 5 r1"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_NE(g.err.find("'confine 3 r1'"), std::string::npos) << g.err;
  CommandResult small = Copse({"fs", "stat", "/dj5/small", "--json"});
  ASSERT_EQ(small.exit_code, 0) << small.err;
  nlohmann::json st = nlohmann::json::parse(small.out);
  EXPECT_EQ(st["placement"], "confine 3 r1");
  for (const auto& p : st["partitions"]) {
    for (const auto& b : p["blocks"]) {
      for (const auto& r : b["replicas"]) EXPECT_EQ(r["rack"], "r1") << small.out;
    }
  }
  CommandResult big = Copse({"fs", "stat", "/dj5/big", "--json"});
  ASSERT_EQ(big.exit_code, 0) << big.err;
  EXPECT_EQ(nlohmann::json::parse(big.out)["placement"], "colocate /dj5/small");
}

TEST_F(DatabaseJoinTest, DuplicatesMissesAndAnEmptyPartitionJoinAsInSqlite) {
  // Three ranges: [0, 1431655766), [1431655766, 2863311531), [2863311531, 2^32).
  // small: repeated rows (5|a), a key with several tags, keys no big row
  // has (9, 2863311531's ref), and nothing at all in range 1. Partition 0
  // ends with a row longer than the rest of the file, so that `fs put`
  // leaves partition 1 empty.
  std::string small0 = "5|a\n5|b\n5|a\n7|zz\n9|none\n";
  std::string small2 = "3000000000|c\n3000000000|c\n4294967295|top\n2863311531|first\n";
  std::string long_row = "1000|" + std::string(2 * (small0.size() + small2.size()) + 4, 'L') + "\n";
  Put(Local("small.txt", small0 + long_row + small2), "/hand/small", 3);
  // big: repeated keys (5, 7, 3000000000) with different payloads, rows out
  // of key order, refs into every range, and one row padding each partition.
  std::string big = EqualParts({
      "5|2863311531|p1\n5|3000000000|p2\n7|7|self\n7|2000000000|to1\n1000|4294967295|x\n"
      "100|5|back\n200|0|pad\n",
      "1431655766|0|m\n2000000000|5|q\n1431655767|0|pad\n",
      "3000000000|100|mid\n3000000000|100|Mid\n2863311531|0|A\n4294967295|4294967295|last\n"
      "2863311532|0|pad\n",
  });
  Put(Local("big.txt", big), "/hand/big", 3);
  ASSERT_EQ(Cat("/hand/small"), small0 + long_row + small2);
  ASSERT_EQ(Copse({"fs", "cat", "/hand/small", "--partition", "1"}).out, "");
  ASSERT_EQ(Copse({"fs", "cat", "/hand/small", "--partition", "2"}).out, small2);
  ASSERT_EQ(Copse({"fs", "cat", "/hand/big", "--partition", "1"}).out.substr(0, 15),
            "1431655766|0|m\n");

  CommandResult r = Join("/hand/small", "/hand/big", "/hand/joined");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string joined = Cat("/hand/joined");
  std::string expected = SqliteAnswer("/hand/small", "/hand/big");
  EXPECT_EQ(joined, expected);
  // What SQL makes of the duplicates: every pair, in ORDER BY order (upper
  // case before lower case: BINARY collation).
  std::string back = "100|3000000000|c|back\n";  // two small rows, two b1 rows each
  EXPECT_TRUE(joined.starts_with("7|7|zz|self\n7|7|zz|to1\n" + back + back + back + back +
                                 "2000000000|7|zz|q\n2863311531|"))
      << joined;
  EXPECT_NE(joined.find("2863311531|5|a|A\n2863311531|5|a|A\n2863311531|5|b|A\n"
                        "3000000000|5|a|Mid\n3000000000|5|a|Mid\n3000000000|5|a|mid\n"),
            std::string::npos)
      << joined;
  EXPECT_EQ(Copse({"fs", "cat", "/hand/joined", "--partition", "1"}).out, "2000000000|7|zz|q\n");
}

TEST_F(DatabaseJoinTest, ARowInTheWrongPartitionFailsTheJobNamingTheFile) {
  // Range 0 is [0, 2^31); 3000000000 belongs in partition 1.
  Put(Local("small.txt", EqualParts({"5|a\n3000000000|misplaced\n", "3000000001|b\n"})),
      "/bad/small", 2);
  Put(Local("big.txt", EqualParts({"5|3000000001|x\n", "3000000001|5|y\n"})), "/bad/big", 2);
  CommandResult r = Join("/bad/small", "/bad/big", "/bad/joined");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("exit code 65"), std::string::npos) << r.err;  // bad input: no retry
  EXPECT_NE(r.err.find("/bad/small"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 2: key 3000000000 of small belongs in partition 1, not 0"),
            std::string::npos)
      << r.err;
  nlohmann::json st = Status(IdOf(r));
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["state"], "failed");
  EXPECT_NE(Copse({"fs", "stat", "/bad/joined"}).exit_code, 0);  // no output of a failed job
}

}  // namespace
}  // namespace copse::testing

// WordCount and Prime on generated data (`copse gen`), checked against
// coreutils and a direct count.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "tests/harness/cluster_fixture.h"

namespace copse::testing {
namespace {

using std::chrono::seconds;

class AppsTest : public ClusterTest {
 protected:
  // `copse fs cat path` into a local file; its path.
  std::filesystem::path Fetch(const std::string& path, const std::string& local) {
    return Local(local, Cat(path));
  }
};

TEST_F(AppsTest, GeneratedWordCountEqualsCoreutils) {
  CommandResult g = Copse({"gen", "wordcount", "--output", "/text", "--partitions", "3", "--scale",
                           "0.01", "--seed", "5"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  // Three partitions of about 500 kB, spread at random over the cluster.
  CommandResult st = Copse({"fs", "stat", "/text", "--json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  nlohmann::json stat = nlohmann::json::parse(st.out);
  ASSERT_EQ(stat["partitions"].size(), 3u);
  EXPECT_NEAR(stat["size"].get<double>(), 1'500'000, 20'000);
  EXPECT_EQ(stat["placement"], "random");

  CommandResult r = Copse({"run", "wordcount", "--input", "/text", "--output", "/wc", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string words = Cat("/wc");
  EXPECT_EQ(words, CoreutilsWordCount(Fetch("/text", "text.txt")));
  // A generated corpus is skewed: the commonest word is far above the median
  // distinct word (lines are `word<TAB>count`, most frequent first).
  std::vector<uint64_t> counts;
  std::istringstream lines(words);
  for (std::string line; std::getline(lines, line);) {
    counts.push_back(std::stoull(line.substr(line.rfind('\t') + 1)));
  }
  ASSERT_GT(counts.size(), 1000u);
  EXPECT_GT(counts.front(), 10 * counts[counts.size() / 2]);

  // The same command writes the same bytes; an existing file is not replaced.
  CommandResult again = Copse({"gen", "wordcount", "--output", "/text", "--partitions", "3",
                               "--scale", "0.01", "--seed", "5"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("/text"), std::string::npos) << again.err;
}

TEST_F(AppsTest, GeneratedPrimeEqualsADirectCount) {
  CommandResult g =
      Copse({"gen", "prime_small", "--output", "/numbers", "--partitions", "4", "--scale", "0.02"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  std::string numbers = Cat("/numbers");
  int lines = 0, primes = 0;
  size_t pos = 0;
  while (pos < numbers.size()) {
    size_t end = numbers.find('\n', pos);
    uint64_t n = std::stoull(numbers.substr(pos, end - pos));
    bool prime = n >= 2;
    for (uint64_t d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
    primes += prime ? 1 : 0;
    ++lines;
    pos = end + 1;
  }
  EXPECT_NEAR(lines, 4 * 800, 100);  // 40,000 × 0.02 integers of ~7 bytes a partition
  CommandResult r =
      Copse({"run", "prime", "--input", "/numbers", "--output", "/primes", "--wait"}, seconds(240));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Cat("/primes"), std::to_string(primes) + "\n");
}

TEST_F(AppsTest, GenRefusesBadArgumentsNamingThem) {
  CommandResult r = Copse({"gen", "nope", "--output", "/x", "--scale", "0.1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown app 'nope'"), std::string::npos) << r.err;
  r = Copse({"gen", "sort", "--output", "/x", "--scale", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--scale"), std::string::npos) << r.err;
  r = Copse({"gen", "sort", "--output", "/x", "--partitions", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--partitions"), std::string::npos) << r.err;
  r = Copse({"run", "sort", "--input", "/missing", "--output", "/y"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/missing"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace copse::testing

// PageRank end to end (docs/apps/pagerank.md): a generated graph and a
// hand-written one ranked on a local cluster, every rank checked against
// tests/tools/pagerank_reference.py, an independent single-process
// computation in Python; graphs with an edge to a vertex that has no line,
// or a vertex in the wrong partition, fail the job naming the culprit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "tests/harness/cluster_fixture.h"

namespace copse::testing {
namespace {

using std::chrono::seconds;

struct Rank {
  uint64_t vertex = 0;
  double rank = 0;
};

// `v<TAB>rank` lines, in their order; a line that is not one fails the test.
std::vector<Rank> ParseRanks(const std::string& text, const std::string& what) {
  std::vector<Rank> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    char* end = nullptr;
    Rank r;
    if (tab != std::string::npos) {
      r.vertex = std::strtoull(line.c_str(), nullptr, 10);
      r.rank = std::strtod(line.c_str() + tab + 1, &end);
    }
    if (tab == std::string::npos || end != line.c_str() + line.size()) {
      ADD_FAILURE() << what << ": not `v<TAB>rank`: " << line;
      return {};
    }
    out.push_back(r);
  }
  return out;
}

// The ids of a graph's lines, in order.
std::vector<uint64_t> LineIds(const std::string& graph) {
  std::vector<uint64_t> ids;
  for (size_t pos = 0; pos < graph.size(); pos = graph.find('\n', pos) + 1) {
    ids.push_back(std::strtoull(graph.c_str() + pos, nullptr, 10));
  }
  return ids;
}

// The order of vertices in a file of P partitions, partition p holding
// p, p+P, ... below `vertices`.
std::vector<uint64_t> PartitionOrder(uint64_t vertices, uint64_t partitions) {
  std::vector<uint64_t> order;
  for (uint64_t p = 0; p < partitions; ++p) {
    for (uint64_t v = p; v < vertices; v += partitions) order.push_back(v);
  }
  return order;
}

// Graph text whose partitions `fs put --partitions P` cuts exactly where
// given: each partition's text is padded to the same length with edges from
// its first line to vertices 1 and 10 (multi-edges, as the test graphs
// allow). REQUIRES: every partition's first line has targets.
std::string EqualPartitions(std::vector<std::vector<std::string>> partitions) {
  auto length = [](const std::vector<std::string>& lines) {
    size_t n = 0;
    for (const std::string& l : lines) n += l.size() + 1;
    return n;
  };
  size_t longest = 0;
  for (const auto& lines : partitions) longest = std::max(longest, length(lines));
  std::string text;
  for (auto& lines : partitions) {
    size_t missing = longest + 3 - length(lines);  // at least 3: " 10" and " 1"s fit
    if (missing % 2 == 1) {
      lines[0] += " 10";
      missing -= 3;
    }
    for (; missing > 0; missing -= 2) lines[0] += " 1";
    for (const std::string& l : lines) text += l + "\n";
  }
  return text;
}

class PageRankTest : public ClusterTest {
 protected:
  void SetUp() override {
    python_ = Python();
    if (python_.empty()) GTEST_SKIP() << "python3 is not on the PATH: no reference to check with";
    ClusterTest::SetUp();
  }
  void TearDown() override {
    if (!python_.empty()) ClusterTest::TearDown();  // else no cluster was started
  }

  static std::filesystem::path Python() {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      std::filesystem::path p = std::filesystem::path(dir) / "python3";
      if (!dir.empty() && access(p.c_str(), X_OK) == 0) return p;
    }
    return {};
  }

  // What the reference makes of the graph in `file`.
  std::string Reference(const std::filesystem::path& file) {
    SpawnOptions o;
    o.program = python_;
    o.args = {std::string(COPSE_SOURCE_DIR) + "/tests/tools/pagerank_reference.py", file.string()};
    auto r = RunProcess(o, seconds(40));
    EXPECT_TRUE(r.ok() && r->status.ok())
        << (r.ok() ? r->status.ToString() + ": " + r->err : r.status().ToString());
    return r.ok() ? r->out : "";
  }

  // Ranks `graph` (a DFS file of `partitions` partitions, `local` its text)
  // into `output` and checks every rank against the reference.
  void ExpectReferenceRanks(const std::string& graph, const std::filesystem::path& local,
                            uint64_t partitions, const std::string& output) {
    CommandResult r = Copse({"run", "pagerank", "--input", graph, "--output", output, "--wait"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    CommandResult st = Copse({"fs", "stat", output, "--json"});
    ASSERT_EQ(st.exit_code, 0) << st.err;
    EXPECT_EQ(nlohmann::json::parse(st.out)["partitions"].size(), partitions);
    std::vector<Rank> got = ParseRanks(Cat(output), "the job's output");
    std::vector<Rank> want = ParseRanks(Reference(local), "the reference");
    ASSERT_FALSE(want.empty());
    // Partition j holds the vertices j, j+P, ..., ascending; every vertex once.
    std::vector<uint64_t> order;
    for (const Rank& g : got) order.push_back(g.vertex);
    ASSERT_EQ(order, PartitionOrder(want.size(), partitions));
    double sum = 0;
    for (const Rank& g : got) {
      const double expected = want[g.vertex].rank;
      EXPECT_LE(std::abs(g.rank - expected), 1e-9 * expected)
          << "vertex " << g.vertex << ": " << g.rank << ", the reference " << expected;
      sum += g.rank;
    }
    EXPECT_NEAR(sum, 1.0, 1e-9);
  }

  // Runs pagerank on `graph` expecting it to fail; what the run printed.
  std::string ExpectFailure(const std::string& graph, const std::string& output) {
    CommandResult r = Copse({"run", "pagerank", "--input", graph, "--output", output, "--wait"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    uint64_t job = IdOf(r);
    EXPECT_GT(job, 0u);
    nlohmann::json st = Status(job);
    EXPECT_EQ(st.value("state", ""), "failed") << st.dump();
    EXPECT_NE(Copse({"fs", "stat", output}).exit_code, 0) << output << " exists";
    return r.out + r.err;
  }

  std::filesystem::path python_;
};

TEST_F(PageRankTest, GeneratedGraphMatchesTheReference) {
  CommandResult g =
      Copse({"gen", "pagerank", "--output", "/graph", "--partitions", "4", "--scale", "0.002"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  std::string graph = Cat("/graph");
  // About 2 MB a partition; partition p holds p, p+4, ... (as many in each).
  EXPECT_NEAR(static_cast<double>(graph.size()), 8e6, 0.8e6);
  std::vector<uint64_t> ids = LineIds(graph);
  ASSERT_EQ(ids.size() % 4, 0u);
  ASSERT_EQ(ids, PartitionOrder(ids.size(), 4));
  // Skewed: dangling vertices, and a vertex with far more in-edges than most.
  std::vector<uint32_t> in(ids.size(), 0);
  size_t dangling = 0, edges = 0;
  for (size_t pos = graph.find('\t'); pos != std::string::npos; pos = graph.find('\t', pos)) {
    if (graph[++pos] == '\n') ++dangling;
    while (graph[pos] != '\n') {
      char* end = nullptr;
      uint64_t t = std::strtoull(graph.c_str() + pos, &end, 10);
      ASSERT_LT(t, in.size());
      ++in[t];
      ++edges;
      pos = static_cast<size_t>(end - graph.c_str());
    }
  }
  EXPECT_GT(dangling, ids.size() / 20);
  EXPECT_LT(dangling, ids.size() / 4);
  EXPECT_GT(*std::max_element(in.begin(), in.end()), 100 * edges / ids.size());
  // The same seed writes the same graph.
  ASSERT_EQ(
      Copse({"gen", "pagerank", "--output", "/again", "--partitions", "4", "--scale", "0.002"})
          .exit_code,
      0);
  EXPECT_TRUE(Cat("/again") == graph);

  ExpectReferenceRanks("/graph", Local("graph.txt", graph), 4, "/ranks");
}

TEST_F(PageRankTest, HandWrittenGraphMatchesTheReference) {
  // 11 vertices in 3 partitions of 4, 4 and 3: dangling 4, 5 and 6,
  // self-loops at 3, 8 and 10 (10's only edge), multi-edges from 0 and 9,
  // nothing into 7, and lines out of order in partition 2.
  std::string text = EqualPartitions({
      {"0\t1 2 3 3", "3\t3 4", "6\t", "9\t0 5 5 5 10"},
      {"1\t0", "4\t", "7\t0 1 2 4 6 8", "10\t10"},
      {"8\t2 8 1", "2\t9 6", "5\t"},
  });
  std::filesystem::path local = Local("hand.txt", text);
  Put(local, "/hand", 3);
  ExpectReferenceRanks("/hand", local, 3, "/hand-ranks");

  // Fewer vertices than partitions: `fs put` leaves the third one empty.
  local = Local("tiny.txt", "0\t1\n1\t0\n");
  Put(local, "/tiny", 3);
  ExpectReferenceRanks("/tiny", local, 3, "/tiny-ranks");
}

TEST_F(PageRankTest, BadGraphsFailNamingTheCulprit) {
  // Vertex 12345 has an in-edge but no line (two partitions of 10 bytes).
  Put(Local("edge.txt", "0\t1 12345\n1\t0 0 0 0\n"), "/edge", 2);
  std::string said = ExpectFailure("/edge", "/edge-ranks");
  EXPECT_NE(said.find("edge to vertex 12345, which has no line"), std::string::npos) << said;

  // Vertex 3 belongs in partition 1 of 2 (two partitions of 12 bytes).
  Put(Local("misplaced.txt", "0\t1\n2\t0\n3\t0\n1\t2 0 0 0 0\n"), "/misplaced", 2);
  said = ExpectFailure("/misplaced", "/misplaced-ranks");
  EXPECT_NE(said.find("graph /misplaced partition 0 line 3: vertex 3 belongs in partition 1"),
            std::string::npos)
      << said;
}

}  // namespace
}  // namespace copse::testing

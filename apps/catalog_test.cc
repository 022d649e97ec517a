#include "apps/catalog.h"

#include <gtest/gtest.h>

#include <map>

namespace copse::apps {
namespace {

using rootjob::Connection;

RunOptions Options(std::vector<std::string> inputs, std::vector<int> partitions, int out = 0) {
  RunOptions o;
  o.inputs = std::move(inputs);
  o.input_partitions = std::move(partitions);
  o.output = "/out";
  o.partitions = out;
  return o;
}

RunOptions Streaming(RunOptions o) {
  o.streaming.mapper = "wc-map";
  o.streaming.reducer = "wc-reduce@2";
  return o;
}

TEST(CatalogTest, EveryAppBuildsASpecTheMasterAccepts) {
  std::map<std::string, RunOptions> cases = {
      {"prime", Options({"/n"}, {3})},    {"wordcount", Options({"/t"}, {3}, 2)},
      {"sort", Options({"/r"}, {4}, 2)},  {"databasejoin", Options({"/s", "/b"}, {4, 4})},
      {"pagerank", Options({"/g"}, {5})}, {"streaming", Streaming(Options({"/t"}, {3}, 2))},
  };
  for (const std::string& app : RunnableApps()) {
    ASSERT_TRUE(cases.count(app)) << app;
    Result<std::string> json = BuildJobSpec(app, cases[app]);
    ASSERT_TRUE(json.ok()) << app << ": " << json.status().ToString();
    Result<rootjob::JobSpec> spec = rootjob::ParseJobSpec(*json);
    ASSERT_TRUE(spec.ok()) << app << ": " << spec.status().ToString();
    EXPECT_EQ(rootjob::OutputFiles(*spec), std::vector<std::string>{"/out"}) << app;
  }
}

TEST(CatalogTest, SortSamplesEveryPartitionAndSortsIntoTheOutputPartitions) {
  Result<AppJob> job = BuildApp("sort", Options({"/r"}, {4}, 3));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const auto& st = job->spec.stages;
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].name, "sample");
  EXPECT_EQ(st[0].inputs[0].connection, Connection::kGather);
  EXPECT_NE(st[0].params_json.find("\"ranges\":3"), std::string::npos);
  EXPECT_EQ(st[1].inputs[1].stage, "sample");
  EXPECT_EQ(st[1].inputs[1].connection, Connection::kBroadcast);
  EXPECT_EQ(st[2].vertices, 3);
  EXPECT_EQ(st[2].output, "/out");
  EXPECT_DOUBLE_EQ(job->sizes[0].input_fraction[0], 0.01);
  // Without --partitions, as many ranges as input partitions.
  job = BuildApp("sort", Options({"/r"}, {4}));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->spec.stages[2].vertices, 4);
}

TEST(CatalogTest, WordCountWithOnePartitionSumsStraightIntoTheOutput) {
  Result<AppJob> job = BuildApp("wordcount", Options({"/t"}, {}));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_EQ(job->spec.stages.size(), 2u);
  EXPECT_EQ(job->spec.stages[1].name, "sum");
  EXPECT_EQ(job->spec.stages[1].output, "/out");
  job = BuildApp("wordcount", Options({"/t"}, {}, 3));
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->spec.stages.size(), 4u);
  EXPECT_EQ(job->spec.stages[3].name, "write");
}

TEST(CatalogTest, PageRankRunsThreeIterationsOfTwoPhases) {
  Result<AppJob> job = BuildApp("pagerank", Options({"/g"}, {5}));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const auto& st = job->spec.stages;
  ASSERT_EQ(st.size(), 6u);
  EXPECT_EQ(st[2].name, "phase1.2");
  ASSERT_EQ(st[2].inputs.size(), 2u);
  EXPECT_EQ(st[2].inputs[1].stage, "phase2.1");
  EXPECT_EQ(st[5].vertices, 5);
  EXPECT_EQ(st[5].output, "/out");
  EXPECT_TRUE(st[3].output.empty());
}

TEST(CatalogTest, BadOptionsAreRefusedNamingTheOption) {
  auto err = [](const std::string& app, const RunOptions& o) {
    Result<AppJob> r = BuildApp(app, o);
    return r.ok() ? std::string("(accepted)") : r.status().message();
  };
  EXPECT_NE(err("nope", Options({"/x"}, {1})).find("unknown app 'nope'"), std::string::npos);
  EXPECT_NE(err("prime", Options({"/x"}, {1}, 2)).find("--partitions must be 1"),
            std::string::npos);
  EXPECT_NE(err("databasejoin", Options({"/s"}, {4})).find("2 files"), std::string::npos);
  EXPECT_NE(err("databasejoin", Options({"/s", "/b"}, {4, 5})).find("partitioned alike"),
            std::string::npos);
  EXPECT_NE(err("pagerank", Options({"/g"}, {4}, 3)).find("--partitions must be 4"),
            std::string::npos);
  EXPECT_NE(err("sort", Options({"/r"}, {})).find("partition count is not known"),
            std::string::npos);
  RunOptions no_output = Options({"/r"}, {2});
  no_output.output.clear();
  EXPECT_NE(err("sort", no_output).find("--output"), std::string::npos);
}


TEST(CatalogTest, StreamingMapsEachInputAndReducesAllToAllSorted) {
  RunOptions o = Streaming(Options({"/a", "/b"}, {3, 2}, 0));
  o.streaming.combiner = "wc-reduce";
  o.streaming.reducers = 3;
  o.streaming.range_bounds = {"g", "p"};
  Result<AppJob> job = BuildApp("streaming", o);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const auto& st = job->spec.stages;
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].name, "map0");
  EXPECT_EQ(st[0].program, "wc-map");
  ASSERT_TRUE(st[0].streaming.has_value());
  EXPECT_EQ(st[0].streaming->combiner, "wc-reduce");
  EXPECT_EQ(st[0].streaming->range_bounds, (std::vector<std::string>{"g", "p"}));
  EXPECT_EQ(st[2].name, "reduce");
  EXPECT_EQ(st[2].vertices, 3);
  EXPECT_EQ(st[2].program, "wc-reduce@2");
  EXPECT_EQ(st[2].inputs.size(), 2u);
  EXPECT_EQ(st[2].inputs[0].connection, Connection::kAllToAll);
  EXPECT_EQ(st[2].streaming->sort, "auto");
  EXPECT_EQ(st[2].output, "/out");
  // Bounds that do not fit the reducers, and no programs, are named.
  o.streaming.range_bounds = {"g"};
  EXPECT_NE(BuildApp("streaming", o).status().message().find("--range gives 1 bounds"),
            std::string::npos);
  EXPECT_NE(BuildApp("streaming", Options({"/a"}, {1}, 0)).status().message().find("--mapper"),
            std::string::npos);
}

}  // namespace
}  // namespace copse::apps

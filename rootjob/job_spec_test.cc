#include "rootjob/job_spec.h"

#include <gtest/gtest.h>

namespace copse::rootjob {
namespace {

// WordCount as docs/jobs.md shows it: count each partition, shuffle to
// reducers, gather the top words.
constexpr const char* kWordCount = R"({
  "name": "wordcount",
  "settings": {"attempts": 2, "vertex_timeout_s": 60, "duplicate_factor": 1.5,
               "duplicate_floor_s": 5, "max_tasks": 8, "pool": "analytics"},
  "stages": [
    {"name": "top", "program": "wordcount", "params": {"role": "top", "n": 10},
     "inputs": [{"stage": "sum", "connection": "gather"}], "output": "/out/top"},
    {"name": "count", "program": "wordcount", "params": {"role": "count"},
     "inputs": [{"file": "/corpus"}]},
    {"name": "sum", "program": "wordcount", "params": {"role": "sum"}, "vertices": 4,
     "inputs": [{"stage": "count", "connection": "all-to-all"},
                {"file": "/stopwords", "connection": "broadcast"}]}
  ]
})";

std::string Error(std::string_view text, const SpecLimits& limits = {}) {
  Result<JobSpec> r = ParseJobSpec(text, limits);
  if (r.ok()) return "(accepted)";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  return r.status().message();
}

TEST(JobSpecTest, ParsesOrdersStagesAndBuildsTheDag) {
  Result<JobSpec> spec = ParseJobSpec(kWordCount);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name, "wordcount");
  EXPECT_EQ(spec->settings.attempts, 2);
  EXPECT_EQ(spec->settings.vertex_timeout, Duration{60'000'000});
  EXPECT_EQ(spec->settings.duplicate_factor, 1.5);
  EXPECT_EQ(spec->settings.max_tasks, 8);
  EXPECT_EQ(spec->settings.pool.name, "analytics");
  ASSERT_EQ(spec->stages.size(), 3u);  // ordered so that inputs come first
  EXPECT_EQ(spec->stages[0].name, "count");
  EXPECT_EQ(spec->stages[1].name, "sum");
  EXPECT_EQ(spec->stages[2].name, "top");
  EXPECT_EQ(spec->stages[2].vertices, 1);  // a gather stage has one vertex
  EXPECT_EQ(spec->stages[2].params_json, R"({"n":10,"role":"top"})");
  EXPECT_EQ(InputFiles(*spec), (std::vector<std::string>{"/corpus", "/stopwords"}));
  EXPECT_EQ(OutputFiles(*spec), (std::vector<std::string>{"/out/top"}));

  Result<JobDag> dag = BuildJobDag(*spec, {{"/corpus", {12, 1200}}, {"/stopwords", {1, 10}}});
  ASSERT_TRUE(dag.ok()) << dag.status().ToString();
  EXPECT_EQ(dag->stages[0].vertices, 12);  // one per partition
  EXPECT_EQ(dag->stages[1].inputs[0].source, 0);
  EXPECT_FALSE(dag->stages[1].inputs[0].from_file);
  EXPECT_EQ(dag->stages[1].inputs[1].connection, Connection::kBroadcast);
  EXPECT_EQ(dag->files[1].name, "/stopwords");
  EXPECT_EQ(dag->TotalVertices(), 17);

  // Round trip through the stored form.
  Result<JobSpec> again = ParseJobSpec(JobSpecToJson(*spec));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(JobSpecToJson(*again), JobSpecToJson(*spec));
}

TEST(JobSpecTest, FileFactsDecideCountsAndExistence) {
  Result<JobSpec> spec = ParseJobSpec(kWordCount);
  ASSERT_TRUE(spec.ok());
  Result<JobDag> missing = BuildJobDag(*spec, {{"/corpus", {12, 1200}}});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/stopwords"), std::string::npos);
  Result<JobDag> wide = BuildJobDag(*spec, {{"/corpus", {12, 1}}, {"/stopwords", {2, 1}}});
  EXPECT_NE(wide.status().message().find("broadcast needs a single item"), std::string::npos);
  Result<JobDag> big = BuildJobDag(*spec, {{"/corpus", {200, 1}}, {"/stopwords", {1, 1}}},
                                   SpecLimits{100});
  EXPECT_NE(big.status().message().find("over the cluster's limit of 100"), std::string::npos);
  // A pointwise file input fixes the count: a stated different one is refused.
  Result<JobSpec> stated = ParseJobSpec(R"({"name": "p", "stages": [
      {"name": "s", "program": "prime", "vertices": 3, "inputs": [{"file": "/n"}]}]})");
  ASSERT_TRUE(stated.ok());
  Result<JobDag> mismatch = BuildJobDag(*stated, {{"/n", {4, 1}}});
  EXPECT_NE(mismatch.status().message().find("stage 's': reads pointwise"), std::string::npos)
      << mismatch.status().message();
}

TEST(JobSpecTest, RefusesBadSpecsNamingWhere) {
  EXPECT_NE(Error("{").find("malformed JSON"), std::string::npos);
  EXPECT_NE(Error("[]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(Error(R"({"name": "x", "stages": [], "colour": 1})").find("unknown key 'colour'"),
            std::string::npos);
  EXPECT_NE(Error(R"({"name": "x", "stages": []})").find("non-empty list"), std::string::npos);
  auto one = [](const std::string& stage) {
    return R"({"name": "x", "stages": [)" + stage + "]}";
  };
  EXPECT_NE(Error(one(R"({"name": "s", "program": "/bin/sh", "vertices": 1})"))
                .find("stage 's': program '/bin/sh' is a path"),
            std::string::npos);
  EXPECT_NE(Error(one(R"({"name": "s", "program": "rm -rf", "vertices": 1})"))
                .find("is not a program name"),
            std::string::npos);
  EXPECT_NE(Error(one(R"({"name": "s", "program": "noop", "vertices": 1, "params": [1]})"))
                .find("stage 's': 'params' must be a JSON object"),
            std::string::npos);
  EXPECT_NE(Error(one(R"({"name": "s", "program": "noop", "vertices": "2"})"))
                .find("'vertices' must be a number"),
            std::string::npos);
  EXPECT_NE(Error(one(R"({"name": "s", "program": "noop", "vertices": 1,
                         "inputs": [{"stage": "ghost"}]})"))
                .find("stage 's': no stage 'ghost'"),
            std::string::npos);
  EXPECT_NE(Error(one(R"({"name": "s", "program": "noop", "vertices": 1,
                         "inputs": [{"file": "/f", "connection": "all-to-all"}]})"))
                .find("not all-to-all"),
            std::string::npos);
  EXPECT_NE(Error(one(R"({"name": "s", "program": "noop", "vertices": 1,
                         "inputs": [{"file": "/f", "connection": "sideways"}]})"))
                .find("unknown connection 'sideways'"),
            std::string::npos);
  EXPECT_NE(Error(R"({"name": "x", "settings": {"attempts": "3"}, "stages": [
                    {"name": "s", "program": "noop", "vertices": 1}]})")
                .find("settings: 'attempts' must be a number"),
            std::string::npos);
  EXPECT_NE(Error(R"({"name": "x", "settings": {"attempts": 0}, "stages": [
                    {"name": "s", "program": "noop", "vertices": 1}]})")
                .find("'attempts' must be in [1, 100]"),
            std::string::npos);
  // A cycle.
  EXPECT_NE(Error(R"({"name": "x", "stages": [
      {"name": "a", "program": "noop", "vertices": 1, "inputs": [{"stage": "b"}]},
      {"name": "b", "program": "noop", "vertices": 1, "inputs": [{"stage": "a"}]}]})")
                .find("cycle through a, b"),
            std::string::npos);
  // Pointwise stages of different sizes.
  EXPECT_NE(Error(R"({"name": "x", "stages": [
      {"name": "a", "program": "noop", "vertices": 2},
      {"name": "b", "program": "noop", "vertices": 3, "inputs": [{"stage": "a"}]}]})")
                .find("stage 'b': reads pointwise, so it needs as many vertices as its input, but "
                      "it has 3 and stage 'a' has 2 vertices"),
            std::string::npos);
  // An output stage is a sink.
  EXPECT_NE(Error(R"({"name": "x", "stages": [
      {"name": "a", "program": "noop", "vertices": 2, "output": "/o"},
      {"name": "b", "program": "noop", "inputs": [{"stage": "a"}]}]})")
                .find("writes the job output /o and cannot be read"),
            std::string::npos);
  EXPECT_NE(Error(R"({"name": "x", "stages": [
      {"name": "a", "program": "noop", "vertices": 1}, {"name": "a", "program": "noop", "vertices": 1}]})")
                .find("used twice"),
            std::string::npos);
  EXPECT_NE(Error(one(R"({"name": "s", "program": "noop", "vertices": 200})"), SpecLimits{100})
                .find("'vertices' must be in [1, 100]"),
            std::string::npos);
  EXPECT_NE(Error(R"({"name": "x", "stages": [
      {"name": "a", "program": "noop", "vertices": 60}, {"name": "b", "program": "noop", "vertices": 60}]})",
                  SpecLimits{100})
                .find("120 vertices is over the cluster's limit of 100"),
            std::string::npos);
  std::string huge = one(R"({"name": "s", "program": "noop", "vertices": 1, "params": {"pad": ")" +
                         std::string(kMaxSpecBytes, 'x') + "\"}}");
  EXPECT_NE(Error(huge).find("over the limit of 1048576 bytes"), std::string::npos);
}

TEST(JobSpecTest, ProgramNames) {
  EXPECT_TRUE(ValidProgramName("wordcount"));
  EXPECT_TRUE(ValidProgramName("sort-partition_2"));
  EXPECT_FALSE(ValidProgramName(""));
  EXPECT_FALSE(ValidProgramName("../bin/sh"));
  EXPECT_FALSE(ValidProgramName("Prime"));
  EXPECT_FALSE(ValidProgramName("9lives"));
  EXPECT_FALSE(ValidProgramName("a b"));
  EXPECT_FALSE(ValidProgramName(std::string(65, 'a')));
}

}  // namespace
}  // namespace copse::rootjob

// Job graphs built in code (copse/job.h): Dryad's operators give the spec
// the CLI takes, and a graph built wrong says how before it is sent.
#include "copse/job.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace copse {
namespace {

using nlohmann::json;

json Spec(const JobSpec& s) {
  Result<std::string> text = s.ToJson();
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? json::parse(*text) : json();
}

const json& StageNamed(const json& spec, const std::string& name) {
  for (const json& s : spec["stages"]) {
    if (s["name"] == name) return s;
  }
  static const json none;
  ADD_FAILURE() << "no stage " << name << " in " << spec;
  return none;
}

TEST(JobGraphTest, PointwiseThenAllToAllGivesTheSpecTheCliTakes) {
  Graph map = Input("/logs") >= Stage("match", "grep-count").Param("role", "match");
  Graph job = map >> (Stage("sum", "grep-count@2").Param("role", "sum").Param("n", 3) ^ 4);
  json spec = Spec(JobSpec("grep", job.WriteTo("/out")).Attempts(5).VertexTimeout(60));
  EXPECT_EQ(spec["name"], "grep");
  EXPECT_EQ(spec["settings"]["attempts"], 5);
  const json& match = StageNamed(spec, "match");
  EXPECT_EQ(match["inputs"][0], (json{{"file", "/logs"}, {"connection", "pointwise"}}));
  EXPECT_FALSE(match.contains("vertices"));
  const json& sum = StageNamed(spec, "sum");
  EXPECT_EQ(sum["program"], "grep-count@2");
  EXPECT_EQ(sum["vertices"], 4);
  EXPECT_EQ(sum["params"], (json{{"role", "sum"}, {"n", 3}}));
  EXPECT_EQ(sum["inputs"][0], (json{{"stage", "match"}, {"connection", "all-to-all"}}));
  EXPECT_EQ(sum["output"], "/out");
}

TEST(JobGraphTest, GraphsComposeFromSmallerGraphs) {
  // Two inputs mapped side by side (||), both into one gathering stage.
  Graph left = Input("/a") >= Stage("left", "noop");
  Graph right = Input("/b") >= Stage("right", "noop");
  Graph both = left || right;
  Graph job = Gather(both, Stage("total", "noop"));
  json spec = Spec(JobSpec("composed", job.WriteTo("/total")));
  const json& total = StageNamed(spec, "total");
  ASSERT_EQ(total["inputs"].size(), 2u);
  EXPECT_EQ(total["inputs"][0]["connection"], "gather");
  // A broadcast side input: one vertex's output to every vertex.
  Graph side = Stage("dict", "noop") ^ 1;
  Graph lookup = Broadcast(side, Stage("lookup", "noop") ^ 3) ||
                 (Input("/c") >= (Stage("lookup", "noop") ^ 3));
  json s2 = Spec(JobSpec("lookup", lookup.WriteTo("/o")));
  EXPECT_EQ(StageNamed(s2, "lookup")["inputs"].size(), 2u);
}

TEST(JobGraphTest, StreamingStagesCarryTheirSettings) {
  StreamingOptions o;
  o.combiner = "wc-reduce";
  o.range_bounds = {"m"};
  Graph g = (Input("/in") >= Stage("map", "wc-map").Streaming(o)) >>
            (Stage("reduce", "wc-reduce").Streaming({}) ^ 2);
  json spec = Spec(JobSpec("wc", g.WriteTo("/out")));
  EXPECT_EQ(StageNamed(spec, "map")["streaming"]["combiner"], "wc-reduce");
  EXPECT_EQ(StageNamed(spec, "map")["streaming"]["range_bounds"], (json{"m"}));
  EXPECT_EQ(StageNamed(spec, "reduce")["streaming"]["sort"], "auto");
}

TEST(JobGraphTest, GraphsBuiltWrongAreNamedBeforeTheyAreSent) {
  struct Case {
    JobSpec spec;
    std::string why;
  } cases[] = {
      {JobSpec("x", Input("/a") >> Stage("s", "noop")), "not all-to-all"},
      {JobSpec("x", (Stage("a", "noop") || Stage("b", "noop")).WriteTo("/o")), "2 output stages"},
      {JobSpec("x", Stage("a", "noop") || Stage("a", "sort")), "two different stages"},
      {JobSpec("x", Stage("a", "/bin/sh")), "is a path"},
      {JobSpec("x", Stage("bad name", "noop")), "stage name"},
      {JobSpec("x", Input("/never-read")), "read by no stage"},
      {JobSpec("x", Stage("a", "noop").Param("delay", 1.0) >= Stage("a", "noop").Param("delay", 1.0)),
       "its own output"},
  };
  for (const Case& c : cases) {
    Result<std::string> r = c.spec.ToJson();
    ASSERT_FALSE(r.ok()) << c.why;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.why;
    EXPECT_NE(r.status().message().find(c.why), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace copse

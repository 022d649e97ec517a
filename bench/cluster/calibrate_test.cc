#include "bench/cluster/calibrate.h"

#include <gtest/gtest.h>

namespace copse::bench {
namespace {

std::vector<VertexSample> Line(const std::string& key, double fixed, double per_gb,
                               std::vector<int64_t> bytes, double startup) {
  std::vector<VertexSample> v;
  for (int64_t b : bytes) {
    v.push_back({key, startup + fixed + per_gb * static_cast<double>(b) / 1e9, b, 0});
  }
  return v;
}

TEST(CalibrateTest, RecoversALineFromRunsOfDifferentSizes) {
  // Twenty cheap runs set the startup (0.2 s); the sort stage is 1 s + 30 s/GB.
  std::vector<VertexSample> runs(20, VertexSample{"prime_small/prime.total", 0.2, 0, 0});
  auto sort = Line("sort/sort.sort", 1.0, 30.0, {100'000'000, 200'000'000, 400'000'000}, 0.2);
  runs.insert(runs.end(), sort.begin(), sort.end());
  Calibration c = Calibrate(runs, {0.5, 0.9, 0.7}, 8);
  EXPECT_DOUBLE_EQ(c.model.task_startup_s, 0.2);
  EXPECT_DOUBLE_EQ(c.model.root_startup_s, 0.7);
  const sim::StageCost& s = c.model.stages.at("sort/sort.sort");
  EXPECT_NEAR(s.fixed_s, 1.0, 1e-9);
  EXPECT_NEAR(s.per_gb_s, 30.0, 1e-9);
  EXPECT_EQ(c.samples.at("sort/sort.sort"), 3);
  EXPECT_NEAR(c.model.stages.at("prime_small/prime.total").fixed_s, 0, 1e-12);
}

TEST(CalibrateTest, RemoteBytesAtTheLinkRateAreNotCompute) {
  // 1 GB read remotely over an 8 Gbit/s link takes 1 s in the simulator's
  // network, so a 3.5 s run with 0.5 s startup computed for 2 s.
  std::vector<VertexSample> runs(20, VertexSample{"a/p.x", 0.5, 0, 0});
  runs.push_back({"b/q.y", 3.5, 0, 1'000'000'000});
  Calibration c = Calibrate(runs, {}, 8);
  EXPECT_NEAR(c.model.stages.at("b/q.y").per_gb_s, 2.0, 1e-9);
  EXPECT_EQ(c.model.stages.at("b/q.y").fixed_s, 0);
}

TEST(CalibrateTest, EqualSizesGoThroughTheOriginAndNegativeFitsAreClamped) {
  std::vector<VertexSample> runs(20, VertexSample{"a/p.x", 0.1, 0, 0});
  auto same = Line("w/c.c", 0, 10.0, {50'000'000, 52'000'000, 51'000'000}, 0.1);
  runs.insert(runs.end(), same.begin(), same.end());
  // Falling with size (noise): a flat line at the mean.
  runs.push_back({"f/f.f", 0.1 + 3.0, 100'000'000, 0});
  runs.push_back({"f/f.f", 0.1 + 2.0, 200'000'000, 0});
  runs.push_back({"f/f.f", 0.1 + 1.0, 400'000'000, 0});
  Calibration c = Calibrate(runs, {}, 8);
  EXPECT_NEAR(c.model.stages.at("w/c.c").per_gb_s, 10.0, 1e-9);
  EXPECT_EQ(c.model.stages.at("w/c.c").fixed_s, 0);
  EXPECT_NEAR(c.model.stages.at("f/f.f").fixed_s, 2.0, 1e-9);
  EXPECT_EQ(c.model.stages.at("f/f.f").per_gb_s, 0);
  EXPECT_EQ(c.model.root_startup_s, 0);
}

}  // namespace
}  // namespace copse::bench

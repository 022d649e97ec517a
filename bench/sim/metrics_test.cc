#include "bench/sim/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace copse::bench {
namespace {

TEST(MetricsTest, WorkedByHand) {
  // ANPs 1 and 0.25 (slowdowns 1 and 4).
  std::vector<JobTimes> jobs = {{0, 10, 10, 5, 6, 7}, {10, 50, 10, 1, 2, 3}};
  RunMetrics m = ComputeMetrics(jobs);
  EXPECT_DOUBLE_EQ(m.makespan_s, 50);
  EXPECT_DOUBLE_EQ(m.snp, 0.5);  // sqrt(1 * 0.25)
  EXPECT_DOUBLE_EQ(m.slowdown_l1, 2.5);
  EXPECT_DOUBLE_EQ(m.slowdown_l2, std::sqrt(17.0) / std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(m.slowdown_linf, 4);
  // mean 0.625, population std 0.375: CV 0.6.
  EXPECT_NEAR(m.unfairness, 0.6, 1e-12);
  EXPECT_EQ(m.dt_local_bytes, 6);
  EXPECT_EQ(m.dt_rack_bytes, 8);
  EXPECT_EQ(m.dt_core_bytes, 10);
}

TEST(MetricsTest, EqualSlowdownsAreFair) {
  RunMetrics m = ComputeMetrics({{0, 20, 10}, {0, 40, 20}, {5, 25, 10}});
  EXPECT_NEAR(m.unfairness, 0, 1e-12);
  EXPECT_DOUBLE_EQ(m.snp, 0.5);
  EXPECT_DOUBLE_EQ(m.slowdown_linf, 2);
}

TEST(MetricsTest, NearestRankPercentiles) {
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(Percentile(v, 50), 5);
  EXPECT_EQ(Percentile(v, 99), 10);
  EXPECT_EQ(Percentile(v, 10), 1);
  EXPECT_EQ(Percentile(v, 11), 2);
  EXPECT_EQ(Percentile({7}, 50), 7);
  EXPECT_EQ(Percentile({}, 50), 0);
}

}  // namespace
}  // namespace copse::bench

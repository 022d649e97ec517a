// The scheduling record fed by hand, as the scheduling service feeds it: the
// rounds and latencies it keeps, and what it tells the metrics.
#include "master/scheduling_record.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "master/metrics.h"

namespace copse::master {
namespace {

using Json = nlohmann::json;

bool HasLine(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l == line) return true;
  }
  return false;
}

scheduler::RoundInfo Round(int64_t at_us, size_t decisions) {
  return scheduler::RoundInfo{Timestamp{at_us}, Duration{1000}, decisions};
}

TEST(SchedulingRecordTest, KeepsTheLatestRoundsOldestFirst) {
  SchedulingRecord record;
  for (size_t i = 0; i < SchedulingRecord::kRoundsKept + 5; ++i) {
    record.OnRound(Round(static_cast<int64_t>(i), i), Json{{"i", i}});
  }
  ASSERT_EQ(record.rounds().size(), SchedulingRecord::kRoundsKept);
  EXPECT_EQ(record.rounds().front().at, Timestamp{5});
  EXPECT_EQ(record.rounds().front().decisions, 5u);
  EXPECT_EQ(record.rounds().front().policy["i"], 5);
  EXPECT_EQ(record.rounds().back().at, Timestamp{SchedulingRecord::kRoundsKept + 4});
}

TEST(SchedulingRecordTest, KeepsLatenciesUntilReset) {
  SchedulingRecord record;
  record.OnLaunchLatency(Duration{250});
  record.OnLaunchLatency(Duration{40});
  EXPECT_EQ(record.decision_latencies(), (std::deque<int64_t>{250, 40}));
  record.ResetStats();
  EXPECT_TRUE(record.decision_latencies().empty());
  for (size_t i = 0; i < SchedulingRecord::kLatenciesKept + 1; ++i) {
    record.OnLaunchLatency(Duration{static_cast<int64_t>(i)});
  }
  ASSERT_EQ(record.decision_latencies().size(), SchedulingRecord::kLatenciesKept);
  EXPECT_EQ(record.decision_latencies().front(), 1) << "the oldest was not the one dropped";
}

TEST(SchedulingRecordTest, TheMetricsSeeASolveOnlyWhenThePolicySolvedAgain) {
  MasterMetrics metrics;
  SchedulingRecord record(&metrics);
  // A Quincy policy's statistics: its count of solved rounds and the last
  // solve's time. A round that did not solve leaves both as they were.
  record.OnRound(Round(1, 3), Json{{"rounds", 1u}, {"solve_ms", 2.0}});
  record.OnRound(Round(2, 0), Json{{"rounds", 1u}, {"solve_ms", 2.0}});
  record.OnRound(Round(3, 1), Json{{"rounds", 2u}, {"solve_ms", 4.0}});
  record.OnRound(Round(4, 0), Json::object());  // a policy without solves
  record.OnVertexRunEnded("completed");
  record.OnVertexRunEnded("preempted");
  std::string t = metrics.Serialize();
  EXPECT_TRUE(HasLine(t, "copse_scheduler_rounds_total 4")) << t;
  EXPECT_TRUE(HasLine(t, "copse_scheduler_decisions_total 4")) << t;
  EXPECT_TRUE(HasLine(t, "copse_scheduler_solve_duration_seconds_count 2")) << t;
  EXPECT_TRUE(HasLine(t, "copse_scheduler_solve_duration_seconds_sum 0.006")) << t;
  EXPECT_TRUE(HasLine(t, "copse_vertex_runs_total{outcome=\"completed\"} 1")) << t;
  EXPECT_TRUE(HasLine(t, "copse_vertex_runs_total{outcome=\"preempted\"} 1")) << t;
}

}  // namespace
}  // namespace copse::master

#include "scheduler/quincy_costs.h"

#include <gtest/gtest.h>

namespace copse::scheduler {
namespace {

constexpr int64_t kGB = 1'000'000'000;

TaskLocality Example() {
  TaskLocality loc;
  loc.worst = {4 * kGB, 4 * kGB};
  loc.racks.push_back({2, {4 * kGB, 1 * kGB}});
  loc.computers.push_back({17, {3 * kGB, 1 * kGB}});
  return loc;
}

TEST(QuincyCostsTest, MilliUnitsOfThePaperCosts) {
  QuincyCostParams p;                                     // ω = 0.5, ψ = 1, ξ = 2
  EXPECT_EQ(DataCostMilli(p, {kGB, 0}), 1000);            // ψ = 1 per GB
  EXPECT_EQ(DataCostMilli(p, {0, kGB}), 2000);            // ξ = 2 per GB
  EXPECT_EQ(DataCostMilli(p, {1'000'000, 0}), 1);         // 1 per MB
  EXPECT_EQ(WaitCostMilli(p, Duration{1'000'000}), 500);  // 500 per second
  EXPECT_EQ(WaitCostMilli(p, Duration{3'000'000}), 1500);
}

// The clock hint's step: the shortest whole milliseconds whose wait cost is
// a whole number of milli-units, and moving a clock by it moves every wait
// cost by the same integer.
TEST(QuincyCostsTest, ClockQuantumIsTheShortestStepWithWholeWaitCosts) {
  QuincyCostParams p;
  EXPECT_EQ(ClockQuantum(p), Duration{2000});  // ω = 0.5
  p.omega = 1;
  EXPECT_EQ(ClockQuantum(p), Duration{1000});
  p.omega = 0.3;
  EXPECT_EQ(ClockQuantum(p), Duration{10'000});
  p.omega = 0.0001234567;
  EXPECT_EQ(ClockQuantum(p), Duration{0});
  p.omega = 0.3;
  const int64_t step = WaitCostMilli(p, ClockQuantum(p));
  for (int64_t us : {0, 1, 499, 1666, 123'456'789}) {
    EXPECT_EQ(WaitCostMilli(p, Duration{us} + 7 * ClockQuantum(p)),
              WaitCostMilli(p, Duration{us}) + 7 * step)
        << us;
  }
}

TEST(QuincyCostsTest, WaitingTaskCostsAndCaps) {
  QuincyCostParams p;
  p.max_cost_milli = 9000;
  TaskTimes t;
  t.unscheduled = Duration{10'000'000};
  QuincyArcCosts c = ComputeQuincyCosts(p, Example(), t, std::nullopt, 8);
  EXPECT_EQ(c.unscheduled, 5000);
  EXPECT_EQ(c.any_computer, 9000);  // 4 + 8 = 12 paper units, capped at Ω
  ASSERT_EQ(c.racks.size(), 1u);
  EXPECT_EQ(c.racks[0], 6000);
  ASSERT_EQ(c.computers.size(), 1u);
  EXPECT_EQ(c.computers[0], 5000);
  EXPECT_FALSE(c.running.has_value());
  t.unscheduled = Duration{100'000'000};
  EXPECT_EQ(ComputeQuincyCosts(p, Example(), t, std::nullopt, 8).unscheduled, 9000);
}

TEST(QuincyCostsTest, RunningCostFallsWithRunningTime) {
  QuincyCostParams p;
  TaskTimes t;
  t.running = Duration{2'000'000};
  QuincyArcCosts c = ComputeQuincyCosts(p, Example(), t, RunningOn{17, 2}, 8);
  ASSERT_TRUE(c.running.has_value());
  EXPECT_EQ(*c.running, 5000 - 2000 - kRunningTieBreakMilli);
  EXPECT_EQ(c.computers[0], *c.running);
  t.running = Duration{3'000'000};
  EXPECT_EQ(*ComputeQuincyCosts(p, Example(), t, RunningOn{17, 2}, 8).running,
            2000 - kRunningTieBreakMilli);
  // Just started, it costs less where it runs than it would waiting for
  // that computer: among equal placements the running task stays.
  t.running = Duration{0};
  EXPECT_LT(*ComputeQuincyCosts(p, Example(), t, RunningOn{17, 2}, 8).running,
            ComputeQuincyCosts(p, Example(), t, std::nullopt, 8).computers[0]);
}

TEST(QuincyCostsTest, ApproximationsForNonPreferredRacksAndComputers) {
  TaskLocality loc = Example();
  EXPECT_EQ(RackBytes(loc, 2, 8).core, 1 * kGB);
  TransferBytes other = RackBytes(loc, 5, 8);
  EXPECT_EQ(other.rack, kGB / 2);  // X^X / P
  EXPECT_EQ(other.core, 4 * kGB);
  EXPECT_EQ(ComputerBytes(loc, 17, 2, 8).rack, 3 * kGB);
  EXPECT_EQ(ComputerBytes(loc, 18, 2, 8).rack, 4 * kGB);  // its rack's
  QuincyCostParams p;
  TaskTimes t;
  QuincyArcCosts c = ComputeQuincyCosts(p, loc, t, RunningOn{40, 5}, 8);
  EXPECT_EQ(*c.running, DataCostMilli(p, other) - kRunningTieBreakMilli);
}

// The approximations can price a computer outside the preferred lists
// above the worst computer (α): with R^X = 0, a non-preferred rack's
// (X^X / P, X^X) costs more than (0, X^X). A task running there costs no
// more than reaching that computer afresh through X would.
TEST(QuincyCostsTest, ARunningTaskCostsNoMoreThanReachingItsComputerAfresh) {
  TaskLocality loc;
  loc.worst = {0, 4 * kGB};
  QuincyCostParams p;
  const int64_t alpha = DataCostMilli(p, loc.worst);                 // 8000
  ASSERT_GT(DataCostMilli(p, ComputerBytes(loc, 40, 5, 8)), alpha);  // 8500
  TaskTimes t;
  t.running = Duration{3'000'000};
  QuincyArcCosts c = ComputeQuincyCosts(p, loc, t, RunningOn{40, 5}, 8);
  EXPECT_EQ(c.any_computer, alpha);
  EXPECT_EQ(*c.running, alpha - 3000 - kRunningTieBreakMilli);
}

}  // namespace
}  // namespace copse::scheduler

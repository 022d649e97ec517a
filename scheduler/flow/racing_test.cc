// RacingSolver's scheduling: hedged races start the last winner alone and
// the other contestant only after the deadline; small graphs are solved by
// the solo contestant alone. Scripted contestants either solve (with a real
// solver) or block until cancelled, so no outcome depends on timing.
#include "scheduler/flow/racing.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/verify.h"

namespace copse::flow {
namespace {

class ScriptedSolver final : public FlowSolver {
 public:
  // script[i]: true = solve call i, false = block until cancelled.
  ScriptedSolver(std::string name, std::vector<bool> script)
      : name_(std::move(name)), script_(std::move(script)) {}
  std::string_view name() const override { return name_; }
  Status Solve(const FlowGraph& g, FlowSolution* out, const CancelFlag* cancel) override {
    size_t call = calls_++;
    if (call < script_.size() && script_[call]) return real_.Solve(g, out, cancel);
    while (!IsCancelled(cancel)) std::this_thread::yield();
    return Cancelled("solve cancelled");
  }
  void Adopt(const FlowGraph&, const FlowSolution&) override { ++adopted_; }
  int calls() const { return static_cast<int>(calls_.load()); }
  int adopted() const { return adopted_; }

 private:
  std::string name_;
  std::vector<bool> script_;
  std::atomic<size_t> calls_{0};
  int adopted_ = 0;
  CostScalingSolver real_;
};

TEST(RacingSolverTest, HedgedRaceStartsTheLeaderAloneAndTheOtherAfterTheDeadline) {
  auto* a = new ScriptedSolver("a", {true, false, false});
  auto* b = new ScriptedSolver("b", {false, true, true});
  RaceOptions o;
  o.hedge_factor = 1;
  o.hedge_min_ms = 0;
  RacingSolver race("race", std::unique_ptr<FlowSolver>(a), std::unique_ptr<FlowSolver>(b), o);
  FlowGraph g = testing::RandomGraph(testing::Shape::kSparse, 30, 5);
  FlowSolution sol;

  // No leader yet: both start; b blocks, so a wins and b adopts.
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "a");
  EXPECT_TRUE(CheckSolution(g, sol).ok());
  EXPECT_EQ(b->calls(), 1);
  EXPECT_EQ(b->adopted(), 1);

  // a leads and starts alone but blocks: b joins after the deadline and wins.
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "b");
  EXPECT_GE(race.stats().second_start_ms, 0);
  EXPECT_EQ(a->calls(), 2);
  EXPECT_EQ(a->adopted(), 1);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
}

TEST(RacingSolverTest, HedgedLeaderThatAnswersInTimeRunsAlone) {
  auto* a = new ScriptedSolver("a", {false, false});
  auto* b = new ScriptedSolver("b", {true, true});
  RaceOptions o;
  o.hedge_factor = 1e9;  // the deadline never passes in this test
  RacingSolver race("race", std::unique_ptr<FlowSolver>(a), std::unique_ptr<FlowSolver>(b), o);
  FlowGraph g = testing::RandomGraph(testing::Shape::kDense, 30, 6);
  FlowSolution sol;
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "b");
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "b");
  EXPECT_LT(race.stats().second_start_ms, 0);
  EXPECT_EQ(a->calls(), 1);  // only in the first, unhedged race
  EXPECT_EQ(a->adopted(), 2);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
}

// A leader that always answers in time would keep the other idle for good:
// every probe_every solves both start at once, and a faster other takes the lead.
TEST(RacingSolverTest, HedgedRacesProbeTheOtherContestantPeriodically) {
  // a: wins the first race, then blocks from the probe on; b: blocks while
  // only a runs (never called then), solves once probed.
  auto* a = new ScriptedSolver("a", {true, true, true, true, false, true});
  auto* b = new ScriptedSolver("b", {false, true, true});
  RaceOptions o;
  o.hedge_factor = 1e9;  // the deadline never passes in this test
  o.probe_every = 3;
  RacingSolver race("race", std::unique_ptr<FlowSolver>(a), std::unique_ptr<FlowSolver>(b), o);
  FlowGraph g = testing::RandomGraph(testing::Shape::kSparse, 30, 8);
  FlowSolution sol;
  // Solve 1: no leader, both start, a wins. Solves 2-4: a alone.
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
    EXPECT_EQ(race.last_winner(), "a") << i;
    EXPECT_FALSE(race.stats().probe) << i;
  }
  EXPECT_EQ(b->calls(), 1);
  // Solve 5: three in a row with a alone, so both start; a blocks, b wins.
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_TRUE(race.stats().probe);
  EXPECT_EQ(race.last_winner(), "b");
  EXPECT_TRUE(CheckSolution(g, sol).ok());
  // Solve 6: b leads alone now.
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "b");
  EXPECT_FALSE(race.stats().probe);
  EXPECT_EQ(a->calls(), 5);
}

TEST(RacingSolverTest, SmallGraphsAreSolvedByTheSoloContestantAlone) {
  auto* a = new ScriptedSolver("a", {});
  auto* b = new ScriptedSolver("b", {true, true});
  RaceOptions o;
  o.solo_below_arcs = 1000000;
  o.solo = 1;
  RacingSolver race("race", std::unique_ptr<FlowSolver>(a), std::unique_ptr<FlowSolver>(b), o);
  FlowGraph g = testing::RandomGraph(testing::Shape::kSparse, 40, 7);
  FlowSolution sol;
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_FALSE(race.stats().raced);
  EXPECT_EQ(race.last_winner(), "b");
  EXPECT_EQ(a->calls(), 0);
  EXPECT_EQ(a->adopted(), 1);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
}

TEST(RacingSolverTest, FirstLeaderStartsAloneBeforeAnyRaceIsWon) {
  auto* a = new ScriptedSolver("a", {true});
  auto* b = new ScriptedSolver("b", {false, true});
  RaceOptions o;
  o.hedge_factor = 1;
  o.first_leader = 1;
  o.first_delay_ms = 0;  // b blocks, so a must join after the delay and win
  RacingSolver race("race", std::unique_ptr<FlowSolver>(a), std::unique_ptr<FlowSolver>(b), o);
  FlowGraph g = testing::RandomGraph(testing::Shape::kSparse, 30, 9);
  FlowSolution sol;
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "a");
  EXPECT_GE(race.stats().second_start_ms, 0);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
}

TEST(RacingSolverTest, CancellingTheCallerCancelsAHedgedRace) {
  auto* a = new ScriptedSolver("a", {true});
  auto* b = new ScriptedSolver("b", {false, false});
  RaceOptions o;
  o.hedge_factor = 1;
  o.hedge_min_ms = 0;
  RacingSolver race("race", std::unique_ptr<FlowSolver>(a), std::unique_ptr<FlowSolver>(b), o);
  FlowGraph g = testing::RandomGraph(testing::Shape::kSparse, 30, 8);
  FlowSolution sol;
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  CancelFlag cancel;
  cancel.Cancel();
  EXPECT_EQ(race.Solve(g, &sol, &cancel).code(), StatusCode::kCancelled);
}

// `units` supplies of one unit whose cheapest way to the deficit is one arc
// of capacity `cheap_capacity`; the others pay 100 per unit on their own arcs.
FlowGraph Funnel(int units, int64_t cheap_capacity) {
  FlowGraph g;
  NodeId sink = g.AddNode(-units);
  NodeId hub = g.AddNode(0);
  g.AddArc(hub, sink, cheap_capacity, 0);
  for (int i = 0; i < units; ++i) {
    NodeId t = g.AddNode(1);
    g.AddArc(t, hub, 1, 1);
    g.AddArc(t, sink, 1, 100);
  }
  return g;
}

TEST(RacingSolverTest, CongestionEstimateCountsUnitsThatLeaveTheirCheapestPath) {
  CongestionWorkspace ws;  // shared by the estimates below, as a racer's is
  EXPECT_DOUBLE_EQ(EstimateCongestion(Funnel(10, 10), nullptr, ws).congestion, 0.0);
  EXPECT_DOUBLE_EQ(EstimateCongestion(Funnel(10, 1), nullptr, ws).congestion, 0.9);
  EXPECT_DOUBLE_EQ(EstimateCongestion(Funnel(10, 6), nullptr, ws).congestion, 0.4);
  // No path at all: every unit is diverted.
  FlowGraph lost;
  lost.AddNode(2);
  lost.AddNode(-2);
  EXPECT_DOUBLE_EQ(EstimateCongestion(lost, nullptr, ws).congestion, 1.0);
  // No supply: unknown.
  FlowGraph empty;
  empty.AddNode(0);
  EXPECT_LT(EstimateCongestion(empty, nullptr, ws).congestion, 0);
  // A negative cycle never settles: unknown.
  FlowGraph cycle;
  NodeId s = cycle.AddNode(1), t = cycle.AddNode(-1), u = cycle.AddNode(0);
  cycle.AddArc(s, t, 1, 1);
  cycle.AddArc(t, u, 1, -5);
  cycle.AddArc(u, t, 1, 1);
  EXPECT_LT(EstimateCongestion(cycle, nullptr, ws).congestion, 0);
}

TEST(RacingSolverTest, CongestionEstimateStaysInRangeOnExtremeInputs) {
  CongestionWorkspace ws;
  // A negative cycle of many arcs with costs at the estimate's limit: labels
  // compound around it within one sweep; they must be caught before they
  // overflow (the sanitizer build aborts on signed overflow).
  FlowGraph cycle;
  NodeId s = cycle.AddNode(1), d = cycle.AddNode(-1), a = cycle.AddNode(0), b = cycle.AddNode(0);
  const int64_t limit = (int64_t{1} << 61) / 5;  // 2^61 / (nodes + 1)
  cycle.AddArc(b, d, 1, 0);
  cycle.AddArc(s, a, 1, 0);
  for (int i = 0; i < 200; ++i) {
    if (i % 2 == 0) {
      cycle.AddArc(a, b, 1, -limit);
    } else {
      cycle.AddArc(b, a, 1, -limit);
    }
  }
  EXPECT_LT(EstimateCongestion(cycle, nullptr, ws).congestion, 0);
  // Supplies whose sum exceeds what any solver accepts: unknown, no overflow.
  FlowGraph huge;
  NodeId p = huge.AddNode(int64_t{1} << 62), q = huge.AddNode(int64_t{1} << 62);
  NodeId r = huge.AddNode(-(int64_t{1} << 62)), t = huge.AddNode(-(int64_t{1} << 62));
  huge.AddArc(p, r, int64_t{1} << 62, 1);
  huge.AddArc(q, t, int64_t{1} << 62, 1);
  EXPECT_LT(EstimateCongestion(huge, nullptr, ws).congestion, 0);
}

TEST(RacingSolverTest, CongestedProblemsKeepTheCrawlerOut) {
  auto* crawler = new ScriptedSolver("crawler", {});  // would block if started
  auto* other = new ScriptedSolver("other", {true, true});
  RaceOptions o;
  o.hedge_factor = 1;
  o.hedge_min_ms = 0;
  o.crawler = 0;
  RacingSolver race("race", std::unique_ptr<FlowSolver>(crawler),
                    std::unique_ptr<FlowSolver>(other), o);
  FlowGraph g = Funnel(40, 2);
  FlowSolution sol;
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "other");
  EXPECT_TRUE(race.stats().crawler_kept_out);
  EXPECT_NEAR(race.stats().congestion, 0.95, 1e-9);
  EXPECT_EQ(crawler->calls(), 0);
  EXPECT_EQ(crawler->adopted(), 1);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
  // Hedged now, with `other` leading: whether or not the deadline passes
  // before it answers, the crawler must not start on this problem.
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "other");
  EXPECT_EQ(crawler->calls(), 0);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
}

TEST(RacingSolverTest, UncongestedProblemsLetTheCrawlerLead) {
  auto* crawler = new ScriptedSolver("crawler", {true});
  auto* other = new ScriptedSolver("other", {});  // would block if started
  RaceOptions o;
  o.hedge_factor = 1;
  o.crawler = 0;
  o.join_after_estimates = 1e12;  // the other never joins in this test
  RacingSolver race("race", std::unique_ptr<FlowSolver>(crawler),
                    std::unique_ptr<FlowSolver>(other), o);
  FlowGraph g = Funnel(40, 40);
  FlowSolution sol;
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "crawler");
  EXPECT_FALSE(race.stats().crawler_kept_out);
  EXPECT_DOUBLE_EQ(race.stats().congestion, 0.0);
  EXPECT_LT(race.stats().second_start_ms, 0);
  EXPECT_EQ(other->calls(), 0);
  EXPECT_EQ(other->adopted(), 1);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
}

TEST(RacingSolverTest, ACrawlingLeaderOnAnUncongestedProblemIsJoinedByTheOther) {
  auto* crawler = new ScriptedSolver("crawler", {false});
  auto* other = new ScriptedSolver("other", {true});
  RaceOptions o;
  o.hedge_factor = 1;
  o.hedge_min_ms = 0;
  o.crawler = 0;
  o.join_after_estimates = 0;  // join at once
  RacingSolver race("race", std::unique_ptr<FlowSolver>(crawler),
                    std::unique_ptr<FlowSolver>(other), o);
  FlowGraph g = Funnel(40, 40);
  FlowSolution sol;
  ASSERT_TRUE(race.Solve(g, &sol, nullptr).ok());
  EXPECT_EQ(race.last_winner(), "other");
  EXPECT_GE(race.stats().second_start_ms, 0);
  EXPECT_EQ(crawler->calls(), 1);
  EXPECT_TRUE(CheckSolution(g, sol).ok());
}

}  // namespace
}  // namespace copse::flow

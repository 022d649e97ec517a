// QuincyGraph's clock hint: clocked tasks' time-dependent costs move with
// ShiftClock() as cost groups, across state changes, and the checkpoint's
// view (explanations) still answers with the costs the last solve saw.
#include "scheduler/quincy_graph.h"

#include <gtest/gtest.h>

namespace copse::scheduler {
namespace {

TEST(QuincyGraphTest, ClockedTasksMoveWithTheClockAndTheCheckpointKeepsTheSolvedCosts) {
  QuincyGraph q(Topology::Uniform(2, 2, 1), QuincyCostParams{});
  q.AddJob(1);
  TaskLocality loc;
  loc.worst = {0, 1'000'000'000};
  loc.computers.push_back({3, {0, 0}});
  q.AddTask(10, 1, loc);  // waits
  q.AddTask(11, 1, loc);  // runs on computer 3, a preferred one
  q.AddTask(12, 1, loc);  // waits, not clocked
  QuincyArcCosts wait{100, 2000, {}, {50}, std::nullopt};
  QuincyArcCosts run{100, 2000, {}, {-500}, int64_t{-500}};
  q.SetTaskCosts(10, wait);
  q.SetTaskCosts(12, wait);
  q.SetTaskComputer(11, 3);
  q.SetTaskCosts(11, run);
  q.SetTaskClocked(10, true);
  q.SetTaskClocked(11, true);
  const flow::FlowGraph& g = q.graph();
  auto arcs = [&](TaskId t) { return q.SolvedTaskOf(t); };
  q.graph().CommitChanges();
  q.Checkpoint();
  const flow::ArcId wait10 = arcs(10)->arcs[0].arc, wait12 = arcs(12)->arcs[0].arc;
  const flow::ArcId run11 = arcs(11)->arcs[2].arc;  // U_j, X, then the computer
  ASSERT_TRUE(arcs(11)->arcs[2].running);

  q.ShiftClock(500, -1000);
  EXPECT_EQ(g.cost(wait10), 600);
  EXPECT_EQ(g.cost(wait12), 100);  // not clocked
  EXPECT_EQ(g.cost(run11), -1500);
  EXPECT_EQ(g.cost(arcs(11)->arcs[0].arc), 100);  // υ of a running task stays
  EXPECT_TRUE(g.changed_arcs().empty());
  EXPECT_EQ(g.shifted_groups().size(), 2u);
  // The checkpoint's view: the costs the solve saw.
  EXPECT_EQ(q.SolvedCost(wait10), 100);
  EXPECT_EQ(q.SolvedCost(run11), -500);
  EXPECT_EQ(arcs(10)->arcs[0].cost, 100);

  // Task 11 stops running and waits, clocked: its υ moves now, the arc to
  // its computer keeps the cost it had and no longer moves.
  q.SetTaskComputer(11, kNoComputer);
  q.ShiftClock(500, -1000);
  EXPECT_EQ(g.cost(arcs(11)->arcs[0].arc), 600);
  EXPECT_EQ(g.cost(run11), -1500);
  EXPECT_EQ(g.cost(wait10), 1100);
  EXPECT_EQ(q.SolvedCost(run11), -500);
  EXPECT_EQ(q.SolvedCost(arcs(11)->arcs[0].arc), 100);
  EXPECT_EQ(q.SolvedCost(wait10), 100);
  // Unclocked, a task's costs stay where they are.
  q.SetTaskClocked(10, false);
  q.ShiftClock(500, -1000);
  EXPECT_EQ(g.cost(wait10), 1100);
  EXPECT_EQ(q.SolvedCost(wait10), 100);

  // A new checkpoint sees the costs as they are.
  q.graph().CommitChanges();
  q.Checkpoint();
  q.ShiftClock(500, -1000);
  EXPECT_EQ(q.SolvedCost(arcs(11)->arcs[0].arc), 1100);
  EXPECT_EQ(g.cost(arcs(11)->arcs[0].arc), 1600);
}

}  // namespace
}  // namespace copse::scheduler

#include "bench/flow/placement.h"

#include <gtest/gtest.h>

#include <map>

#include "scheduler/flow/solvers.h"

namespace copse::flow {
namespace {

// Tasks t0..t3; t0 prefers machine m0 directly, the others reach machines
// through a rack aggregator; t3 is cheaper left unscheduled.
TEST(PlacementTest, FollowsFlowThroughAggregators) {
  FlowGraph g;
  NodeId sink = g.AddNode(-4);
  NodeId unsched = g.AddNode(0);
  NodeId rack = g.AddNode(0);
  NodeId m0 = g.AddNode(0), m1 = g.AddNode(0), m2 = g.AddNode(0);
  g.AddArc(unsched, sink, 4, 0);
  for (NodeId m : {m0, m1, m2}) {
    g.AddArc(m, sink, 1, 0);
    g.AddArc(rack, m, 1, 0);
  }
  std::vector<NodeId> tasks;
  for (int i = 0; i < 4; ++i) tasks.push_back(g.AddNode(1));
  g.AddArc(tasks[0], m0, 1, 1);
  g.AddArc(tasks[0], unsched, 1, 100);
  g.AddArc(tasks[1], rack, 1, 5);
  g.AddArc(tasks[1], unsched, 1, 100);
  g.AddArc(tasks[2], rack, 1, 6);
  g.AddArc(tasks[2], unsched, 1, 100);
  g.AddArc(tasks[3], rack, 1, 50);
  g.AddArc(tasks[3], unsched, 1, 10);
  auto solver = MakeSolver("cost_scaling");
  ASSERT_TRUE(solver.ok());
  FlowSolution sol;
  ASSERT_TRUE((*solver)->Solve(g, &sol, nullptr).ok());
  std::vector<uint8_t> is_task(g.node_id_bound(), 0);
  for (NodeId t : tasks) is_task[t] = 1;
  std::vector<Placement> p = ExtractPlacements(g, sol.flow, {m0, m1, m2}, is_task);
  std::map<NodeId, NodeId> where;
  for (const Placement& x : p) where[x.task] = x.machine;
  ASSERT_EQ(where.size(), 3u);
  EXPECT_EQ(where[tasks[0]], m0);
  EXPECT_TRUE(where.count(tasks[1]) && where[tasks[1]] != m0);
  EXPECT_TRUE(where.count(tasks[2]) && where[tasks[2]] != m0);
  EXPECT_NE(where[tasks[1]], where[tasks[2]]);
  EXPECT_EQ(where.count(tasks[3]), 0u);
}

}  // namespace
}  // namespace copse::flow

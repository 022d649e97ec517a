#include "scheduler/flow/flow_graph.h"

#include <gtest/gtest.h>

#include <vector>

namespace copse::flow {
namespace {

TEST(FlowGraphTest, AddRemoveAndAdjacency) {
  FlowGraph g;
  NodeId a = g.AddNode(2), b = g.AddNode(0), c = g.AddNode(-2);
  ArcId ab = g.AddArc(a, b, 5, 1);
  ArcId bc = g.AddArc(b, c, 5, 2);
  ArcId ac = g.AddArc(a, c, 1, 10);
  EXPECT_EQ(g.node_count(), 3u);
  EXPECT_EQ(g.arc_count(), 3u);
  EXPECT_EQ(g.out_degree(a), 2u);
  EXPECT_EQ(g.in_degree(c), 2u);
  g.RemoveArc(ac);
  EXPECT_FALSE(g.IsArc(ac));
  EXPECT_EQ(g.out_degree(a), 1u);
  EXPECT_EQ(g.first_out(a), ab);
  g.RemoveNode(b);
  EXPECT_FALSE(g.IsArc(ab));
  EXPECT_FALSE(g.IsArc(bc));
  EXPECT_EQ(g.first_out(a), kNoId);
  EXPECT_EQ(g.first_in(c), kNoId);
  EXPECT_EQ(g.node_count(), 2u);
  EXPECT_EQ(g.arc_count(), 0u);
}

TEST(FlowGraphTest, ResidualDegreeCountsBothDirectionsWithoutSelfLoops) {
  FlowGraph g;
  NodeId a = g.AddNode(0), b = g.AddNode(0);
  g.AddArc(a, b, 1, 0);
  g.AddArc(b, a, 1, 0);
  ArcId loop = g.AddArc(a, a, 3, -1);
  g.AddArc(a, a, 3, 1);
  EXPECT_EQ(g.out_degree(a), 3u);
  EXPECT_EQ(g.in_degree(a), 3u);
  EXPECT_EQ(g.residual_degree(a), 2u);
  EXPECT_EQ(g.residual_degree(b), 2u);
  g.RemoveArc(loop);
  EXPECT_EQ(g.residual_degree(a), 2u);
  g.RemoveNode(b);
  EXPECT_EQ(g.residual_degree(a), 0u);
  g.CommitChanges();
  NodeId c = g.AddNode(0);  // may reuse b's id: starts with no arcs
  EXPECT_EQ(g.residual_degree(c), 0u);
  g.AddArc(c, a, 1, 0);
  EXPECT_EQ(g.residual_degree(c), 1u);
  EXPECT_EQ(g.residual_degree(a), 1u);
}

TEST(FlowGraphTest, ChangeRecordListsEachIdOnceAndIdsAreNotReusedWithinABatch) {
  FlowGraph g;
  NodeId a = g.AddNode(0), b = g.AddNode(0);
  ArcId x = g.AddArc(a, b, 1, 1);
  g.CommitChanges();
  EXPECT_EQ(g.change_count(), 0u);
  EXPECT_FALSE(g.IsNewArc(x));
  g.SetCost(x, 5);
  g.SetCost(x, 6);
  g.SetCapacity(x, 3);
  g.SetSupply(a, 1);
  g.SetSupply(b, -1);
  EXPECT_EQ(g.changed_arcs().size(), 1u);
  EXPECT_EQ(g.changed_nodes().size(), 2u);
  g.RemoveArc(x);
  ArcId y = g.AddArc(a, b, 1, 1);
  EXPECT_NE(x, y);
  EXPECT_TRUE(g.IsNewArc(y));
  g.CommitChanges();
  ArcId z = g.AddArc(b, a, 1, 1);
  EXPECT_EQ(z, x);  // reused only after the commit
  EXPECT_EQ(g.revision(), 2u);
}

TEST(FlowGraphTest, SettingTheSameValueIsNotAChange) {
  FlowGraph g;
  NodeId a = g.AddNode(0), b = g.AddNode(0);
  ArcId x = g.AddArc(a, b, 1, 1);
  g.CommitChanges();
  g.SetCost(x, 1);
  g.SetCapacity(x, 1);
  g.SetSupply(a, 0);
  EXPECT_EQ(g.change_count(), 0u);
}

std::vector<ArcId> GroupArcs(const FlowGraph& g, GroupId k) {
  std::vector<ArcId> arcs;
  g.ForEachGroupArc(k, [&](ArcId a) { arcs.push_back(a); });
  EXPECT_EQ(arcs.size(), g.group_size(k));
  return arcs;
}

TEST(FlowGraphTest, CostGroupsShiftTheirArcsAndRecordTheGroupNotTheArcs) {
  FlowGraph g;
  NodeId a = g.AddNode(0), b = g.AddNode(0), c = g.AddNode(0);
  ArcId x = g.AddArc(a, b, 1, 10), y = g.AddArc(a, c, 1, 20), z = g.AddArc(b, c, 1, 30);
  GroupId k = g.AddCostGroup(), m = g.AddCostGroup();
  EXPECT_EQ(g.group_count(), 2u);
  EXPECT_NE(k, kNoGroup);
  g.SetCostGroup(x, k);
  g.SetCostGroup(y, k);
  g.SetCostGroup(z, m);
  g.CommitChanges();
  const uint64_t edits = g.edit_count();
  g.ShiftCostGroup(k, 5);
  g.ShiftCostGroup(k, -2);
  EXPECT_EQ(g.cost(x), 13);
  EXPECT_EQ(g.cost(y), 23);
  EXPECT_EQ(g.cost(z), 30);
  EXPECT_EQ(g.group_offset(k), 3);
  EXPECT_EQ(g.edit_count(), edits + 2);
  EXPECT_TRUE(g.changed_arcs().empty());
  EXPECT_EQ(g.shifted_groups(), std::vector<GroupId>{k});
  EXPECT_EQ(g.change_count(), 2u);
  std::vector<ArcId> seen;
  g.ForEachChangedArc([&](ArcId arc) { seen.push_back(arc); });
  EXPECT_EQ(seen, (std::vector<ArcId>{x, y}));  // in id order
  // Leaving a group (or the graph) is a change of the arc; shifts then miss it.
  g.SetCostGroup(y, kNoGroup);
  g.RemoveArc(x);
  EXPECT_EQ(g.changed_arcs().size(), 2u);
  EXPECT_TRUE(GroupArcs(g, k).empty());
  g.SetCostGroup(z, k);
  EXPECT_EQ(GroupArcs(g, k), std::vector<ArcId>{z});
  EXPECT_TRUE(GroupArcs(g, m).empty());
  g.ShiftCostGroup(k, 100);
  EXPECT_EQ(g.cost(y), 23);
  EXPECT_EQ(g.cost(z), 130);
  g.CommitChanges();
  EXPECT_TRUE(g.shifted_groups().empty());
  EXPECT_EQ(g.change_count(), 0u);
  // A copy keeps the groups; a reused id starts in none.
  FlowGraph copy(g);
  EXPECT_EQ(GroupArcs(copy, k), std::vector<ArcId>{z});
  ArcId w = g.AddArc(c, a, 1, 1);
  EXPECT_EQ(w, x);
  EXPECT_EQ(g.cost_group(w), kNoGroup);
}

}  // namespace
}  // namespace copse::flow

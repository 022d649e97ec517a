// ResidualNet's one-pass build (rows sized from the graph's degree counts),
// its build with negative-cost arcs saturated, and Extract's reading of the
// flow from the forward arcs, on random graphs with dead ids and self-loops.
#include "scheduler/flow/residual_net.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/wide.h"

namespace copse::flow {
namespace {

using testing::RandomChanges;
using testing::RandomGraph;
using testing::Shape;

// A random graph of `shape` after a few batches of edits (dead arc and node
// ids in between), with self-loops added on some nodes.
FlowGraph EditedGraph(Shape shape, uint64_t seed) {
  FlowGraph g = RandomGraph(shape, 12 + static_cast<int>(seed % 20), seed);
  std::mt19937_64 rng(seed);
  for (int batch = 0; batch < 3; ++batch) {
    RandomChanges(g, 8, rng, true);
    g.CommitChanges();
  }
  for (NodeId v = 0; v < g.node_id_bound(); v += 3) {
    if (g.IsNode(v))
      g.AddArc(v, v, static_cast<int64_t>(rng() % 5), static_cast<int64_t>(rng() % 9) - 4);
  }
  return g;
}

// Rows and excesses by graph node id (a synced network numbers its slots by
// history, and some slots hold no node).
struct ByNode {
  std::map<NodeId, std::vector<std::tuple<NodeId, int64_t, int64_t>>> rows;
  std::map<NodeId, int64_t> excess;
  bool operator==(const ByNode&) const = default;
};

ByNode RowsByNode(const ResidualNet& net) {
  ByNode out;
  for (uint32_t u = 0; u < net.node_count(); ++u) {
    const NodeId v = net.node_id(u);
    if (v == kNoId) {
      EXPECT_EQ(net.begin(u), net.end(u)) << "a free slot holds arcs";
      EXPECT_EQ(net.excess(u), 0);
      continue;
    }
    EXPECT_EQ(net.dense(v), u);
    auto& row = out.rows[v];
    for (uint32_t a = net.begin(u); a < net.end(u); ++a) {
      const ResidualArc& r = net.arc(a);
      EXPECT_EQ(net.arc(r.rev).rev, a);
      EXPECT_EQ(net.arc(r.rev).head, u);
      EXPECT_EQ(r.resid + net.arc(r.rev).resid, std::max(r.resid, net.arc(r.rev).resid));
      row.emplace_back(net.node_id(r.head), r.resid, r.cost);
    }
    std::sort(row.begin(), row.end());
    out.excess[v] = net.excess(u);
  }
  return out;
}

// Both networks' flows, read back through Extract, are the same.
void ExpectSameFlow(const FlowGraph& g, const ResidualNet& x, const ResidualNet& y) {
  FlowSolution a, b;
  ASSERT_TRUE(x.Extract(g, std::vector<int64_t>(x.node_count(), 0), &a).ok());
  ASSERT_TRUE(y.Extract(g, std::vector<int64_t>(y.node_count(), 0), &b).ok());
  EXPECT_EQ(a.flow, b.flow);
  EXPECT_EQ(a.cost, b.cost);
}

TEST(ResidualNetTest, RowsHoldEveryArcButSelfLoopsBothWays) {
  for (int s = 0; s < testing::kShapeCount; ++s) {
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      FlowGraph g = EditedGraph(static_cast<Shape>(s), seed);
      ResidualNet net;
      Status st = net.Build(g);
      if (!st.ok()) continue;  // an unbalanced or oversized problem: nothing built to check
      ASSERT_EQ(net.node_count(), g.node_count());
      uint32_t total = 0;
      for (uint32_t u = 0; u < net.node_count(); ++u) {
        const NodeId v = net.node_id(u);
        EXPECT_EQ(net.dense(v), u);
        EXPECT_EQ(net.end(u) - net.begin(u), g.residual_degree(v));
        EXPECT_EQ(net.excess(u), g.supply(v));
        total += g.residual_degree(v);
      }
      uint32_t expected = 0;
      for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
        if (!g.IsArc(a)) continue;
        if (g.tail(a) == g.head(a)) {
          EXPECT_EQ(net.forward(a), kNoId);
          continue;
        }
        expected += 2;
        const ResidualArc& f = net.arc(net.forward(a));
        EXPECT_EQ(net.node_id(f.head), g.head(a));
        EXPECT_EQ(net.node_id(net.tail(net.forward(a))), g.tail(a));
        EXPECT_EQ(f.resid, g.capacity(a));
        EXPECT_EQ(f.cost, g.cost(a));
        EXPECT_EQ(net.arc(f.rev).resid, 0);
      }
      EXPECT_EQ(total, expected);
    }
  }
}

TEST(ResidualNetTest, SaturatingBuildEqualsBuildThenSaturateAtZeroPotentials) {
  int compared = 0;
  for (int s = 0; s < testing::kShapeCount; ++s) {
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      FlowGraph g = EditedGraph(static_cast<Shape>(s), seed);
      ResidualNet plain, saturated;
      Status st = plain.Build(g);
      ASSERT_EQ(saturated.BuildSaturatingNegative(g).code(), st.code());
      if (!st.ok()) continue;
      std::vector<int64_t> zero(plain.node_count(), 0);
      SaturateNegativeArcs(plain, zero);
      ASSERT_EQ(plain.node_count(), saturated.node_count());
      EXPECT_TRUE(RowsByNode(plain) == RowsByNode(saturated))
          << ShapeName(static_cast<Shape>(s)) << " " << seed;
      for (uint32_t u = 0; u < plain.node_count(); ++u) {
        EXPECT_EQ(plain.excess(u), saturated.excess(u)) << u;
      }
      ExpectSameFlow(g, plain, saturated);
      ++compared;
    }
  }
  EXPECT_GT(compared, 40);
}

// Extract reads a flow back as capacity less the forward arc's residual
// capacity: a start flow (clamped to the capacities) comes back as it went
// in, a self-loop carries its capacity when its cost is negative, and the
// cost is the sum over the arcs.
TEST(ResidualNetTest, ExtractReturnsTheFlowTheNetworkHolds) {
  for (int s = 0; s < testing::kShapeCount; ++s) {
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      FlowGraph g = EditedGraph(static_cast<Shape>(s), seed);
      std::mt19937_64 rng(seed * 7919);
      std::vector<int64_t> start(g.arc_id_bound());
      for (int64_t& f : start) f = static_cast<int64_t>(rng() % 7) - 1;  // -1 .. 5, clamped
      ResidualNet net;
      if (!net.Build(g, &start).ok()) continue;
      std::vector<int64_t> pot(net.node_count());
      for (int64_t& p : pot) p = static_cast<int64_t>(rng() % 100);
      FlowSolution sol;
      ASSERT_TRUE(net.Extract(g, pot, &sol).ok());
      ASSERT_EQ(sol.flow.size(), g.arc_id_bound());
      Wide cost = 0;
      for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
        int64_t want = 0;
        if (g.IsArc(a)) {
          want = g.tail(a) == g.head(a) ? (g.cost(a) < 0 ? g.capacity(a) : 0)
                                        : std::clamp<int64_t>(start[a], 0, g.capacity(a));
          cost += Wide{want} * g.cost(a);
        }
        EXPECT_EQ(sol.flow[a], want) << a;
      }
      if (FitsInt64(cost)) {
        EXPECT_EQ(sol.cost, static_cast<int64_t>(cost));
      }
      for (uint32_t u = 0; u < net.node_count(); ++u) {
        EXPECT_EQ(sol.potential[net.node_id(u)], pot[u]);
      }
    }
  }
}

// Along random change sequences (arcs and nodes added and removed, ids
// reused, costs, capacities and supplies changed), the kept network equals
// a fresh saturating build after every batch, also when a batch is synced
// twice, when a batch is skipped (a rebuild), and its flow reads back as
// the fresh build's.
TEST(ResidualNetTest, SyncedNetworkEqualsAFreshBuildAfterEveryBatch) {
  int synced = 0;
  for (int s = 0; s < testing::kShapeCount; ++s) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      FlowGraph g = EditedGraph(static_cast<Shape>(s), seed);
      std::mt19937_64 rng(seed * 31 + static_cast<uint64_t>(s));
      ResidualNet kept;
      for (int batch = 0; batch < 12; ++batch) {
        if (batch > 0) {
          RandomChanges(g, 1 + static_cast<int>(rng() % 12), rng, batch % 4 != 3);
          if (rng() % 3 == 0 && g.node_count() > 0) {  // a self-loop now and then
            NodeId v = static_cast<NodeId>(rng() % g.node_id_bound());
            if (g.IsNode(v)) g.AddArc(v, v, 2, static_cast<int64_t>(rng() % 7) - 3);
          }
        }
        ResidualNet fresh;
        Status want = fresh.BuildSaturatingNegative(g);
        Status got = kept.SyncSaturatingNegative(g);
        ASSERT_EQ(got.code(), want.code()) << got.ToString() << " vs " << want.ToString();
        if (batch % 5 == 2) {  // the same batch again
          ASSERT_EQ(kept.SyncSaturatingNegative(g).code(), want.code());
        }
        if (batch % 4 == 1) {  // more edits in this batch, synced next time round
          RandomChanges(g, 4, rng, true);
          want = fresh.BuildSaturatingNegative(g);
          got = kept.SyncSaturatingNegative(g);
          ASSERT_EQ(got.code(), want.code());
        }
        if (want.ok()) {
          EXPECT_TRUE(RowsByNode(kept) == RowsByNode(fresh))
              << ShapeName(static_cast<Shape>(s)) << " seed " << seed << " batch " << batch;
          ExpectSameFlow(g, kept, fresh);
          ++synced;
        }
        if (batch % 3 == 0) {  // edits after the sync, committed unsynced
          RandomChanges(g, 3, rng, true);
        }
        g.CommitChanges();
        if (batch == 7) {  // a batch never synced: the next sync rebuilds
          RandomChanges(g, 5, rng, true);
          g.CommitChanges();
        }
      }
    }
  }
  EXPECT_GT(synced, 300);
}

// A copy is another graph: after the original's later edits were synced,
// syncing the copy rebuilds instead of applying the copy's change record
// (which lacks those edits) to the original's network.
TEST(ResidualNetTest, ACopiedGraphIsNotMistakenForTheOriginal) {
  FlowGraph g = RandomGraph(Shape::kSparse, 30, 5);
  g.CommitChanges();
  std::mt19937_64 rng(9);
  RandomChanges(g, 6, rng, true);
  FlowGraph copy = g;
  EXPECT_NE(copy.instance_id(), g.instance_id());
  EXPECT_EQ(copy.revision(), g.revision());
  ResidualNet kept;
  ASSERT_TRUE(kept.SyncSaturatingNegative(g).ok());
  RandomChanges(g, 10, rng, true);  // the original moves on...
  ASSERT_TRUE(kept.SyncSaturatingNegative(g).ok());
  ASSERT_TRUE(kept.SyncSaturatingNegative(copy).ok());  // ...the copy did not
  ResidualNet fresh;
  ASSERT_TRUE(fresh.BuildSaturatingNegative(copy).ok());
  EXPECT_TRUE(RowsByNode(kept) == RowsByNode(fresh));
}

// A move hands the id over; the moved-from graph is an empty one.
TEST(FlowGraphTest, MovedFromGraphIsEmptyWithAnIdOfItsOwn) {
  FlowGraph g = RandomGraph(Shape::kSparse, 20, 3);
  const uint64_t id = g.instance_id();
  FlowGraph moved = std::move(g);
  EXPECT_EQ(moved.instance_id(), id);
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from state is specified
  EXPECT_NE(g.instance_id(), id);
  EXPECT_EQ(g.node_count(), 0u);
  EXPECT_EQ(g.arc_count(), 0u);
  EXPECT_EQ(g.node_id_bound(), 0u);
  NodeId a = g.AddNode(1), b = g.AddNode(-1);
  g.AddArc(a, b, 1, 1);
  ResidualNet net;
  EXPECT_TRUE(net.Build(g).ok());
  // NOLINTEND(bugprone-use-after-move)
  FlowGraph assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.instance_id(), id);
  EXPECT_GT(assigned.node_count(), 0u);
}

}  // namespace
}  // namespace copse::flow

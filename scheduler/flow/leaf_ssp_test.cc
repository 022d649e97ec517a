// LeafSspSolver: along random change sequences (every shape of the random
// problems, and a Quincy-shaped world of tasks at hubs whose clock ticks,
// tasks finish and arrive, and jobs' bounds move), every answer agrees with
// LEMON and passes the optimality check, and the kept state stays equal to
// one rebuilt from the graph, leaves in their hubs' heaps under lower-bound
// keys.
#include "scheduler/flow/leaf_ssp.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "scheduler/flow/cost_scaling.h"
#include "scheduler/flow/lemon/lemon_reference.h"
#include "scheduler/flow/test_graphs.h"
#include "scheduler/flow/verify.h"

namespace copse::flow {
namespace {

using testing::Shape;

Status SolveAndCheck(LeafSspSolver& solver, const FlowGraph& g, FlowSolution& sol,
                     const std::string& what) {
  Status st = solver.Solve(g, &sol, nullptr);
  Status state = solver.CheckState(g);
  EXPECT_TRUE(state.ok()) << what << ": " << state.ToString();
  lemon_ref::LemonResult oracle = lemon_ref::Solve(g, lemon_ref::Algorithm::kNetworkSimplex);
  if (!oracle.feasible) {
    EXPECT_EQ(st.code(), StatusCode::kInfeasible) << what << ": " << st.ToString();
    return st;
  }
  EXPECT_TRUE(st.ok()) << what << ": " << st.ToString();
  if (!st.ok()) return st;
  EXPECT_EQ(sol.cost, oracle.cost) << what;
  Status check = CheckSolution(g, sol);
  EXPECT_TRUE(check.ok()) << what << ": " << check.ToString();
  return st;
}

TEST(LeafSspTest, RandomShapesAlongRandomChanges) {
  int warm = 0;
  for (int seq = 0; seq < 48; ++seq) {
    std::mt19937_64 rng(777 + seq);
    Shape shape = static_cast<Shape>(seq % testing::kShapeCount);
    FlowGraph g = testing::RandomGraph(shape, 10 + (seq % 6) * 8, 300 + seq);
    LeafSspSolver solver;
    FlowSolution sol;
    for (int step = 0; step < 15; ++step) {
      std::string what = testing::ShapeName(shape) + " sequence " + std::to_string(seq) + " step " +
                         std::to_string(step);
      (void)SolveAndCheck(solver, g, sol, what);
      warm += solver.stats().warm;
      g.CommitChanges();
      testing::RandomChanges(g, 1 + static_cast<int>(rng() % 20), rng, step % 4 != 2);
    }
  }
  EXPECT_GT(warm, 48 * 8);
}

// A small Quincy-shaped world: tasks (leaves) with arcs to their job's
// unscheduled node U_j, the cluster node X, a rack or two and a computer or
// three; X -> racks -> computers -> sink; U_j -> sink with capacity F_j - E_j.
class HubWorld {
 public:
  HubWorld(uint64_t seed, bool exact_shares) : rng_(seed), exact_(exact_shares) {
    sink_ = g_.AddNode(0);
    x_ = g_.AddNode(0);
    for (int r = 0; r < 3; ++r) {
      racks_.push_back(g_.AddNode(0));
      int rack_slots = 0;
      for (int c = 0; c < 3; ++c) {
        NodeId m = g_.AddNode(0);
        int slots = static_cast<int>(Uniform(1, 2));
        computers_.push_back(m);
        g_.AddArc(racks_.back(), m, slots, 0);
        g_.AddArc(m, sink_, slots, 0);
        rack_slots += slots;
        slots_ += slots;
      }
      g_.AddArc(x_, racks_.back(), rack_slots, 0);
    }
    for (int j = 0; j < 3; ++j) {
      jobs_.push_back(Job{g_.AddNode(0), kNoId, {}});
      jobs_.back().to_sink = g_.AddArc(jobs_.back().u, sink_, 0, 0);
      for (int t = static_cast<int>(Uniform(2, 8)); t > 0; --t) AddTask(j);
    }
    Balance();
  }

  FlowGraph& graph() { return g_; }

  // One second passes for the solution `sol` of the current graph: waiting
  // tasks pay more to wait, running ones less to stay; some finish, some
  // arrive, and the jobs' bounds are set again.
  void Step(const FlowSolution& sol) {
    for (Job& job : jobs_) {
      for (Task& t : job.tasks) {
        for (ArcId a = g_.first_out(t.node); a != kNoId; a = g_.next_out(a)) {
          if (sol.flow[a] == 0) continue;
          g_.SetCost(a, g_.cost(a) + (g_.head(a) == job.u ? 500 : -1000));
        }
      }
    }
    for (int k = static_cast<int>(Uniform(0, 3)); k > 0; --k) {
      Job& job = jobs_[Uniform(0, jobs_.size() - 1)];
      if (job.tasks.size() <= 1) continue;
      size_t i = Uniform(0, job.tasks.size() - 1);
      g_.RemoveNode(job.tasks[i].node);
      job.tasks.erase(job.tasks.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (int k = static_cast<int>(Uniform(0, 3)); k > 0; --k) {
      AddTask(static_cast<int>(Uniform(0, jobs_.size() - 1)));
    }
    Balance();
  }

 private:
  struct Task {
    NodeId node;
  };
  struct Job {
    NodeId u;
    ArcId to_sink;
    std::vector<Task> tasks;
  };

  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  void AddTask(int j) {
    NodeId t = g_.AddNode(1);
    g_.AddArc(t, jobs_[j].u, 1, Uniform(0, 3000));
    g_.AddArc(t, x_, 1, Uniform(4000, 9000));
    for (int k = static_cast<int>(Uniform(0, 2)); k > 0; --k) {
      g_.AddArc(t, racks_[Uniform(0, racks_.size() - 1)], 1, Uniform(1000, 5000));
    }
    for (int k = static_cast<int>(Uniform(0, 3)); k > 0; --k) {
      g_.AddArc(t, computers_[Uniform(0, computers_.size() - 1)], 1, Uniform(0, 3000));
    }
    jobs_[j].tasks.push_back(Task{t});
  }

  // Fair shares as equal as the tasks allow; E_j = F_j (every job runs
  // exactly its share, as under QFP) or E_j = 0.
  void Balance() {
    int64_t total = 0;
    int64_t share = slots_ / static_cast<int64_t>(jobs_.size());
    for (Job& job : jobs_) {
      int64_t n = static_cast<int64_t>(job.tasks.size());
      int64_t f = std::min(n, share);
      g_.SetSupply(job.u, f - n);
      g_.SetCapacity(job.to_sink, exact_ ? 0 : f);
      total += f;
    }
    g_.SetSupply(sink_, -total);
  }

  FlowGraph g_;
  std::mt19937_64 rng_;
  bool exact_;
  NodeId sink_, x_;
  std::vector<NodeId> racks_, computers_;
  std::vector<Job> jobs_;
  int64_t slots_ = 0;
};

TEST(LeafSspTest, QuincyShapedWorldAlongTicksArrivalsAndDepartures) {
  uint64_t hub_moves = 0, leaf_events = 0, leaf_moves = 0;
  for (int seq = 0; seq < 24; ++seq) {
    HubWorld world(91 + seq, seq % 2 == 0);
    LeafSspSolver solver;
    FlowSolution sol;
    for (int step = 0; step < 25; ++step) {
      std::string what = "world " + std::to_string(seq) + " step " + std::to_string(step);
      ASSERT_TRUE(SolveAndCheck(solver, world.graph(), sol, what).ok()) << what;
      if (step > 0) {
        EXPECT_TRUE(solver.stats().warm) << what;
        EXPECT_GT(solver.stats().leaves, 0u) << what;
      }
      hub_moves += solver.stats().hub_moves;
      leaf_events += solver.stats().leaf_events;
      leaf_moves += solver.stats().leaf_moves;
      world.graph().CommitChanges();
      world.Step(sol);
    }
  }
  EXPECT_GT(hub_moves, 0u);    // hubs absorbed ticks
  EXPECT_GT(leaf_events, 0u);  // leaves entered searches
  EXPECT_GT(leaf_moves, 0u);   // and some moved in the repair
}

// Runs `options` along 24 random change sequences of every shape (12
// steps each, graphs of up to 210 nodes) and 12 Quincy-shaped worlds (25
// steps each), every answer checked against LEMON and CheckState, and
// hands each solve's stats to `add`. The seeds: the random sequences',
// their graphs' and the worlds' first.
template <typename Add>
void AlongChanges(const LeafSspOptions& options, uint64_t sequence_seed, uint64_t graph_seed,
                  uint64_t world_seed, const std::string& label, Add add) {
  for (int seq = 0; seq < 24; ++seq) {
    std::mt19937_64 rng(sequence_seed + seq);
    Shape shape = static_cast<Shape>(seq % testing::kShapeCount);
    FlowGraph g = testing::RandomGraph(shape, 10 + (seq % 6) * 40, graph_seed + seq);
    LeafSspSolver solver(options);
    FlowSolution sol;
    for (int step = 0; step < 12; ++step) {
      std::string what = label + testing::ShapeName(shape) + " sequence " + std::to_string(seq) +
                         " step " + std::to_string(step);
      (void)SolveAndCheck(solver, g, sol, what);
      add(solver.stats());
      g.CommitChanges();
      testing::RandomChanges(g, 1 + static_cast<int>(rng() % 20), rng, step % 4 != 2);
    }
  }
  for (int seq = 0; seq < 12; ++seq) {
    HubWorld world(world_seed + seq, seq % 2 == 0);
    LeafSspSolver solver(options);
    FlowSolution sol;
    for (int step = 0; step < 25; ++step) {
      std::string what = label + "world " + std::to_string(seq) + " step " + std::to_string(step);
      ASSERT_TRUE(SolveAndCheck(solver, world.graph(), sol, what).ok()) << what;
      add(solver.stats());
      world.graph().CommitChanges();
      world.Step(sol);
    }
  }
}

// The backward search from every deficit (an experiment, off by default)
// after every search that settled a quarter of the core, however small:
// each answer still agrees with LEMON, and the kept state (every reduced
// cost non-negative, every leaf's key a lower bound) holds after each solve,
// along the random shapes' changes and the Quincy-shaped world's. The random
// graphs go up to 210 nodes so that some backward searches stop before they
// settle every node (those must rise by the radius).
TEST(LeafSspTest, ABackwardSearchFromTheDeficitsKeepsEveryAnswerOptimal) {
  LeafSspOptions options;
  options.reverse_after_wide_searches = 1;
  options.reverse_min_nodes = 0;
  options.reverse_min_units = 0;
  uint64_t reversed = 0;
  int64_t units = 0;
  AlongChanges(options, 4242, 900, 191, "", [&](const LeafSspSolver::Stats& st) {
    reversed += st.reversed;
    units += st.reverse_units;
  });
  EXPECT_GT(reversed, 20u);
  EXPECT_GT(units, 0);
}

// The kept plateau (on by default) along the random shapes' changes and the
// Quincy-shaped world's, with ties taken either way and a blocking flow
// after every search: every answer agrees with LEMON and the kept state
// holds after each solve (every leaf of a plateau hub keyed no higher than
// its true key again once the route ends); and the plateau is used, paths
// from it find new ways back to a source, sources that ran dry leave it
// (the leaves with an exit into one keyed by it again), and some paths find
// no way back, so that the plateau is emptied and the source searched
// afresh.
TEST(LeafSspTest, TheKeptPlateauKeepsEveryAnswerOptimal) {
  for (int variant = 0; variant < 3; ++variant) {
    LeafSspOptions options;
    options.plateau_min_units = 1;  // every search keeps it
    if (variant == 1) options.deep_ties = false;
    if (variant == 2) options.blocking_flow = LeafSspOptions::BlockingFlow::kAlways;
    uint64_t plateau = 0, way_backs = 0, breaks = 0, left = 0, resets = 0;
    AlongChanges(options, 5151, 1300, 391, "variant " + std::to_string(variant) + " ",
                 [&](const LeafSspSolver::Stats& st) {
                   plateau += st.plateau;
                   way_backs += st.plateau_way_backs;
                   breaks += st.plateau_breaks;
                   left += st.plateau_left;
                   resets += st.plateau_resets;
                 });
    // About 20,600, 1,370, 3,700, 3,000 and 3,800 in each variant when
    // written.
    EXPECT_GT(plateau, 1000u) << variant;
    EXPECT_GT(way_backs, 100u) << variant;
    EXPECT_GT(breaks, 100u) << variant;
    EXPECT_GT(left, 100u) << variant;
    EXPECT_GE(resets, breaks) << variant;
  }
}

TEST(LeafSspTest, LeavesBecomeCoreAndBackWithTheirArcs) {
  FlowGraph g;
  NodeId sink = g.AddNode(-2), hub = g.AddNode(0), w = g.AddNode(1), v = g.AddNode(1);
  g.AddArc(hub, sink, 2, 0);
  g.AddArc(w, hub, 1, 5);
  ArcId ws = g.AddArc(w, sink, 1, 9);
  g.AddArc(v, hub, 1, 1);
  LeafSspSolver solver;
  FlowSolution sol;
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "initial").ok());
  g.CommitChanges();
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "unchanged").ok());
  EXPECT_EQ(solver.stats().leaves, 2u);
  g.CommitChanges();
  ArcId into = g.AddArc(v, w, 1, 0);  // w gets an arc in: no longer a leaf
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "arc into w").ok());
  EXPECT_EQ(solver.stats().leaves, 1u);
  g.CommitChanges();
  g.RemoveArc(into);  // and back
  g.SetCost(ws, -3);  // now w's way out straight to the sink is the cheapest
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "arc gone").ok());
  EXPECT_EQ(solver.stats().leaves, 2u);
  g.CommitChanges();
  g.SetSupply(v, 2);  // not a leaf at supply 2
  g.SetSupply(sink, -3);
  g.SetCapacity(g.first_out(v), 2);
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "supply 2").ok());
  EXPECT_EQ(solver.stats().leaves, 1u);
}

// A plateau: the cluster node X sends one unit to each of K full
// computers, and one to computer F, which has a slot left (the computers'
// slots are a little cheaper, so the optimum fills them first); X, the
// computers, F and the sink sit at one potential. A new task that can only
// go through X makes X a source whose search reaches the sink through F at distance 0,
// tied with the K computers. Settled as soon as it is reached, the sink
// ends the search after a handful of nodes; taken in its turn among the
// ties (the solver's old order), only after all K computers.
uint64_t SettledRoutingThroughAPlateau(bool eager_deficits) {
  constexpr int kComputers = 300;
  FlowGraph g;
  NodeId sink = g.AddNode(-(kComputers + 1)), x = g.AddNode(0), f = g.AddNode(0);
  g.AddArc(x, f, 2, 0);
  g.AddArc(f, sink, 2, 0);
  g.AddArc(g.AddNode(1), x, 1, 0);  // F's running task, placed through X
  for (int i = 0; i < kComputers; ++i) {
    NodeId c = g.AddNode(0);
    g.AddArc(x, c, 2, 0);
    g.AddArc(c, sink, 1, -1);
    g.AddArc(g.AddNode(1), x, 1, 0);
  }
  LeafSspOptions options;
  options.deep_ties = false;
  options.eager_deficits = eager_deficits;
  LeafSspSolver solver(options);
  FlowSolution sol;
  EXPECT_TRUE(SolveAndCheck(solver, g, sol, "initial").ok());
  g.CommitChanges();
  g.AddArc(g.AddNode(1), x, 1, 0);
  g.SetSupply(sink, -(kComputers + 2));
  EXPECT_TRUE(SolveAndCheck(solver, g, sol, "a task arrives").ok());
  EXPECT_EQ(sol.flow[1], 2);  // F -> sink: the new task went to the free slot
  EXPECT_TRUE(solver.stats().warm);
  EXPECT_EQ(solver.stats().phases, 1u);
  return solver.stats().settled;
}

TEST(LeafSspTest, ADeficitReachedAtAPlateausDistanceEndsTheSearch) {
  EXPECT_LE(SettledRoutingThroughAPlateau(true), 4u);
  EXPECT_GT(SettledRoutingThroughAPlateau(false), 300u);
}

// Solves g, then once more unchanged (the solve after a load, so that the
// next one searches deep), then applies `change` and solves again; returns
// that last solve's stats, checked against LEMON and warm.
template <typename Change>
LeafSspSolver::Stats SolveDeepAfter(FlowGraph& g, LeafSspOptions options, Change change,
                                    const std::string& what) {
  LeafSspSolver solver(options);
  FlowSolution sol;
  EXPECT_TRUE(SolveAndCheck(solver, g, sol, "initial").ok());
  g.CommitChanges();
  EXPECT_TRUE(SolveAndCheck(solver, g, sol, "unchanged").ok());
  g.CommitChanges();
  change();
  EXPECT_TRUE(SolveAndCheck(solver, g, sol, what).ok());
  EXPECT_TRUE(solver.stats().warm);
  return solver.stats();
}

// K computers, each running one task and with one slot left, all at one
// potential with the sink (each one's arc to the sink carries a unit and
// has room for another); the cluster node X reaches each by an empty arc.
// SolveDeepAfter solves it twice, then `arrive` adds sources at X (the
// sink's demand made to match), and that solve's stats are returned.
template <typename Arrive>
LeafSspSolver::Stats UnitsArriveAtTiedComputers(int computers, int sink_takes,
                                                LeafSspOptions options, Arrive arrive) {
  FlowGraph g;
  NodeId sink = g.AddNode(-computers), x = g.AddNode(0);
  for (int i = 0; i < computers; ++i) {
    NodeId c = g.AddNode(0);
    g.AddArc(x, c, 1, 0);
    g.AddArc(c, sink, 2, 0);
    g.AddArc(g.AddNode(1), c, 1, 0);  // its running task
  }
  return SolveDeepAfter(
      g, options,
      [&] {
        arrive(g, x);
        g.SetSupply(sink, -(computers + sink_takes));
      },
      "units arrive at X");
}

// One source of 50 units. Its search reaches the sink through the first
// computer it settles, at the distance of all 50; stopping there, the
// blocking flow sees that one computer only, and every other unit takes a
// search of its own. Settling the rest of that distance first, one search
// and its blocking flow send all 50.
TEST(LeafSspTest, ASearchForManyUnitsSettlesItsLastDistanceForTheBlockingFlow) {
  auto one_source = [](FlowGraph& g, NodeId x) { g.AddArc(g.AddNode(50), x, 50, 0); };
  LeafSspOptions finish, stop;
  stop.finish_distance_units = 0;
  const LeafSspSolver::Stats with = UnitsArriveAtTiedComputers(50, 50, finish, one_source);
  EXPECT_EQ(with.excess_units, 50);
  EXPECT_EQ(with.phases, 1u);
  EXPECT_EQ(with.finished, 1u);
  const LeafSspSolver::Stats without = UnitsArriveAtTiedComputers(50, 50, stop, one_source);
  EXPECT_EQ(without.phases, 50u);
  EXPECT_EQ(without.finished, 0u);
}

// 40 sources of 2 units each. Each search from one source stops at the
// first computer it settles and sends one unit (2 units are too few to
// settle the rest of the distance): 80 searches, none moving a potential.
// After a run of 16 such flat searches one search from every source sends
// all that is left.
TEST(LeafSspTest, ARunOfFlatSearchesIsFollowedByOneFromEverySource) {
  auto small_sources = [](FlowGraph& g, NodeId x) {
    for (int i = 0; i < 40; ++i) g.AddArc(g.AddNode(2), x, 2, 0);
  };
  LeafSspOptions batch, never;
  never.batch_after_flat_searches = 0;
  const LeafSspSolver::Stats with = UnitsArriveAtTiedComputers(80, 80, batch, small_sources);
  EXPECT_EQ(with.excess_units, 80);
  EXPECT_LE(with.phases, 18u);  // 16 or 17 flat ones, then one from every source
  EXPECT_EQ(with.batched, 1u);
  const LeafSspSolver::Stats without = UnitsArriveAtTiedComputers(80, 80, never, small_sources);
  EXPECT_EQ(without.phases, 80u);
  EXPECT_EQ(without.batched, 0u);
}

// One source of 40 units, each of which leaves at a distance of its own
// (an arc of cost i to computer i, which has one free slot): each search
// sends one unit, and a blocking flow after it sends nothing more. After
// each such blocking flow, twice as many searches as the last time go
// without one (and without finishing their distance): 6 blocking flows
// where there were 39 (the 40th search leaves no excess), the answer the
// same.
LeafSspSolver::Stats UnitsLeaveAtDistancesOfTheirOwn(LeafSspOptions options) {
  constexpr int kComputers = 40;
  FlowGraph g;
  const NodeId sink = g.AddNode(0);
  std::vector<NodeId> computers;
  for (int i = 0; i < kComputers; ++i) {
    computers.push_back(g.AddNode(0));
    g.AddArc(computers.back(), sink, 1, 0);
  }
  const LeafSspSolver::Stats stats = SolveDeepAfter(
      g, options,
      [&] {
        const NodeId source = g.AddNode(kComputers);
        for (int i = 0; i < kComputers; ++i) g.AddArc(source, computers[i], 1, i);
        g.SetSupply(sink, -kComputers);
      },
      "a source of 40 units");
  EXPECT_EQ(stats.phases, 40u);
  EXPECT_EQ(stats.blocked_units, 0);
  return stats;
}

TEST(LeafSspTest, BlockingFlowsThatSendNothingBackOff) {
  LeafSspOptions back_off, always;
  always.blocking_flow_min_units = 0;
  const LeafSspSolver::Stats with = UnitsLeaveAtDistancesOfTheirOwn(back_off);
  EXPECT_EQ(with.blocking_flows, 6u);  // after searches 1, 3, 6, 11, 20 and 37
  EXPECT_EQ(with.unblocked, 33u);      // the others but the 40th
  EXPECT_EQ(with.finished, 5u);        // 37 holds fewer than 16 units, too few to finish
  const LeafSspSolver::Stats without = UnitsLeaveAtDistancesOfTheirOwn(always);
  EXPECT_EQ(without.blocking_flows, 39u);
  EXPECT_EQ(without.unblocked, 0u);
  EXPECT_EQ(without.finished, 25u);  // while the source holds 16 units or more
}

// Racks of full computers under the cluster node X, and one rack whose
// computers have free slots, its arc first in X's list (so that a deep
// search, taking ties last in, first out, tries it last); every cost 0.
// Ten sources of 2 units each arrive at X. The first search sweeps every
// full rack before it finds the free one; with path hints each later search
// leaves X by the arc the last path took and goes straight to a free slot.
LeafSspSolver::Stats UnitsFollowTheLastPath(LeafSspOptions options) {
  constexpr int kRacks = 20, kPerRack = 10, kFree = 10, kSources = 10;
  FlowGraph g;
  const NodeId sink = g.AddNode(-kRacks * kPerRack), x = g.AddNode(0);
  const NodeId free_rack = g.AddNode(0);
  g.AddArc(x, free_rack, 2 * kSources, 0);
  for (int i = 0; i < kFree; ++i) {
    const NodeId c = g.AddNode(0);
    g.AddArc(free_rack, c, 2, 0);
    g.AddArc(c, sink, 2, 0);
  }
  for (int r = 0; r < kRacks; ++r) {
    const NodeId rack = g.AddNode(0);
    g.AddArc(x, rack, kPerRack, 0);
    for (int i = 0; i < kPerRack; ++i) {
      const NodeId c = g.AddNode(0);
      g.AddArc(rack, c, 1, 0);
      g.AddArc(c, sink, 1, 0);
      g.AddArc(g.AddNode(1), c, 1, 0);  // its running task
    }
  }
  const LeafSspSolver::Stats stats = SolveDeepAfter(
      g, options,
      [&] {
        for (int i = 0; i < kSources; ++i) g.AddArc(g.AddNode(2), x, 2, 0);
        g.SetSupply(sink, -(kRacks * kPerRack + 2 * kSources));
      },
      "ten sources at X");
  EXPECT_EQ(stats.phases, static_cast<uint64_t>(kSources));
  return stats;
}

TEST(LeafSspTest, ASearchTriesTheLastPathsWayFirst) {
  LeafSspOptions hints, none;
  none.path_hints = false;
  // The first search settles the 20 full racks and their 200 computers.
  const LeafSspSolver::Stats with = UnitsFollowTheLastPath(hints);
  EXPECT_GT(with.settled, 220u);
  EXPECT_LT(with.settled, 300u);  // each later one about 5 nodes
  const LeafSspSolver::Stats without = UnitsFollowTheLastPath(none);
  EXPECT_GT(without.settled, 2000u);  // every search sweeps them
}

// A burst in miniature. Full computers P_0..P_{n-1}, each running kPer
// tasks; every task can also run on the next six computers at the same
// cost (so the full computers form one plateau of zero-reduced-cost exits)
// or go through X at a cost of its own; X reaches kFree free slots. Then a
// new task arrives at each of the first kBurst computers, which can run
// there only: each unit leaves the plateau through the next-cheapest task's
// exit into X, one search a unit. Every search sweeps the plateau; with the
// exit cache its tasks relax their cached exits to one another and are put
// off. A task's exit into X is its seventh, beyond the kCached = 6 its cache
// holds: the task enters in full when the bound on the rest comes within
// reach, as well as to mark itself and to fill its cache (its first two
// entries in the solve, and again after it moved).
LeafSspSolver::Stats UnitsLeaveAPlateau(LeafSspOptions options, int tasks_per_x_cost = 1,
                                        bool one_source = false, int dear_exits = 0) {
  constexpr int kComputers = 30, kPer = 4, kFree = 30, kBurst = 20;
  FlowGraph g;
  const NodeId sink = g.AddNode(-kComputers * kPer), x = g.AddNode(0);
  std::vector<NodeId> free;
  for (int i = 0; i < kFree; ++i) {
    free.push_back(g.AddNode(0));
    g.AddArc(x, free.back(), 1, 0);
    g.AddArc(free.back(), sink, 1, 0);
  }
  std::vector<NodeId> computers;
  for (int i = 0; i < kComputers; ++i) {
    computers.push_back(g.AddNode(0));
    g.AddArc(computers.back(), sink, kPer, 0);
  }
  for (int i = 0; i < kComputers; ++i) {
    for (int k = 0; k < kPer; ++k) {
      const NodeId task = g.AddNode(1);
      g.AddArc(task, computers[i], 1, 0);
      for (int j = 1; j <= 6; ++j) g.AddArc(task, computers[(i + j) % kComputers], 1, 0);
      g.AddArc(task, x, 1, 100 + (i * kPer + k) / tasks_per_x_cost);
      for (int j = 0; j < dear_exits; ++j) g.AddArc(task, free[(i + j) % kFree], 1, 1000);
    }
  }
  const LeafSspSolver::Stats stats = SolveDeepAfter(
      g, options,
      [&] {
        const NodeId job = one_source ? g.AddNode(kBurst) : kNoId;
        for (int i = 0; i < kBurst; ++i) {
          g.AddArc(one_source ? job : g.AddNode(1), computers[i], 1, 0);
        }
        g.SetSupply(sink, -(kComputers * kPer + kBurst));
      },
      "a burst on the plateau");
  EXPECT_EQ(stats.excess_units, kBurst);
  return stats;
}

TEST(LeafSspTest, TasksWhoseCachedExitsAreSettledArePutOff) {
  LeafSspOptions cache, none;
  none.exit_cache = false;
  cache.kept_plateau = none.kept_plateau = false;  // every search sweeps the plateau
  const LeafSspSolver::Stats with = UnitsLeaveAPlateau(cache);
  const LeafSspSolver::Stats without = UnitsLeaveAPlateau(none);
  EXPECT_EQ(with.phases, without.phases);
  EXPECT_EQ(without.deferred, 0u);
  EXPECT_GT(without.leaf_events, 2000u);  // each of 20 searches, most of the 120 tasks
  EXPECT_GT(with.deferred, 1000u);
  // Each task enters in full twice (the second time filling its cache),
  // then only to reach X or after it moved: 421 when written.
  EXPECT_LT(with.leaf_events, 600u);
}

// The same burst with the plateau kept between searches: each search starts
// from the full computers the earlier ones settled, at distance 0, and lets
// in only the tasks whose ways out of them (into X) come within reach; the
// searches and every answer are the same. Each source holds one unit, so
// the kept way back from a computer to a source is gone after each path and
// another is found (WayBack).
TEST(LeafSspTest, AKeptPlateauIsNotSweptAgain) {
  for (bool cache : {true, false}) {
    LeafSspOptions kept, swept;
    kept.exit_cache = swept.exit_cache = cache;
    kept.plateau_min_units = 1;  // the sources hold a unit each
    swept.kept_plateau = false;
    const LeafSspSolver::Stats k = UnitsLeaveAPlateau(kept);
    const LeafSspSolver::Stats s = UnitsLeaveAPlateau(swept);
    EXPECT_EQ(k.phases, s.phases) << cache;
    EXPECT_EQ(k.paths, s.paths) << cache;
    EXPECT_EQ(s.plateau, 0u);
    EXPECT_GE(k.plateau, 30u) << cache;  // the full computers at least
    EXPECT_GT(k.plateau_way_backs, 0u) << cache;
    EXPECT_EQ(k.plateau_breaks, 0u) << cache;
    // When written: 289 + 225 against 421 + 1,843 with the cache, 511
    // against 2,247 without.
    EXPECT_LT(4 * (k.leaf_events + k.deferred), s.leaf_events + s.deferred) << cache;
  }
  // By default a source of one unit does not start a plateau.
  EXPECT_EQ(UnitsLeaveAPlateau(LeafSspOptions{}).plateau, 0u);
}

// The plateau with one job's source of 20 units, its tasks' ways to X tied
// in fours (so a search's blocking flow finds more units at its distance)
// and six dear exits more per task: a blocking flow from a hub walks only
// the cached exits of a leaf whose other exits cost more than the hub's
// potential allows, and finds every unit it found walking them all.
TEST(LeafSspTest, BlockingFlowsWalkOnlyTheCachedExitsWhenTheRestCostMore) {
  LeafSspOptions cache, none;
  none.exit_cache = false;
  cache.kept_plateau = none.kept_plateau = false;
  const LeafSspSolver::Stats with = UnitsLeaveAPlateau(cache, 4, true, 6);
  const LeafSspSolver::Stats without = UnitsLeaveAPlateau(none, 4, true, 6);
  EXPECT_EQ(with.phases, without.phases);
  EXPECT_EQ(with.blocking_flows, without.blocking_flows);
  EXPECT_GT(with.blocked_units, 0);
  EXPECT_EQ(with.blocked_units, without.blocked_units);
  // 11,364 against 14,543 when written (14,543 both ways with every exit
  // walked).
  EXPECT_GT(without.exits_walked, 14000u);
  EXPECT_LT(with.exits_walked, 12500u);
}

TEST(LeafSspTest, InfeasibleBatchThenFeasible) {
  FlowGraph g;
  NodeId s = g.AddNode(-1), w = g.AddNode(1);
  ArcId ws = g.AddArc(w, s, 1, 3);
  LeafSspSolver solver;
  FlowSolution sol;
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "initial").ok());
  g.CommitChanges();
  g.SetCapacity(ws, 0);  // the leaf has no way out
  EXPECT_EQ(SolveAndCheck(solver, g, sol, "no way out").code(), StatusCode::kInfeasible);
  g.CommitChanges();
  g.SetCapacity(ws, 1);
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "feasible again").ok());
  EXPECT_TRUE(solver.stats().warm);
}

TEST(LeafSspTest, LostChangeRecordAndAdoption) {
  FlowGraph g = testing::RandomGraph(Shape::kBipartite, 40, 17);
  LeafSspSolver solver;
  FlowSolution sol;
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "initial").ok());
  std::mt19937_64 rng(5);
  g.CommitChanges();
  testing::RandomChanges(g, 10, rng, true);
  g.CommitChanges();  // a batch the solver never saw
  testing::RandomChanges(g, 10, rng, true);
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "lost record").ok());
  EXPECT_TRUE(solver.stats().full_sync);
  g.CommitChanges();
  testing::RandomChanges(g, 10, rng, true);
  FlowSolution other;
  CostScalingSolver scratch;
  ASSERT_TRUE(scratch.Solve(g, &other, nullptr).ok());
  solver.Adopt(g, other);
  EXPECT_TRUE(solver.CheckState(g).ok());
  // A race's loser adopts again before it next solves, and the graph moves
  // on: the solve loads the last answer into the graph as it is then.
  g.CommitChanges();
  testing::RandomChanges(g, 10, rng, true);
  ASSERT_TRUE(scratch.Solve(g, &other, nullptr).ok());
  solver.Adopt(g, other);
  g.CommitChanges();
  testing::RandomChanges(g, 10, rng, true);
  // A race cancels its loser, here while it loads the adopted answer.
  CancelFlag cancel;
  cancel.Cancel();
  EXPECT_EQ(solver.Solve(g, &sol, &cancel).code(), StatusCode::kCancelled);
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "after adoption").ok());
  EXPECT_TRUE(solver.stats().full_sync);
  EXPECT_TRUE(solver.CheckState(g).ok());
  // From there on it follows the change record again.
  g.CommitChanges();
  testing::RandomChanges(g, 10, rng, true);
  ASSERT_TRUE(SolveAndCheck(solver, g, sol, "after the adopted answer's load").ok());
  EXPECT_FALSE(solver.stats().full_sync);
}

}  // namespace
}  // namespace copse::flow

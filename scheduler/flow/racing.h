// RacingSolver: runs two solvers on the same problem on two threads and
// returns the first answer, cancelling the other cooperatively (Firmament
// §6.1). The loser adopts the winner's solution, so an incremental
// contestant starts from it next time (§6.2). One contestant runs on the
// calling thread, the other on a helper thread the racer owns (created once).
//
// Graphs with fewer arcs than RaceOptions::solo_below_arcs are solved by one
// contestant alone on the calling thread: on small graphs the second thread
// only adds its start-up, its own residual network build and cache and core
// contention on a shared machine (docs/flow.md has the measurements).
//
// With RaceOptions::hedge_factor > 0 the race is hedged: the last solve's
// winner starts alone, and the other contestant starts only if no answer
// has come after hedge_factor times the winner's last solve time (at least
// hedge_min_ms). While the regime holds, one contestant runs and the race
// costs nothing; when it changes (a burst makes relaxation crawl), the other
// joins late and wins, and leads from then on. The first race starts both,
// unless RaceOptions::first_leader is set: then that contestant starts alone
// and the other joins after first_delay_ms.
//
// A hedged leader that keeps answering before the deadline keeps the other
// contestant idle even when the other has become much faster (a forced
// placement made incremental repair slow while relaxation from scratch
// stayed fast: docs/flow.md, "How race runs"). With RaceOptions::probe_every = N,
// after N hedged solves in a row without the other contestant, the next
// solve starts both at once; whichever answers first leads from then on.
//
// With RaceOptions::crawler set (the default race: relaxation), the racer
// keeps that contestant away from problems it is known to crawl on. Before a
// race without a leader, and before the crawler would join a hedged race
// late, it estimates the graph's congestion (EstimateCongestion below). At
// or above congestion_threshold the crawler does not run at all; below it,
// the crawler leads the first race alone and the other contestant joins
// after join_after_estimates times the estimate's own running time (a
// scale-free yardstick: the estimate is about one pass of shortest paths
// over the graph). docs/flow.md has the reasoning and the measurements.
// The racer owns its two contestants, its helper thread, their last answers
// and the congestion estimate's working arrays, all kept between solves.
// Thread-safety: one caller at a time; the contestants only read the graph.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "scheduler/flow/solver.h"

namespace copse::flow {

struct RaceOptions {
  // Below this many arcs, contestant `solo` (0 or 1) solves alone; 0: always race.
  uint32_t solo_below_arcs = 0;
  int solo = 1;
  // 0: both contestants start at once.
  double hedge_factor = 0;
  double hedge_min_ms = 1;
  // Hedged races only: the contestant (0 or 1) that leads before any race
  // has been won, and how long it runs alone then; -1: both start at once.
  int first_leader = -1;
  double first_delay_ms = 0;
  // Hedged races only: the contestant (0 or 1) known to crawl on congested
  // problems; -1: no congestion estimate.
  int crawler = -1;
  double congestion_threshold = 0.1;
  double join_after_estimates = 128;
  // Hedged races only: after this many solves in a row in which only the
  // leader ran, the next starts both contestants at once; 0: never.
  int probe_every = 0;
};

// How congested a problem is: route every unit of supply along its cheapest
// path to a deficit as if no arc had a capacity (shortest paths by label
// correcting backwards from the deficits, so negative costs are fine), then
// push the supply down that shortest-path forest with the capacities back
// in. `congestion` is the fraction of the supply that cannot follow its
// cheapest path (blocked by a capacity on it, or beyond its deficit's
// demand, or with no path at all): 0 when every unit can go its own
// cheapest way, near 1 when almost all must be diverted and the problem's
// prices must separate many competing units. -1 when unknown: no supply,
// costs too large for 64-bit path lengths, or the search (Bellman-Ford in
// sweeps over the arc array) has not settled after 8 sweeps (a negative
// cycle, or shortest paths whose arcs lie against the arc order many times).
struct CongestionEstimate {
  double congestion = -1;
  double ms = 0;  // time the estimate took
};
// EstimateCongestion's working arrays, by NodeId. The caller owns them and
// keeps them between estimates, so that the next one reuses the pages
// (reuse.h); their contents between calls do not matter.
struct CongestionWorkspace {
  std::vector<int64_t> dist, load;
  std::vector<uint32_t> next, kids, queue;
};
CongestionEstimate EstimateCongestion(const FlowGraph& graph, const CancelFlag* cancel,
                                      CongestionWorkspace& ws);

class RacingSolver final : public FlowSolver {
 public:
  // Timings of the last solve, for benchmarks.
  struct Stats {
    bool raced = false;             // false: the solo contestant solved alone
    double winner_ms = 0;           // the winner's Solve
    double loser_ms = 0;            // from the winner's answer until the loser returned
    double adopt_ms = 0;            // the loser adopting the winner's solution
    double second_start_ms = -1;    // when the hedged second contestant started; -1: never
    double congestion = -1;         // the congestion estimate made for this solve; -1: none
    double estimate_ms = 0;         // the time it took
    bool crawler_kept_out = false;  // the crawler did not run because of it
    bool probe = false;             // both started at once (RaceOptions::probe_every)
  };

  RacingSolver(std::string name, std::unique_ptr<FlowSolver> first,
               std::unique_ptr<FlowSolver> second, RaceOptions options = {});
  ~RacingSolver() override;
  RacingSolver(const RacingSolver&) = delete;
  RacingSolver& operator=(const RacingSolver&) = delete;

  std::string_view name() const override { return name_; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  void Adopt(const FlowGraph& graph, const FlowSolution& solution) override;

  // The name of the contestant whose answer the last solve returned.
  std::string_view last_winner() const { return last_winner_; }
  const Stats& stats() const { return stats_; }

 private:
  void HelperLoop();
  Status SolveAlone(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel);

  std::string name_;
  std::unique_ptr<FlowSolver> contestant_[2];
  RaceOptions options_;
  std::string last_winner_;
  Stats stats_;
  FlowSolution result_[2];  // the contestants' answers
  int leader_ = -1;         // the last winner (hedged races start it first)
  double leader_ms_ = 0;    // its last solve time
  int leader_alone_ = 0;    // hedged solves in a row in which only the leader ran
  // The congestion estimates' arrays. At most one estimate runs at a time:
  // before the helper is given its job, or on the helper thread while the
  // calling thread runs its contestant.
  CongestionWorkspace congestion_ws_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;  // guarded by mu_
  bool job_done_ = false;      // guarded by mu_
  bool first_done_ = false;    // guarded by mu_: the first-started contestant returned
  bool stop_ = false;          // guarded by mu_
  std::thread helper_;
};

}  // namespace copse::flow

#include "scheduler/flow/racing.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

#include "scheduler/flow/reuse.h"
#include "scheduler/flow/stopwatch.h"

namespace copse::flow {

namespace {

using Clock = SteadyClock;

}  // namespace

// Sweeps the congestion estimate's shortest-path search makes at most.
constexpr int kMaxSweeps = 8;

CongestionEstimate EstimateCongestion(const FlowGraph& g, const CancelFlag* cancel,
                                      CongestionWorkspace& ws) {
  const auto start = Clock::now();
  CongestionEstimate est;
  const uint32_t n = g.node_id_bound();
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max();
  std::vector<int64_t>& dist = ws.dist;
  std::vector<int64_t>& load = ws.load;
  std::vector<uint32_t>& next = ws.next;
  std::vector<uint32_t>& kids = ws.kids;
  std::vector<uint32_t>& queue = ws.queue;
  AssignReuse(dist, n, kInf);
  AssignReuse(next, n, kNoId);
  auto done = [&](double congestion) {
    est.congestion = congestion;
    est.ms = MsBetween(start, Clock::now());
    return est;
  };
  // Supplies beyond 2^62 in total are rejected by every solver; unknown here.
  constexpr int64_t kSupplyLimit = int64_t{1} << 62;
  int64_t total_supply = 0;
  for (NodeId v = 0; v < n; ++v) {
    if (!g.IsNode(v)) continue;
    if (g.supply(v) > 0) {
      if (g.supply(v) > kSupplyLimit - total_supply) return done(-1);
      total_supply += g.supply(v);
    }
    if (g.supply(v) < 0) dist[v] = 0;
  }
  if (total_supply == 0) return done(-1);
  // Path lengths stay below 2^62 when |cost| * (nodes + 1) < 2^61.
  const int64_t cost_limit = (int64_t{1} << 61) / (int64_t{g.node_count()} + 1);
  constexpr int64_t kPathLimit = int64_t{1} << 61;
  // Bellman-Ford backwards from the deficits over the arcs with room, in
  // sweeps over the arc array (sequential memory, unlike the adjacency
  // lists), alternating the direction; graphs built in layers (as the Quincy
  // graph is) settle in a few sweeps.
  const ArcId m = g.arc_id_bound();
  bool converged = false;
  auto relax = [&](ArcId a, bool& changed) {
    if (!g.IsArc(a) || g.capacity(a) <= 0) return true;
    const int64_t c = g.cost(a);
    if (c > cost_limit || c < -cost_limit) return false;
    const NodeId w = g.head(a), v = g.tail(a);
    if (dist[w] == kInf || v == w) return true;
    // |dist| stays within kPathLimit (checked below) and |c| below it, so
    // the sum cannot overflow. A simple path is shorter than kPathLimit in
    // absolute value; a label beyond it was built around a negative cycle.
    const int64_t d = dist[w] + c;
    if (d < -kPathLimit || d > kPathLimit) return false;
    if (d < dist[v]) {
      dist[v] = d;
      next[v] = a;
      changed = true;
    }
    return true;
  };
  for (int sweep = 0; sweep < kMaxSweeps && !converged; ++sweep) {
    if (IsCancelled(cancel)) return done(-1);
    bool changed = false;
    if (sweep % 2 == 0) {
      for (ArcId a = 0; a < m; ++a) {
        if (!relax(a, changed)) return done(-1);
      }
    } else {
      for (ArcId a = m; a-- > 0;) {
        if (!relax(a, changed)) return done(-1);
      }
    }
    converged = !changed;
  }
  if (!converged) return done(-1);
  // Push the supply down the shortest-path forest, leaves first (Kahn's
  // order), keeping what each arc's capacity and each deficit's demand allow.
  AssignReuse(kids, n, 0u);
  AssignReuse(load, n, int64_t{0});
  for (NodeId v = 0; v < n; ++v) {
    if (next[v] != kNoId) ++kids[g.head(next[v])];
  }
  queue.clear();
  uint32_t live = 0;
  for (NodeId v = 0; v < n; ++v) {
    if (!g.IsNode(v)) continue;
    ++live;
    load[v] = std::max<int64_t>(0, g.supply(v));
    if (kids[v] == 0) queue.push_back(v);
  }
  int64_t diverted = 0;
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const NodeId v = queue[qi];
    int64_t units = load[v];
    if (g.supply(v) < 0) units -= std::min(units, -g.supply(v));
    if (next[v] == kNoId) {
      diverted += units;
      continue;
    }
    const int64_t pass = std::min(units, g.capacity(next[v]));
    diverted += units - pass;
    const NodeId parent = g.head(next[v]);
    load[parent] += pass;
    if (--kids[parent] == 0) queue.push_back(parent);
  }
  if (queue.size() != live) return done(-1);  // a cycle of predecessors
  return done(static_cast<double>(diverted) / static_cast<double>(total_supply));
}

RacingSolver::RacingSolver(std::string name, std::unique_ptr<FlowSolver> first,
                           std::unique_ptr<FlowSolver> second, RaceOptions options)
    : name_(std::move(name)), options_(options) {
  contestant_[0] = std::move(first);
  contestant_[1] = std::move(second);
  if (options_.solo != 0) options_.solo = 1;
  if (options_.hedge_factor > 0 && (options_.first_leader == 0 || options_.first_leader == 1)) {
    leader_ = options_.first_leader;
    leader_ms_ = options_.first_delay_ms / options_.hedge_factor;
  }
  helper_ = std::thread([this] { HelperLoop(); });
}

RacingSolver::~RacingSolver() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  helper_.join();
}

void RacingSolver::HelperLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || job_ != nullptr; });
    if (stop_) return;
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    lock.unlock();
    job();
    lock.lock();
    job_done_ = true;
    cv_.notify_all();
  }
}

Status RacingSolver::SolveAlone(const FlowGraph& graph, FlowSolution* out,
                                const CancelFlag* cancel) {
  const int s = options_.solo;
  auto t0 = Clock::now();
  Status st = contestant_[s]->Solve(graph, out, cancel);
  auto t1 = Clock::now();
  stats_.winner_ms = MsBetween(t0, t1);
  last_winner_ = std::string(contestant_[s]->name());
  if (st.ok()) {
    leader_ = s;
    leader_ms_ = stats_.winner_ms;
    contestant_[1 - s]->Adopt(graph, *out);
  }
  stats_.adopt_ms = MsBetween(t1, Clock::now());
  return st;
}

Status RacingSolver::Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) {
  stats_ = Stats{};
  if (graph.arc_count() < options_.solo_below_arcs) return SolveAlone(graph, out, cancel);
  stats_.raced = true;
  const auto start = Clock::now();
  CancelFlag stop[2] = {CancelFlag(cancel), CancelFlag(cancel)};
  FlowSolution* result = result_;  // kept between solves (reuse.h explains why)
  Status status[2];
  Clock::time_point done_at[2] = {start, start};
  std::atomic<int> winner{-1};
  auto run = [&](int i) {
    status[i] = contestant_[i]->Solve(graph, &result[i], &stop[i]);
    done_at[i] = Clock::now();
    if (status[i].code() == StatusCode::kCancelled) return;
    int none = -1;
    if (winner.compare_exchange_strong(none, i)) stop[1 - i].Cancel();
  };
  // The first contestant runs here, the second on the helper thread: at
  // once, or (hedged, with a leader) only if the first has not answered by
  // the deadline.
  bool hedged = options_.hedge_factor > 0 && leader_ >= 0;
  int first = hedged ? leader_ : 0;
  double delay_ms =
      hedged ? std::max(options_.hedge_min_ms, options_.hedge_factor * leader_ms_) : 0.0;
  if (hedged && options_.probe_every > 0 && leader_alone_ >= options_.probe_every) {
    stats_.probe = true;
    delay_ms = 0;
  }
  const int crawler = options_.hedge_factor > 0 ? options_.crawler : -1;
  bool start_second = true;
  if (crawler >= 0 && !hedged) {
    // No leader yet: the congestion estimate picks one.
    CongestionEstimate est = EstimateCongestion(graph, cancel, congestion_ws_);
    stats_.congestion = est.congestion;
    stats_.estimate_ms = est.ms;
    if (est.congestion >= options_.congestion_threshold) {
      first = 1 - crawler;
      start_second = false;
      stats_.crawler_kept_out = true;
    } else if (est.congestion >= 0) {
      first = crawler;
      hedged = true;
      delay_ms = std::max(options_.hedge_min_ms, options_.join_after_estimates * est.ms);
    }
  }
  const int second = 1 - first;
  // A late-joining crawler first checks the problem is not congested.
  const bool check_congestion = hedged && second == crawler && stats_.congestion < 0;
  // (Capped at 10^9 ms so that the clock arithmetic cannot overflow.)
  const auto delay = std::chrono::duration<double, std::milli>(std::min(delay_ms, 1e9));
  double second_start_ms = -1;
  CongestionEstimate late;
  bool kept_out_late = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_done_ = false;
    first_done_ = false;
    job_ = [&, second] {
      if (!start_second) return;
      if (hedged) {
        std::unique_lock<std::mutex> wait_lock(mu_);
        if (cv_.wait_for(wait_lock, delay, [this] { return first_done_ || stop_; })) return;
      }
      if (check_congestion) {
        // Cancelled with the crawler's flag when the leader answers first.
        late = EstimateCongestion(graph, &stop[second], congestion_ws_);
        if (IsCancelled(&stop[second])) return;
        if (late.congestion >= options_.congestion_threshold) {
          kept_out_late = true;
          return;
        }
      }
      second_start_ms = MsBetween(start, Clock::now());
      run(second);
    };
  }
  cv_.notify_all();
  run(first);
  {
    std::unique_lock<std::mutex> lock(mu_);
    first_done_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return job_done_; });
  }
  stats_.second_start_ms = second_start_ms;
  leader_alone_ = second_start_ms >= 0 || stats_.probe ? 0 : leader_alone_ + 1;
  if (check_congestion && late.ms > 0) {
    stats_.congestion = late.congestion;
    stats_.estimate_ms = late.ms;
    stats_.crawler_kept_out = kept_out_late;
  }
  int w = winner.load();
  if (w < 0) return Cancelled("solve cancelled");
  stats_.winner_ms = MsBetween(start, done_at[w]);
  stats_.loser_ms = done_at[1 - w] > done_at[w] ? MsBetween(done_at[w], done_at[1 - w]) : 0.0;
  last_winner_ = std::string(contestant_[w]->name());
  std::swap(*out, result[w]);  // the caller's old buffers are reused next time
  auto t = Clock::now();
  if (status[w].ok()) {
    leader_ = w;
    leader_ms_ =
        w == second && second_start_ms >= 0 ? stats_.winner_ms - second_start_ms : stats_.winner_ms;
    contestant_[1 - w]->Adopt(graph, *out);
  }
  stats_.adopt_ms = MsBetween(t, Clock::now());
  return status[w];
}

void RacingSolver::Adopt(const FlowGraph& graph, const FlowSolution& solution) {
  contestant_[0]->Adopt(graph, solution);
  contestant_[1]->Adopt(graph, solution);
}

}  // namespace copse::flow

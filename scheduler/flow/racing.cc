#include "scheduler/flow/racing.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace copse::flow {

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

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
  stats_.winner_ms = Ms(t0, t1);
  last_winner_ = std::string(contestant_[s]->name());
  if (st.ok()) {
    leader_ = s;
    leader_ms_ = stats_.winner_ms;
    contestant_[1 - s]->Adopt(graph, *out);
  }
  stats_.adopt_ms = Ms(t1, Clock::now());
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
  const bool hedged = options_.hedge_factor > 0 && leader_ >= 0;
  const int first = hedged ? leader_ : 0;
  const int second = 1 - first;
  const auto delay = std::chrono::duration<double, std::milli>(
      hedged ? std::max(options_.hedge_min_ms, options_.hedge_factor * leader_ms_) : 0.0);
  double second_start_ms = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_done_ = false;
    first_done_ = false;
    job_ = [&, second] {
      if (hedged) {
        std::unique_lock<std::mutex> wait_lock(mu_);
        if (cv_.wait_for(wait_lock, delay, [this] { return first_done_ || stop_; })) return;
      }
      second_start_ms = Ms(start, Clock::now());
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
  int w = winner.load();
  if (w < 0) return Cancelled("solve cancelled");
  stats_.winner_ms = Ms(start, done_at[w]);
  stats_.loser_ms = done_at[1 - w] > done_at[w] ? Ms(done_at[w], done_at[1 - w]) : 0.0;
  last_winner_ = std::string(contestant_[w]->name());
  std::swap(*out, result[w]);  // the caller's old buffers are reused next time
  auto t = Clock::now();
  if (status[w].ok()) {
    leader_ = w;
    leader_ms_ =
        w == second && second_start_ms >= 0 ? stats_.winner_ms - second_start_ms : stats_.winner_ms;
    contestant_[1 - w]->Adopt(graph, *out);
  }
  stats_.adopt_ms = Ms(t, Clock::now());
  return status[w];
}

void RacingSolver::Adopt(const FlowGraph& graph, const FlowSolution& solution) {
  contestant_[0]->Adopt(graph, solution);
  contestant_[1]->Adopt(graph, solution);
}

}  // namespace copse::flow

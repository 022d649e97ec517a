#include "scheduler/flow/racing.h"

#include <utility>

namespace copse::flow {

RacingSolver::RacingSolver(std::string name, std::unique_ptr<FlowSolver> first,
                           std::unique_ptr<FlowSolver> second)
    : name_(std::move(name)) {
  contestant_[0] = std::move(first);
  contestant_[1] = std::move(second);
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

Status RacingSolver::Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) {
  CancelFlag stop[2] = {CancelFlag(cancel), CancelFlag(cancel)};
  FlowSolution result[2];
  Status status[2];
  std::atomic<int> winner{-1};
  auto run = [&](int i) {
    status[i] = contestant_[i]->Solve(graph, &result[i], &stop[i]);
    if (status[i].code() == StatusCode::kCancelled) return;
    int none = -1;
    if (winner.compare_exchange_strong(none, i)) stop[1 - i].Cancel();
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_done_ = false;
    job_ = [&run] { run(1); };
  }
  cv_.notify_all();
  run(0);
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return job_done_; });
  }
  int w = winner.load();
  if (w < 0) return Cancelled("solve cancelled");
  last_winner_ = std::string(contestant_[w]->name());
  *out = std::move(result[w]);
  if (status[w].ok()) contestant_[1 - w]->Adopt(graph, *out);
  return status[w];
}

void RacingSolver::Adopt(const FlowGraph& graph, const FlowSolution& solution) {
  contestant_[0]->Adopt(graph, solution);
  contestant_[1]->Adopt(graph, solution);
}

}  // namespace copse::flow

// RacingSolver: runs two solvers on the same problem on two threads and
// returns the first answer, cancelling the other cooperatively (Firmament
// §6.1). The loser adopts the winner's solution, so an incremental
// contestant starts from it next time (§6.2). One contestant runs on the
// calling thread, the other on a helper thread the racer owns.
// Thread-safety: one caller at a time; the contestants only read the graph.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "scheduler/flow/solver.h"

namespace copse::flow {

class RacingSolver final : public FlowSolver {
 public:
  RacingSolver(std::string name, std::unique_ptr<FlowSolver> first,
               std::unique_ptr<FlowSolver> second);
  ~RacingSolver() override;
  RacingSolver(const RacingSolver&) = delete;
  RacingSolver& operator=(const RacingSolver&) = delete;

  std::string_view name() const override { return name_; }
  Status Solve(const FlowGraph& graph, FlowSolution* out, const CancelFlag* cancel) override;
  void Adopt(const FlowGraph& graph, const FlowSolution& solution) override;

  // The name of the contestant whose answer the last solve returned.
  std::string_view last_winner() const { return last_winner_; }

 private:
  void HelperLoop();

  std::string name_;
  std::unique_ptr<FlowSolver> contestant_[2];
  std::string last_winner_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;  // guarded by mu_
  bool job_done_ = false;      // guarded by mu_
  bool stop_ = false;          // guarded by mu_
  std::thread helper_;
};

}  // namespace copse::flow

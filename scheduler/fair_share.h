// Fair-share arithmetic shared by the policies.
//
// QuincyFairShares is Quincy §3.3: with M slots and K running jobs, job j
// first gets A*_j = min(floor(M/K), N_j); slots left over are divided
// equally among the jobs that have more workers, repeatedly, until
// sum A_j = min(M, sum N_j). Single leftover slots go to jobs in the order
// given (admission order). Optional per-job bounds (Quincy's E_j, F_j given
// with the job) narrow the result: a job never gets more than its cap, and
// gets at least its floor when the floors fit in M.
//
// NonPreemptiveShares is the allocation of Quincy §4.3 "QF": a job already
// running more than its share keeps what it runs, and the other jobs' shares
// shrink in proportion to their size (never below what they run) so that
// the total stays within M.
//
// WeightedFairShares is the Hadoop Fair Scheduler's pool allocation
// (delay scheduling §4): each pool gets min(demand, max(min share, λ·weight))
// with λ chosen so the shares add up to min(slots, total demand); minimum
// shares that do not fit are scaled down equally first.
// QuincyBounds is the allocation bounds E_j and F_j of each fairness regime
// of the Quincy policies (quincy_policy.h), for the policy and for the
// solver benchmark, which builds its graphs under the same regimes.
// Thread-safety: pure functions.
#pragma once

#include <limits>
#include <vector>

namespace copse::scheduler {

struct JobDemand {
  int demand = 0;                             // N_j: worker tasks running or queued
  int floor = 0;                              // at least this many, if possible
  int cap = std::numeric_limits<int>::max();  // at most this many
};

// REQUIRES: slots >= 0.
std::vector<int> QuincyFairShares(int slots, const std::vector<JobDemand>& jobs);

// `shares` from QuincyFairShares, `running` each job's running workers.
// REQUIRES: sum(running) <= slots.
std::vector<int> NonPreemptiveShares(int slots, const std::vector<int>& shares,
                                     const std::vector<int>& running);

struct PoolDemand {
  double weight = 1;
  double min_share = 0;
  double demand = 0;
};

std::vector<double> WeightedFairShares(double slots, const std::vector<PoolDemand>& pools);

// The fairness regimes of Quincy §4.3 (quincy_policy.h): Q and QP without
// fair shares, QF and QFP with; QP and QFP may preempt.
enum class QuincyRegime { kQ, kQP, kQF, kQFP };
inline constexpr QuincyRegime kQuincyRegimes[] = {QuincyRegime::kQ, QuincyRegime::kQP,
                                                  QuincyRegime::kQF, QuincyRegime::kQFP};
// "Q", "QP", "QF", "QFP".
const char* QuincyRegimeName(QuincyRegime regime);

struct QuincyJobLoad {
  int tasks = 0;                              // N_j: the job's worker tasks in the network
  int running = 0;                            // of them placed
  int floor = 0;                              // at least this many (the job's min_tasks)
  int cap = std::numeric_limits<int>::max();  // at most this many (max_tasks)
};

struct QuincyJobBounds {
  int e = 0;  // E_j: at least this many run
  int f = 0;  // F_j: at most this many run
};

// E_j and F_j of each job, in admission order: Q/QP E_j = 1, F_j = N_j
// (E_j = F_j = N_j when all tasks fit the `slots`); QF/QFP E_j = F_j = A_j,
// the fair share (QF raises a job to what it runs and shrinks the others);
// the job's floor and cap narrow them. Without preemption running tasks are
// pinned; lower bounds the network cannot hold (`capacity`: slots of the
// computers up, less those placed roots take) are lowered, latest job first.
std::vector<QuincyJobBounds> QuincyBounds(QuincyRegime regime, int slots, int capacity,
                                          const std::vector<QuincyJobLoad>& jobs);

}  // namespace copse::scheduler

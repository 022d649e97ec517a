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

}  // namespace copse::scheduler

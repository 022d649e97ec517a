#include "scheduler/fair_share.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace copse::scheduler {

namespace {

int Sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

// Lowers `a` (never below `low`) by `excess` in total, taking one slot at a
// time from the job holding the most (ties: the later job).
void Trim(std::vector<int>& a, const std::vector<int>& low, int excess) {
  while (excess > 0) {
    int pick = -1;
    for (size_t j = 0; j < a.size(); ++j) {
      if (a[j] > low[j] && (pick < 0 || a[j] >= a[pick])) pick = static_cast<int>(j);
    }
    assert(pick >= 0);
    --a[pick];
    --excess;
  }
}

// Divides `left` slots equally among jobs below their cap, repeatedly.
void WaterFill(std::vector<int>& a, const std::vector<int>& cap, int left) {
  while (left > 0) {
    std::vector<size_t> want;
    for (size_t j = 0; j < a.size(); ++j) {
      if (a[j] < cap[j]) want.push_back(j);
    }
    if (want.empty()) return;
    int each = left / static_cast<int>(want.size());
    for (size_t j : want) {
      int give = std::min(std::max(each, 1), cap[j] - a[j]);
      give = std::min(give, left);
      a[j] += give;
      left -= give;
      if (left == 0) return;
    }
  }
}

}  // namespace

std::vector<int> QuincyFairShares(int slots, const std::vector<JobDemand>& jobs) {
  const int k = static_cast<int>(jobs.size());
  std::vector<int> cap(k), low(k), a(k);
  if (k == 0) return a;
  for (int j = 0; j < k; ++j) {
    cap[j] = std::max(0, std::min(jobs[j].demand, jobs[j].cap));
    low[j] = std::max(0, std::min(jobs[j].floor, cap[j]));
  }
  if (Sum(low) > slots) {  // the floors do not fit: trim them
    a = low;
    Trim(a, std::vector<int>(k, 0), Sum(a) - slots);
    return a;
  }
  const int base = slots / k;
  for (int j = 0; j < k; ++j) a[j] = std::max(low[j], std::min(base, cap[j]));
  if (Sum(a) > slots) Trim(a, low, Sum(a) - slots);
  WaterFill(a, cap, slots - Sum(a));
  return a;
}

std::vector<int> NonPreemptiveShares(int slots, const std::vector<int>& shares,
                                     const std::vector<int>& running) {
  assert(shares.size() == running.size());
  std::vector<int> a = shares;
  int raised = 0;
  for (size_t j = 0; j < a.size(); ++j) {
    if (running[j] > a[j]) {
      raised += running[j] - a[j];
      a[j] = running[j];
    }
  }
  int excess = Sum(a) - slots;
  if (raised == 0 || excess <= 0) return a;
  // Shrink the others in proportion to their shares, not below what they run.
  long total = 0;
  for (size_t j = 0; j < a.size(); ++j) {
    if (running[j] < a[j]) total += a[j];
  }
  std::vector<int> cut(a.size(), 0);
  int done = 0;
  for (size_t j = 0; j < a.size() && total > 0; ++j) {
    if (running[j] >= a[j]) continue;
    cut[j] = std::min<int>(static_cast<int>(static_cast<long>(excess) * a[j] / total),
                           a[j] - running[j]);
    done += cut[j];
  }
  for (size_t j = 0; j < a.size(); ++j) a[j] -= cut[j];
  Trim(a, running, excess - done);  // rounding leftovers
  return a;
}

std::vector<double> WeightedFairShares(double slots, const std::vector<PoolDemand>& pools) {
  const size_t n = pools.size();
  std::vector<double> ms(n), out(n);
  double total_ms = 0, total_demand = 0;
  for (size_t p = 0; p < n; ++p) {
    ms[p] = std::min(pools[p].min_share, pools[p].demand);
    total_ms += ms[p];
    total_demand += pools[p].demand;
  }
  if (total_ms > slots && total_ms > 0) {
    for (double& m : ms) m *= slots / total_ms;
  }
  const double target = std::min(slots, total_demand);
  auto fill = [&](double lambda) {
    double sum = 0;
    for (size_t p = 0; p < n; ++p) {
      out[p] = std::min(pools[p].demand, std::max(ms[p], lambda * pools[p].weight));
      sum += out[p];
    }
    return sum;
  };
  double hi = 1;
  while (fill(hi) < target && hi < 1e15) hi *= 2;
  double lo = 0;
  for (int i = 0; i < 64; ++i) {
    double mid = (lo + hi) / 2;
    (fill(mid) < target ? lo : hi) = mid;
  }
  fill(hi);
  return out;
}

const char* QuincyRegimeName(QuincyRegime regime) {
  switch (regime) {
    case QuincyRegime::kQ:
      return "Q";
    case QuincyRegime::kQP:
      return "QP";
    case QuincyRegime::kQF:
      return "QF";
    case QuincyRegime::kQFP:
      return "QFP";
  }
  return "?";
}

std::vector<QuincyJobBounds> QuincyBounds(QuincyRegime regime, int slots, int capacity,
                                          const std::vector<QuincyJobLoad>& jobs) {
  const bool preemptive = regime == QuincyRegime::kQP || regime == QuincyRegime::kQFP;
  const bool fair = regime == QuincyRegime::kQF || regime == QuincyRegime::kQFP;
  const size_t n = jobs.size();
  std::vector<int> e(n), f(n);
  if (fair) {
    std::vector<JobDemand> demand(n);
    std::vector<int> running(n);
    for (size_t i = 0; i < n; ++i) {
      demand[i] = {jobs[i].tasks, jobs[i].floor, jobs[i].cap};
      running[i] = jobs[i].running;
    }
    std::vector<int> shares = QuincyFairShares(slots, demand);
    if (!preemptive) {
      shares = NonPreemptiveShares(std::max(slots, Sum(running)), shares, running);
    }
    e = f = shares;
  } else {
    int total = 0;
    for (const QuincyJobLoad& j : jobs) total += j.tasks;
    for (size_t i = 0; i < n; ++i) {
      f[i] = std::min(jobs[i].tasks, jobs[i].cap);
      e[i] = total <= slots ? f[i] : std::min(1, f[i]);
      e[i] = std::min(f[i], std::max(e[i], jobs[i].floor));
    }
  }
  int need = 0;
  std::vector<int> pinned(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!preemptive) {
      pinned[i] = jobs[i].running;
      f[i] = std::max(f[i], jobs[i].running);
    }
    need += std::max(e[i], pinned[i]);
  }
  for (size_t k = n; k-- > 0 && need > capacity;) {
    int cut = std::min(need - capacity, std::max(e[k], pinned[k]) - pinned[k]);
    e[k] = std::max(e[k], pinned[k]) - cut;
    need -= cut;
  }
  std::vector<QuincyJobBounds> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = {std::min(e[i], f[i]), f[i]};
  return out;
}

}  // namespace copse::scheduler

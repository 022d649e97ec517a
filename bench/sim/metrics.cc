#include "bench/sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace copse::bench {

RunMetrics ComputeMetrics(const std::vector<JobTimes>& jobs) {
  RunMetrics m;
  double log_sum = 0, anp_sum = 0, anp_sq = 0, s1 = 0, s2 = 0;
  for (const JobTimes& j : jobs) {
    double anp = j.Anp();
    double sigma = 1.0 / anp;
    m.makespan_s = std::max(m.makespan_s, j.finish_s);
    log_sum += std::log(anp);
    anp_sum += anp;
    anp_sq += anp * anp;
    s1 += sigma;
    s2 += sigma * sigma;
    m.slowdown_linf = std::max(m.slowdown_linf, sigma);
    m.dt_local_bytes += j.local_bytes;
    m.dt_rack_bytes += j.rack_bytes;
    m.dt_core_bytes += j.core_bytes;
  }
  double n = static_cast<double>(jobs.size());
  m.snp = std::exp(log_sum / n);
  m.slowdown_l1 = s1 / n;
  m.slowdown_l2 = std::sqrt(s2) / std::sqrt(n);
  double mean = anp_sum / n;
  double var = std::max(0.0, anp_sq / n - mean * mean);
  m.unfairness = std::sqrt(var) / mean;
  return m;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

std::string Fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

}  // namespace copse::bench

#include "bench/cluster/calibrate.h"

#include <algorithm>
#include <numeric>

#include "bench/sim/metrics.h"

namespace copse::bench {

Calibration Calibrate(const std::vector<VertexSample>& runs,
                      const std::vector<double>& root_startups_s, double link_gbps) {
  Calibration c;
  c.model.stages.clear();
  std::vector<double> all;
  for (const VertexSample& r : runs) all.push_back(r.seconds);
  std::sort(all.begin(), all.end());
  c.model.task_startup_s = Percentile(all, 5);
  std::vector<double> roots = root_startups_s;
  std::sort(roots.begin(), roots.end());
  c.model.root_startup_s = roots.empty() ? 0 : roots[roots.size() / 2];

  std::map<std::string, std::vector<std::pair<double, double>>> by_stage;  // (GB, compute s)
  for (const VertexSample& r : runs) {
    double transfer = static_cast<double>(r.remote_bytes) * 8 / (link_gbps * 1e9);
    double compute = std::max(0.0, r.seconds - c.model.task_startup_s - transfer);
    by_stage[r.key].emplace_back(static_cast<double>(r.local_bytes + r.remote_bytes) / 1e9,
                                 compute);
  }
  for (const auto& [key, points] : by_stage) {
    const double n = static_cast<double>(points.size());
    double sg = 0, sc = 0, sgg = 0, sgc = 0, lo = points[0].first, hi = points[0].first;
    for (const auto& [g, s] : points) {
      sg += g;
      sc += s;
      sgg += g * g;
      sgc += g * s;
      lo = std::min(lo, g);
      hi = std::max(hi, g);
    }
    const double mg = sg / n, mc = sc / n;
    sim::StageCost cost;
    if (hi <= 0) {
      cost.fixed_s = mc;
    } else if (points.size() < 3 || hi < 1.5 * lo) {
      cost.per_gb_s = mc / mg;
    } else {
      double slope = (sgc - n * mg * mc) / (sgg - n * mg * mg);
      double intercept = mc - slope * mg;
      if (slope < 0) {
        cost.fixed_s = mc;
      } else if (intercept < 0) {
        cost.per_gb_s = sgc / sgg;
      } else {
        cost.fixed_s = intercept;
        cost.per_gb_s = slope;
      }
    }
    c.model.stages[key] = cost;
    c.samples[key] = static_cast<int>(points.size());
  }
  return c;
}

}  // namespace copse::bench

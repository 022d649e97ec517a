#include "sim/cost_model.h"

namespace copse::sim {

Result<double> CostModel::Seconds(const std::string& app, const std::string& stage,
                                  int64_t bytes) const {
  auto it = stages.find(app + "/" + stage);
  if (it == stages.end()) return NotFound("cost model: no entry for stage " + app + "/" + stage);
  return task_startup_s + it->second.fixed_s +
         it->second.per_gb_s * static_cast<double>(bytes) / 1e9;
}

CostModel PaperCostModel() {
  CostModel m;
  // Keys are "<instance kind>/<program>.<role>" (apps/instances.h).
  m.stages = {
      {"prime_small/prime.count", {6.0, 0}},
      {"prime_small/prime.total", {0, 0}},
      {"prime_large/prime.count", {1350.0, 0}},
      {"prime_large/prime.total", {0, 0}},
      {"wordcount/wordcount.count", {0, 540.0}},
      {"wordcount/wordcount.sum", {8.0, 170.0}},
      {"databasejoin/databasejoin.phase1", {0, 110.0}},
      {"databasejoin/databasejoin.phase2", {0, 85.0}},
      {"sort/sort.sample", {2.0, 10.0}},
      {"sort/sort.partition", {0, 20.0}},
      {"sort/sort.sort", {0, 60.0}},
      {"pagerank/pagerank.phase1", {0, 150.0}},
      {"pagerank/pagerank.phase2", {0, 180.0}},
  };
  return m;
}

}  // namespace copse::sim

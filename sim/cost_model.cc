#include "sim/cost_model.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/json.h"

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

std::string CostModelToJson(const CostModel& m) {
  nlohmann::ordered_json j;
  j["root_startup_s"] = m.root_startup_s;
  j["task_startup_s"] = m.task_startup_s;
  j["stages"] = nlohmann::ordered_json::object();
  for (const auto& [key, c] : m.stages) {
    j["stages"][key] = {{"fixed_s", c.fixed_s}, {"per_gb_s", c.per_gb_s}};
  }
  return DumpJson(j, 1) + "\n";
}

Result<CostModel> CostModelFromJson(const std::string& text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument(origin + ": not a JSON object");
  auto number = [&](const nlohmann::json& in, const std::string& key,
                    const std::string& where) -> Result<double> {
    auto it = in.find(key);
    if (it == in.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
        it->get<double>() < 0) {
      return InvalidArgument(origin + ": " + where + key + " must be a number >= 0");
    }
    return it->get<double>();
  };
  CostModel m;
  for (const auto& [key, v] : j.items()) {
    if (key != "root_startup_s" && key != "task_startup_s" && key != "stages") {
      return InvalidArgument(origin + ": unknown key '" + key + "'");
    }
  }
  COPSE_ASSIGN_OR_RETURN(m.root_startup_s, number(j, "root_startup_s", ""));
  COPSE_ASSIGN_OR_RETURN(m.task_startup_s, number(j, "task_startup_s", ""));
  auto stages = j.find("stages");
  if (stages == j.end() || !stages->is_object()) {
    return InvalidArgument(origin + ": stages must be an object");
  }
  for (const auto& [key, v] : stages->items()) {
    std::string where = "stages." + key + ".";
    if (!v.is_object() || v.size() != 2) {
      return InvalidArgument(origin + ": " + where + " needs exactly fixed_s and per_gb_s");
    }
    StageCost c;
    COPSE_ASSIGN_OR_RETURN(c.fixed_s, number(v, "fixed_s", where));
    COPSE_ASSIGN_OR_RETURN(c.per_gb_s, number(v, "per_gb_s", where));
    m.stages[key] = c;
  }
  return m;
}

}  // namespace copse::sim

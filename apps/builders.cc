#include "apps/builders.h"

#include <nlohmann/json.hpp>

namespace copse::apps {
namespace {

using Json = nlohmann::json;

Json Stage(const std::string& name, const std::string& program, Json params) {
  return {{"name", name},
          {"program", program},
          {"params", std::move(params)},
          {"inputs", Json::array()}};
}

Json WordCount(const RunOptions& o) {
  const int n = o.partitions > 0 ? o.partitions : 1;
  Json stages = Json::array();
  Json sum = Stage("sum", "wordcount", {{"role", "sum"}});
  sum["vertices"] = n;
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    std::string name = o.inputs.size() == 1 ? "count" : "count" + std::to_string(i);
    Json count = Stage(name, "wordcount", {{"role", "count"}});
    count["inputs"].push_back({{"file", o.inputs[i]}});
    stages.push_back(count);
    sum["inputs"].push_back({{"stage", name}, {"connection", "all-to-all"}});
  }
  stages.push_back(sum);
  Json merge = Stage("merge", "wordcount", {{"role", "merge"}});
  merge["inputs"].push_back({{"stage", "sum"}, {"connection", "gather"}});
  stages.push_back(merge);
  Json write = Stage("write", "wordcount", {{"role", "write"}});
  write["vertices"] = n;
  write["inputs"].push_back({{"stage", "merge"}, {"connection", "all-to-all"}});
  write["output"] = o.output;
  stages.push_back(write);
  return {{"name", o.name.empty() ? "wordcount" : o.name}, {"stages", stages}};
}

Json Prime(const RunOptions& o) {
  Json stages = Json::array();
  Json total = Stage("total", "prime", {{"role", "total"}});
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    std::string name = o.inputs.size() == 1 ? "count" : "count" + std::to_string(i);
    Json count = Stage(name, "prime", {{"role", "count"}});
    count["inputs"].push_back({{"file", o.inputs[i]}});
    stages.push_back(count);
    total["inputs"].push_back({{"stage", name}, {"connection", "gather"}});
  }
  total["output"] = o.output;
  stages.push_back(total);
  return {{"name", o.name.empty() ? "prime" : o.name}, {"stages", stages}};
}

}  // namespace

std::vector<std::string> RunnableApps() { return {"prime", "wordcount"}; }

Result<std::string> BuildJobSpec(const std::string& app, const RunOptions& o) {
  if (o.inputs.empty()) return InvalidArgument("copse run " + app + ": --input names no file");
  if (o.output.empty()) return InvalidArgument("copse run " + app + ": --output is required");
  if (o.partitions < 0) return InvalidArgument("--partitions must be at least 1");
  if (app == "wordcount") return WordCount(o).dump(2);
  if (app == "prime") {
    if (o.partitions > 1) {
      return InvalidArgument("copse run prime: it writes one line, so --partitions must be 1");
    }
    return Prime(o).dump(2);
  }
  return InvalidArgument("copse run: unknown app '" + app + "' (expected prime or wordcount)");
}

}  // namespace copse::apps

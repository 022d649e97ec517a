#include "rootjob/sample_apps.h"

#include <toml++/toml.h>

#include <fstream>
#include <set>
#include <sstream>

namespace copse::rootjob {

namespace {

constexpr int64_t kMB = 1'000'000;
constexpr int64_t kGB = 1'000'000'000;

StageInput FileIn(int file, Connection c, double fraction = 1.0) {
  return {true, file, c, fraction};
}
StageInput StageIn(int stage, Connection c) { return {false, stage, c, 1.0}; }

// Roughly 7 bytes a decimal integer line.
JobDag Prime(const InstanceSpec& in, int64_t integers) {
  JobDag d{in.name, in.app, {{"numbers", in.partitions, integers * 7}}, {}};
  d.stages.push_back({"prime", in.partitions, {FileIn(0, Connection::kPointwise)}, 16, 0.0});
  return d;
}

JobDag WordCount(const InstanceSpec& in) {
  JobDag d{in.name, in.app, {{"text", in.partitions, 50 * kMB}}, {}};
  d.stages.push_back(
      {"wordcount.count", in.partitions, {FileIn(0, Connection::kPointwise)}, 0, 0.02});
  d.stages.push_back({"wordcount.top", 1, {StageIn(0, Connection::kGather)}, 1000, 0.0});
  return d;
}

JobDag DatabaseJoin(const InstanceSpec& in) {
  int n = in.partitions;
  JobDag d{in.name, in.app, {{"small", n, 11'800 * kMB / n}, {"big", n, 41'800 * kMB / n}}, {}};
  d.stages.push_back({"join.phase1",
                      n,
                      {FileIn(0, Connection::kPointwise), FileIn(1, Connection::kPointwise)},
                      0,
                      0.5});
  d.stages.push_back({"join.phase2",
                      n,
                      {FileIn(1, Connection::kPointwise), StageIn(0, Connection::kAllToAll)},
                      0,
                      0.05});
  return d;
}

JobDag Sort(const InstanceSpec& in) {
  int n = in.partitions;
  JobDag d{in.name, in.app, {{"records", n, 4 * kGB}}, {}};
  d.stages.push_back({"sort.sample", 1, {FileIn(0, Connection::kGather, 0.01)}, 0, 0.001});
  d.stages.push_back({"sort.partition",
                      n,
                      {FileIn(0, Connection::kPointwise), StageIn(0, Connection::kBroadcast)},
                      0,
                      1.0});
  d.stages.push_back({"sort.sort", n, {StageIn(1, Connection::kAllToAll)}, 0, 1.0});
  return d;
}

JobDag PageRank(const InstanceSpec& in) {
  int n = in.partitions;
  JobDag d{in.name, in.app, {{"graph", n, 1 * kGB}}, {}};
  for (int it = 0; it < 3; ++it) {
    Stage p1{"pagerank.phase1", n, {FileIn(0, Connection::kPointwise)}, 625 * kMB, 0.0};
    if (it > 0)
      p1.inputs.push_back(StageIn(static_cast<int>(d.stages.size()) - 1, Connection::kPointwise));
    d.stages.push_back(p1);
    d.stages.push_back({"pagerank.phase2",
                        n,
                        {StageIn(static_cast<int>(d.stages.size()) - 1, Connection::kAllToAll)},
                        10 * kMB,
                        0.0});
  }
  return d;
}

JobDag Synthetic(const InstanceSpec& in) {
  JobDag d{in.name, in.app, {}, {}};
  d.stages.push_back({"task", in.partitions, {}, 0, 0.0});
  return d;
}

}  // namespace

std::vector<std::string> SampleAppNames() {
  return {"prime_small", "prime_large", "wordcount", "databasejoin",
          "sort",        "pagerank",    "synthetic"};
}

Result<JobDag> BuildSampleJob(const InstanceSpec& in) {
  if (in.partitions < 1 || in.partitions > 100'000) {
    return InvalidArgument("instance " + in.name + ": partitions must be in 1..100000, got " +
                           std::to_string(in.partitions));
  }
  JobDag d;
  if (in.app == "prime_small") {
    d = Prime(in, 40'000);
  } else if (in.app == "prime_large") {
    d = Prime(in, 500'000);
  } else if (in.app == "wordcount") {
    d = WordCount(in);
  } else if (in.app == "databasejoin") {
    d = DatabaseJoin(in);
  } else if (in.app == "sort") {
    d = Sort(in);
  } else if (in.app == "pagerank") {
    d = PageRank(in);
  } else if (in.app == "synthetic") {
    if (!(in.task_seconds > 0)) {
      return InvalidArgument("instance " + in.name + ": synthetic needs task_seconds > 0");
    }
    d = Synthetic(in);
  } else {
    return InvalidArgument("instance " + in.name + ": unknown app '" + in.app +
                           "' (expected prime_small, prime_large, wordcount, databasejoin, "
                           "sort, pagerank or synthetic)");
  }
  COPSE_RETURN_IF_ERROR(ValidateDag(d));
  return d;
}

std::string FilePlacement(const InstanceSpec& instance, const JobDag& dag, int file) {
  if (file == 0) return instance.placement;
  return "colocate " + dag.files[0].name;
}

Result<std::vector<InstanceSpec>> ParseWorkload(const std::string& text,
                                                const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << origin << ":" << e.source().begin.line << ": " << e.description();
    return InvalidArgument(msg.str());
  }
  const toml::array* list = root["instance"].as_array();
  if (list == nullptr || list->empty()) {
    return InvalidArgument(origin + ": expected [[instance]] tables");
  }
  std::vector<InstanceSpec> out;
  std::set<std::string> names;
  for (size_t i = 0; i < list->size(); ++i) {
    std::string where = origin + ": instance " + std::to_string(i + 1);
    const toml::table* t = (*list)[i].as_table();
    if (t == nullptr) return InvalidArgument(where + ": expected a table");
    InstanceSpec s;
    auto name = (*t)["name"].value<std::string>();
    auto app = (*t)["app"].value<std::string>();
    auto parts = (*t)["partitions"].value<int64_t>();
    if (!name || !app || !parts) {
      return InvalidArgument(where + ": needs name (string), app (string), partitions (integer)");
    }
    s.name = *name;
    s.app = *app;
    s.partitions = static_cast<int>(*parts);
    if (auto p = (*t)["placement"].value<std::string>()) s.placement = *p;
    if (auto v = (*t)["submit_s"].value<double>()) s.submit_s = *v;
    if (auto v = (*t)["task_seconds"].value<double>()) s.task_seconds = *v;
    if (!(s.submit_s >= 0) || !(s.task_seconds >= 0)) {
      return InvalidArgument(where + ": submit_s and task_seconds must be numbers >= 0");
    }
    if (!names.insert(s.name).second) {
      return InvalidArgument(where + ": duplicate name '" + s.name + "'");
    }
    for (const auto& [key, value] : *t) {
      std::string k(key.str());
      if (k != "name" && k != "app" && k != "partitions" && k != "placement" && k != "submit_s" &&
          k != "task_seconds") {
        return InvalidArgument(where + ": unknown key '" + k + "'");
      }
    }
    Result<JobDag> dag = BuildSampleJob(s);
    if (!dag.ok()) return dag.status().WithContext(where);
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<InstanceSpec>> LoadWorkload(const std::filesystem::path& path) {
  std::ifstream f(path);
  if (!f) return NotFound("cannot read workload file " + path.string());
  std::stringstream buf;
  buf << f.rdbuf();
  return ParseWorkload(buf.str(), path.string());
}

}  // namespace copse::rootjob

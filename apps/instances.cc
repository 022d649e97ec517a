#include "apps/instances.h"

#include <toml++/toml.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "apps/catalog.h"
#include "rootjob/job_spec.h"

namespace copse::apps {

using rootjob::JobDag;

namespace {

constexpr int64_t kGB = 1'000'000'000;

// The synthetic job: independent tasks that read nothing.
JobDag Synthetic(const InstanceSpec& in) {
  JobDag d{in.name, in.app, {}, {}};
  d.stages.push_back({"task", in.partitions, {}, 0, 0.0});
  return d;
}

int64_t Scaled(int64_t bytes, double scale) {
  return scale == 1.0 ? bytes : std::llround(static_cast<double>(bytes) * scale);
}

}  // namespace

std::vector<std::string> InstanceKinds() {
  return {"prime_small", "prime_large", "wordcount", "databasejoin",
          "sort",        "pagerank",    "synthetic"};
}

Result<InputModel> PaperInputs(const std::string& kind, int n) {
  if (n < 1) return InvalidArgument("partitions must be at least 1");
  // Roughly 7 bytes a decimal integer line.
  if (kind == "prime_small") return InputModel{"prime", {"numbers"}, {40'000 * 7}};
  if (kind == "prime_large") return InputModel{"prime", {"numbers"}, {500'000 * 7}};
  if (kind == "wordcount") return InputModel{"wordcount", {"text"}, {50 * kMB}};
  if (kind == "databasejoin") {
    return InputModel{"databasejoin", {"small", "big"}, {11'800 * kMB / n, 41'800 * kMB / n}};
  }
  if (kind == "sort") return InputModel{"sort", {"records"}, {4 * kGB}};
  if (kind == "pagerank") return InputModel{"pagerank", {"graph"}, {1 * kGB}};
  return InvalidArgument("unknown app '" + kind +
                         "' (expected prime_small, prime_large, wordcount, databasejoin, sort, "
                         "pagerank" +
                         (kind == "synthetic" ? ": synthetic reads no input)" : ")"));
}

Result<InstanceJob> BuildInstanceJob(const InstanceSpec& in, double scale,
                                     const std::string& output) {
  if (!(scale > 0)) return InvalidArgument("instance " + in.name + ": scale must be > 0");
  Result<InputModel> model = PaperInputs(in.app, in.partitions);
  if (!model.ok()) return model.status().WithContext("instance " + in.name);
  InstanceJob ij;
  ij.app = model->app;
  RunOptions& o = ij.options;
  for (size_t f = 0; f < model->files.size(); ++f) {
    o.inputs.push_back("/" + in.name + "/" + model->files[f]);
    o.input_partitions.push_back(in.partitions);
    ij.facts[o.inputs.back()] = {in.partitions,
                                 Scaled(model->partition_bytes[f], scale) * in.partitions};
  }
  o.output = output.empty() ? "/" + in.name + "/out" : output;
  o.partitions = in.app == "wordcount" ? 1 : 0;
  o.name = in.name;
  return ij;
}

Result<JobDag> BuildInstanceDag(const InstanceSpec& in, double scale) {
  if (in.partitions < 1 || in.partitions > 100'000) {
    return InvalidArgument("instance " + in.name + ": partitions must be in 1..100000, got " +
                           std::to_string(in.partitions));
  }
  if (!(scale > 0)) return InvalidArgument("instance " + in.name + ": scale must be > 0");
  if (in.app == "synthetic") {
    if (!(in.task_seconds > 0)) {
      return InvalidArgument("instance " + in.name + ": synthetic needs task_seconds > 0");
    }
    return Synthetic(in);
  }
  COPSE_ASSIGN_OR_RETURN(InstanceJob ij, BuildInstanceJob(in, scale));
  Result<AppJob> job = BuildApp(ij.app, ij.options);
  if (!job.ok()) return job.status().WithContext("instance " + in.name);
  Result<JobDag> dag = rootjob::BuildJobDag(job->spec, ij.facts);
  if (!dag.ok()) return dag.status().WithContext("instance " + in.name);
  dag->app = in.app;
  for (size_t s = 0; s < dag->stages.size(); ++s) {
    rootjob::Stage& st = dag->stages[s];
    const StageSizes& sizes = job->sizes[s];
    st.name = job->spec.stages[s].program + "." + sizes.role;
    st.output_fixed_bytes = Scaled(sizes.output_fixed_bytes, scale);
    st.output_ratio = sizes.output_ratio;
    for (size_t i = 0; i < st.inputs.size(); ++i) st.inputs[i].fraction = sizes.input_fraction[i];
  }
  COPSE_RETURN_IF_ERROR(rootjob::ValidateDag(*dag));
  return dag;
}

std::string FilePlacement(const InstanceSpec& instance, const JobDag& dag, int file) {
  if (file == 0) return instance.placement;
  return "colocate " + dag.files[0].name;
}

std::string FitPlacement(const std::string& placement, const ClusterConfig& cluster,
                         int replication) {
  std::istringstream words(placement);
  std::string mode, rack;
  int n = 0;
  if (!(words >> mode >> n >> rack) || mode != "confine") return placement;
  int in_rack = 0;
  for (const ComputerConfig& c : cluster.computers) in_rack += c.rack == rack ? 1 : 0;
  if (in_rack == 0 || in_rack >= n) return placement;
  if (in_rack < (replication > 0 ? replication : cluster.replication)) return "random";
  return "confine " + std::to_string(in_rack) + " " + rack;
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
    Result<JobDag> dag = BuildInstanceDag(s);
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

}  // namespace copse::apps

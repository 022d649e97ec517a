#include "apps/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json.h"

namespace copse::apps {
namespace {

using Json = nlohmann::json;
using rootjob::Connection;
using rootjob::InputSpec;
using rootjob::StageSpec;

// Builds one app's job stage by stage.
class Builder {
 public:
  explicit Builder(std::string name) { job_.spec.name = std::move(name); }

  // Adds a stage running `program` in `role` (the "role" parameter, merged
  // into `params`); `vertices` 0 takes the count from a pointwise input.
  StageSpec& Add(const std::string& name, const std::string& program, const std::string& role,
                 Json params = Json::object(), int vertices = 0) {
    params["role"] = role;
    StageSpec s;
    s.name = name;
    s.program = program;
    s.params_json = DumpJson(params);
    s.vertices = vertices;
    job_.spec.stages.push_back(std::move(s));
    job_.sizes.push_back({role, 0, 0, {}});
    return job_.spec.stages.back();
  }
  // An input of the last stage added, with the share of each item it reads.
  void File(const std::string& path, Connection c, double fraction = 1.0) {
    job_.spec.stages.back().inputs.push_back({path, "", c});
    job_.sizes.back().input_fraction.push_back(fraction);
  }
  void From(const std::string& stage, Connection c) {
    job_.spec.stages.back().inputs.push_back({"", stage, c});
    job_.sizes.back().input_fraction.push_back(1.0);
  }
  // What a vertex of the last stage writes.
  void Writes(int64_t fixed_bytes, double ratio) {
    job_.sizes.back().output_fixed_bytes = fixed_bytes;
    job_.sizes.back().output_ratio = ratio;
  }

  AppJob Take() { return std::move(job_); }

 private:
  AppJob job_;
};

std::string Numbered(const std::string& base, size_t i, size_t n) {
  return n == 1 ? base : base + std::to_string(i);
}

Result<AppJob> Prime(const RunOptions& o) {
  if (o.partitions > 1) {
    return InvalidArgument("copse run prime: it writes one line, so --partitions must be 1");
  }
  Builder b(o.name.empty() ? "prime" : o.name);
  std::vector<std::string> counts;
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    counts.push_back(Numbered("count", i, o.inputs.size()));
    b.Add(counts.back(), "prime", "count");
    b.File(o.inputs[i], Connection::kPointwise);
    b.Writes(16, 0);
  }
  b.Add("total", "prime", "total").output = o.output;
  for (const std::string& c : counts) b.From(c, Connection::kGather);
  b.Writes(16, 0);
  return b.Take();
}

Result<AppJob> WordCount(const RunOptions& o) {
  const int n = o.partitions > 0 ? o.partitions : 1;
  Builder b(o.name.empty() ? "wordcount" : o.name);
  std::vector<std::string> counts;
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    counts.push_back(Numbered("count", i, o.inputs.size()));
    b.Add(counts.back(), "wordcount", "count");
    b.File(o.inputs[i], Connection::kPointwise);
    b.Writes(0, 0.02);
  }
  if (n == 1) {
    b.Add("sum", "wordcount", "sum").output = o.output;
    for (const std::string& c : counts) b.From(c, Connection::kGather);
    b.Writes(1000, 0);
    return b.Take();
  }
  b.Add("sum", "wordcount", "sum", Json::object(), n);
  for (const std::string& c : counts) b.From(c, Connection::kAllToAll);
  b.Writes(0, 1.0);
  b.Add("merge", "wordcount", "merge");
  b.From("sum", Connection::kGather);
  b.Writes(0, 1.0);
  b.Add("write", "wordcount", "write", Json::object(), n).output = o.output;
  b.From("merge", Connection::kAllToAll);
  b.Writes(0, 1.0);
  return b.Take();
}

// The partitions of the app's single input (or of every input, which must
// agree), from RunOptions::input_partitions.
Result<int> InputPartitions(const std::string& app, const RunOptions& o, size_t inputs) {
  if (o.inputs.size() != inputs) {
    return InvalidArgument("copse run " + app + ": --input must name " +
                           (inputs == 1 ? std::string("one file")
                                        : std::to_string(inputs) + " files, comma-separated"));
  }
  if (o.input_partitions.size() != o.inputs.size() || o.input_partitions[0] < 1) {
    return InvalidArgument("copse run " + app + ": the input's partition count is not known");
  }
  for (size_t i = 1; i < inputs; ++i) {
    if (o.input_partitions[i] != o.input_partitions[0]) {
      return InvalidArgument("copse run " + app + ": " + o.inputs[0] + " has " +
                             std::to_string(o.input_partitions[0]) + " partitions but " +
                             o.inputs[i] + " has " + std::to_string(o.input_partitions[i]) +
                             "; the tables must be partitioned alike");
    }
  }
  return o.input_partitions[0];
}

Result<AppJob> Sort(const RunOptions& o) {
  COPSE_ASSIGN_OR_RETURN(int n, InputPartitions("sort", o, 1));
  const int s = o.partitions > 0 ? o.partitions : n;
  const Json record = {{"record_bytes", 100}};
  Builder b(o.name.empty() ? "sort" : o.name);
  Json sample = record;
  sample["fraction"] = 0.01;
  sample["ranges"] = s;
  b.Add("sample", "sort", "sample", sample);
  b.File(o.inputs[0], Connection::kGather, 0.01);
  b.Writes(0, 0.001);
  b.Add("partition", "sort", "partition", record);
  b.File(o.inputs[0], Connection::kPointwise);
  b.From("sample", Connection::kBroadcast);
  b.Writes(0, 1.0);
  b.Add("sort", "sort", "sort", record, s).output = o.output;
  b.From("partition", Connection::kAllToAll);
  b.Writes(0, 1.0);
  return b.Take();
}

Result<AppJob> DatabaseJoin(const RunOptions& o) {
  COPSE_ASSIGN_OR_RETURN(int n, InputPartitions("databasejoin", o, 2));
  if (o.partitions > 0 && o.partitions != n) {
    return InvalidArgument("copse run databasejoin: the output has the tables' " +
                           std::to_string(n) + " partitions, so --partitions must be " +
                           std::to_string(n) + " or left out");
  }
  Builder b(o.name.empty() ? "databasejoin" : o.name);
  b.Add("phase1", "databasejoin", "phase1");
  b.File(o.inputs[0], Connection::kPointwise);
  b.File(o.inputs[1], Connection::kPointwise);
  b.Writes(0, 0.5);
  b.Add("phase2", "databasejoin", "phase2").output = o.output;
  b.File(o.inputs[1], Connection::kPointwise);
  b.From("phase1", Connection::kAllToAll);
  b.Writes(0, 0.05);
  return b.Take();
}

constexpr int kPageRankIterations = 3;

Result<AppJob> PageRank(const RunOptions& o) {
  COPSE_ASSIGN_OR_RETURN(int n, InputPartitions("pagerank", o, 1));
  if (o.partitions > 0 && o.partitions != n) {
    return InvalidArgument("copse run pagerank: the ranks have the graph's " + std::to_string(n) +
                           " partitions, so --partitions must be " + std::to_string(n) +
                           " or left out");
  }
  Builder b(o.name.empty() ? "pagerank" : o.name);
  for (int i = 1; i <= kPageRankIterations; ++i) {
    Json params = {{"iteration", i}, {"iterations", kPageRankIterations}, {"damping", 0.85}};
    std::string p1 = "phase1." + std::to_string(i), p2 = "phase2." + std::to_string(i);
    b.Add(p1, "pagerank", "phase1", params);
    b.File(o.inputs[0], Connection::kPointwise);
    if (i > 1) b.From("phase2." + std::to_string(i - 1), Connection::kPointwise);
    b.Writes(625 * kMB, 0);
    StageSpec& s2 = b.Add(p2, "pagerank", "phase2", params, n);
    if (i == kPageRankIterations) s2.output = o.output;
    b.From(p1, Connection::kAllToAll);
    b.Writes(10 * kMB, 0);
  }
  return b.Take();
}

Result<AppJob> Streaming(const RunOptions& o) {
  const StreamingRun& s = o.streaming;
  if (s.mapper.empty() || s.reducer.empty()) {
    return InvalidArgument("copse run streaming: --mapper and --reducer name its programs");
  }
  if (o.partitions > 0 && s.reducers > 0 && o.partitions != s.reducers) {
    return InvalidArgument(
        "copse run streaming: each reducer writes one output partition: give --reducers or "
        "--partitions, or the same number to both");
  }
  const int reducers = s.reducers > 0 ? s.reducers : std::max(o.partitions, 1);
  if (!s.range_bounds.empty() && s.range_bounds.size() + 1 != static_cast<size_t>(reducers)) {
    return InvalidArgument(
        fmt::format("copse run streaming: --range gives {} bounds; {} reducers take {}",
                    s.range_bounds.size(), reducers, reducers - 1));
  }
  rootjob::StreamingSpec reduce_side;
  reduce_side.format = s.format.empty() ? "text" : s.format;
  rootjob::StreamingSpec map_side = reduce_side;
  map_side.combiner = s.combiner;
  map_side.range_bounds = s.range_bounds;
  Builder b(o.name.empty() ? "streaming" : o.name);
  std::vector<std::string> maps;
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    maps.push_back(Numbered("map", i, o.inputs.size()));
    b.Add(maps.back(), s.mapper, "map").streaming = map_side;
    b.File(o.inputs[i], Connection::kPointwise);
    b.Writes(0, 1.0);
  }
  StageSpec& reduce = b.Add("reduce", s.reducer, "reduce", Json::object(), reducers);
  reduce.streaming = reduce_side;
  reduce.output = o.output;
  for (const std::string& m : maps) b.From(m, Connection::kAllToAll);
  b.Writes(0, 1.0);
  return b.Take();
}

}  // namespace

std::vector<std::string> RunnableApps() {
  return {"databasejoin", "pagerank", "prime", "sort", "streaming", "wordcount"};
}

Result<AppJob> BuildApp(const std::string& app, const RunOptions& o) {
  if (o.inputs.empty()) return InvalidArgument("copse run " + app + ": --input names no file");
  if (o.output.empty()) return InvalidArgument("copse run " + app + ": --output is required");
  if (o.partitions < 0) return InvalidArgument("--partitions must be at least 1");
  Result<AppJob> job =
      InvalidArgument("copse run: unknown app '" + app +
                      "' (expected databasejoin, pagerank, prime, sort, streaming or wordcount)");
  if (app == "prime") job = Prime(o);
  if (app == "wordcount") job = WordCount(o);
  if (app == "sort") job = Sort(o);
  if (app == "databasejoin") job = DatabaseJoin(o);
  if (app == "pagerank") job = PageRank(o);
  if (app == "streaming") job = Streaming(o);
  if (!job.ok()) return job;
  // The master's checks, here, so that a bad option is reported before the
  // job is submitted.
  Result<rootjob::JobSpec> checked = rootjob::ParseJobSpec(rootjob::JobSpecToJson(job->spec));
  if (!checked.ok()) return checked.status().WithContext("copse run " + app);
  return job;
}

Result<std::string> BuildJobSpec(const std::string& app, const RunOptions& options) {
  COPSE_ASSIGN_OR_RETURN(AppJob job, BuildApp(app, options));
  return rootjob::JobSpecToJson(job.spec);
}

}  // namespace copse::apps

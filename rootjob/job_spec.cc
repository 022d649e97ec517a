#include "rootjob/job_spec.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/json.h"
#include "common/text.h"
#include "dfs/paths.h"

namespace copse::rootjob {
namespace {

using Json = nlohmann::json;

Status Bad(const std::string& where, const std::string& what) {
  return InvalidArgument("job spec: " + where + ": " + what);
}

const char* TypeName(const Json& j) { return j.type_name(); }

// 100 rather than 100.0.
std::string Num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return DumpJson(Json(v));
}

Status CheckKeys(const Json& obj, const std::string& where, const std::set<std::string>& allowed) {
  for (const auto& [key, value] : obj.items()) {
    if (allowed.count(key) == 0) {
      std::string list;
      for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
      return Bad(where, "unknown key '" + key + "' (expected one of: " + list + ")");
    }
  }
  return Status::Ok();
}

Result<std::string> GetString(const Json& obj, const char* key, const std::string& where,
                              bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return Bad(where, std::string("'") + key + "' is required");
    return std::string();
  }
  if (!it->is_string()) {
    return Bad(where, std::string("'") + key + "' must be a string, not " + TypeName(*it));
  }
  return it->get<std::string>();
}

// A number in [lo, hi]; `integer` requires a whole number.
Result<std::optional<double>> GetNumber(const Json& obj, const char* key, const std::string& where,
                                        double lo, double hi, bool integer) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<double>();
  if (!it->is_number()) {
    return Bad(where, std::string("'") + key + "' must be a number, not " + TypeName(*it));
  }
  double v = it->get<double>();
  if (integer && v != std::floor(v)) {
    return Bad(where, std::string("'") + key + "' must be a whole number");
  }
  if (!(v >= lo && v <= hi)) {
    return Bad(where, std::string("'") + key + "' must be in [" + Num(lo) + ", " + Num(hi) +
                          "], got " + it->dump());
  }
  return std::optional<double>(v);
}

Duration Seconds(double s) { return Duration{std::llround(s * 1e6)}; }

Result<Connection> ParseConnection(const std::string& name, const std::string& where) {
  if (name == "pointwise") return Connection::kPointwise;
  if (name == "all-to-all") return Connection::kAllToAll;
  if (name == "gather") return Connection::kGather;
  if (name == "broadcast") return Connection::kBroadcast;
  return Bad(where, "unknown connection '" + name +
                        "' (expected pointwise, all-to-all, gather or broadcast)");
}

Status ParsePool(const Json& j, PoolSettings* pool) {
  const std::string where = "settings.pool";
  if (j.is_string()) {
    pool->name = j.get<std::string>();
    return ValidateName(pool->name, "job spec: settings.pool", 128);
  }
  if (!j.is_object())
    return Bad(where, std::string("must be a name or an object, not ") + TypeName(j));
  COPSE_RETURN_IF_ERROR(
      CheckKeys(j, where, {"name", "weight", "min_share", "fifo", "min_share_timeout_s"}));
  COPSE_ASSIGN_OR_RETURN(pool->name, GetString(j, "name", where, false));
  if (!pool->name.empty()) {
    COPSE_RETURN_IF_ERROR(ValidateName(pool->name, "job spec: settings.pool.name", 128));
  }
  COPSE_ASSIGN_OR_RETURN(auto weight, GetNumber(j, "weight", where, 1e-6, 1e6, false));
  if (weight) pool->weight = *weight;
  COPSE_ASSIGN_OR_RETURN(auto min_share, GetNumber(j, "min_share", where, 0, 1e6, true));
  if (min_share) pool->min_share = static_cast<int>(*min_share);
  if (auto it = j.find("fifo"); it != j.end()) {
    if (!it->is_boolean()) return Bad(where, "'fifo' must be true or false");
    pool->fifo = it->get<bool>();
  }
  COPSE_ASSIGN_OR_RETURN(auto t, GetNumber(j, "min_share_timeout_s", where, 0, 1e9, false));
  if (t) pool->min_share_timeout = Seconds(*t);
  return Status::Ok();
}

Status ParseSettings(const Json& j, JobSettings* s) {
  const std::string where = "settings";
  if (!j.is_object()) return Bad(where, std::string("must be an object, not ") + TypeName(j));
  COPSE_RETURN_IF_ERROR(
      CheckKeys(j, where,
                {"attempts", "vertex_timeout_s", "duplicate_factor", "duplicate_floor_s",
                 "min_tasks", "max_tasks", "pool", "slot_time_s"}));
  COPSE_ASSIGN_OR_RETURN(auto attempts, GetNumber(j, "attempts", where, 1, 100, true));
  if (attempts) s->attempts = static_cast<int>(*attempts);
  COPSE_ASSIGN_OR_RETURN(auto timeout, GetNumber(j, "vertex_timeout_s", where, 0.001, 1e7, false));
  if (timeout) s->vertex_timeout = Seconds(*timeout);
  COPSE_ASSIGN_OR_RETURN(auto factor, GetNumber(j, "duplicate_factor", where, 0, 1000, false));
  if (factor) {
    if (*factor != 0 && *factor < 1) {
      return Bad(where, "'duplicate_factor' must be 0 (no duplicates) or at least 1");
    }
    s->duplicate_factor = *factor;
  }
  COPSE_ASSIGN_OR_RETURN(auto floor, GetNumber(j, "duplicate_floor_s", where, 0, 1e7, false));
  if (floor) s->duplicate_floor = Seconds(*floor);
  COPSE_ASSIGN_OR_RETURN(auto min_tasks, GetNumber(j, "min_tasks", where, 0, 1e6, true));
  if (min_tasks) s->min_tasks = static_cast<int>(*min_tasks);
  COPSE_ASSIGN_OR_RETURN(auto max_tasks, GetNumber(j, "max_tasks", where, 1, 1e6, true));
  if (max_tasks) s->max_tasks = static_cast<int>(*max_tasks);
  if (s->min_tasks && s->max_tasks && *s->min_tasks > *s->max_tasks) {
    return Bad(where, "'min_tasks' exceeds 'max_tasks'");
  }
  if (auto it = j.find("pool"); it != j.end()) COPSE_RETURN_IF_ERROR(ParsePool(*it, &s->pool));
  COPSE_ASSIGN_OR_RETURN(auto slot, GetNumber(j, "slot_time_s", where, 0, 1e9, false));
  if (slot) s->slot_time = Seconds(*slot);
  return Status::Ok();
}

Result<InputSpec> ParseInput(const Json& j, const std::string& where) {
  if (!j.is_object()) {
    return Bad(where, std::string("an input must be an object like {\"file\": PATH} or "
                                  "{\"stage\": NAME}, not ") +
                          TypeName(j));
  }
  COPSE_RETURN_IF_ERROR(CheckKeys(j, where, {"file", "stage", "connection"}));
  InputSpec in;
  COPSE_ASSIGN_OR_RETURN(in.file, GetString(j, "file", where, false));
  COPSE_ASSIGN_OR_RETURN(in.stage, GetString(j, "stage", where, false));
  if (in.file.empty() == in.stage.empty()) {
    return Bad(where, "an input names either a \"file\" or a \"stage\"");
  }
  if (!in.file.empty()) {
    if (Status s = dfs::ValidatePath(in.file); !s.ok()) return Bad(where, "input " + s.message());
  }
  COPSE_ASSIGN_OR_RETURN(std::string conn, GetString(j, "connection", where, false));
  if (!conn.empty()) {
    COPSE_ASSIGN_OR_RETURN(in.connection, ParseConnection(conn, where));
  }
  if (!in.file.empty() && in.connection == Connection::kAllToAll) {
    return Bad(where,
               "a file is read pointwise (a vertex per partition), gathered or broadcast, "
               "not all-to-all");
  }
  return in;
}

Result<StreamingSpec> ParseStreaming(const Json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, std::string("must be an object, not ") + TypeName(j));
  COPSE_RETURN_IF_ERROR(CheckKeys(j, where, {"format", "sort", "combiner", "range_bounds"}));
  StreamingSpec s;
  COPSE_ASSIGN_OR_RETURN(std::string format, GetString(j, "format", where, false));
  if (!format.empty()) s.format = format;
  if (s.format != "text" && s.format != "binary") {
    return Bad(where, "'format' must be \"text\" or \"binary\", not '" +
                          EscapeForLog(Excerpt(s.format)) + "'");
  }
  COPSE_ASSIGN_OR_RETURN(std::string sort, GetString(j, "sort", where, false));
  if (!sort.empty()) s.sort = sort;
  if (s.sort != "auto" && s.sort != "yes" && s.sort != "no") {
    return Bad(where, "'sort' must be \"auto\", \"yes\" or \"no\", not '" +
                          EscapeForLog(Excerpt(s.sort)) + "'");
  }
  COPSE_ASSIGN_OR_RETURN(s.combiner, GetString(j, "combiner", where, false));
  if (!s.combiner.empty() && !ValidProgramRef(s.combiner)) {
    return Bad(where, "combiner '" + EscapeForLog(Excerpt(s.combiner)) + "' is not a program name");
  }
  if (auto it = j.find("range_bounds"); it != j.end()) {
    if (!it->is_array() || it->size() > 10'000) {
      return Bad(where, "'range_bounds' must be a list of at most 10000 strings");
    }
    for (const Json& b : *it) {
      if (!b.is_string() || b.get_ref<const std::string&>().size() > 1024) {
        return Bad(where, "'range_bounds' must hold strings of at most 1024 bytes");
      }
      s.range_bounds.push_back(b.get<std::string>());
    }
    if (!std::is_sorted(s.range_bounds.begin(), s.range_bounds.end())) {
      return Bad(where, "'range_bounds' must be sorted ascending");
    }
  }
  return s;
}

Result<StageSpec> ParseStage(const Json& j, size_t index, const SpecLimits& limits) {
  std::string where = "stage " + std::to_string(index);
  if (!j.is_object()) return Bad(where, std::string("must be an object, not ") + TypeName(j));
  COPSE_RETURN_IF_ERROR(
      CheckKeys(j, where,
                {"name", "program", "params", "vertices", "inputs", "output", "streaming"}));
  StageSpec s;
  COPSE_ASSIGN_OR_RETURN(s.name, GetString(j, "name", where, true));
  if (s.name.empty() || s.name.size() > 64 ||
      s.name.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
          std::string::npos) {
    return Bad(where, "stage name '" + EscapeForLog(s.name) +
                          "' must be 1 to 64 letters, digits, '.', '_' or '-'");
  }
  where = "stage '" + s.name + "'";
  COPSE_ASSIGN_OR_RETURN(s.program, GetString(j, "program", where, true));
  if (s.program.find('/') != std::string::npos) {
    return Bad(where, "program '" + EscapeForLog(s.program) +
                          "' is a path; name a program of the cluster's apps directory");
  }
  if (!ValidProgramRef(s.program)) {
    return Bad(where, "program '" + EscapeForLog(s.program) +
                          "' is not a program name (a lower-case letter, then lower-case letters, "
                          "digits, '-' or '_'; then, for a version of the program store, '@' and "
                          "the version)");
  }
  if (auto it = j.find("streaming"); it != j.end()) {
    COPSE_ASSIGN_OR_RETURN(s.streaming, ParseStreaming(*it, where + " streaming"));
  }
  if (auto it = j.find("params"); it != j.end()) {
    if (!it->is_object()) {
      return Bad(where, std::string("'params' must be a JSON object, not ") + TypeName(*it));
    }
    s.params_json = it->dump();
  } else {
    s.params_json = "{}";
  }
  COPSE_ASSIGN_OR_RETURN(auto v, GetNumber(j, "vertices", where, 1, limits.max_vertices, true));
  if (v) s.vertices = static_cast<int>(*v);
  if (auto it = j.find("inputs"); it != j.end()) {
    if (!it->is_array()) return Bad(where, "'inputs' must be a list");
    for (size_t k = 0; k < it->size(); ++k) {
      COPSE_ASSIGN_OR_RETURN(InputSpec in,
                             ParseInput((*it)[k], where + " input " + std::to_string(k)));
      s.inputs.push_back(std::move(in));
    }
  }
  COPSE_ASSIGN_OR_RETURN(s.output, GetString(j, "output", where, false));
  if (!s.output.empty()) {
    if (Status st = dfs::ValidatePath(s.output); !st.ok()) {
      return Bad(where, "output " + st.message());
    }
  }
  return s;
}

// Orders stages so that every input names an earlier one; a cycle or an
// unknown stage is an error.
Status OrderStages(std::vector<StageSpec>* stages) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < stages->size(); ++i) {
    if (!index.emplace((*stages)[i].name, i).second) {
      return Bad("stage '" + (*stages)[i].name + "'", "the name is used twice");
    }
  }
  for (const StageSpec& s : *stages) {
    for (const InputSpec& in : s.inputs) {
      if (in.stage.empty()) continue;
      auto it = index.find(in.stage);
      if (it == index.end()) return Bad("stage '" + s.name + "'", "no stage '" + in.stage + "'");
      const StageSpec& from = (*stages)[it->second];
      if (!from.output.empty()) {
        return Bad("stage '" + s.name + "'", "stage '" + from.name + "' writes the job output " +
                                                 from.output + " and cannot be read by a stage");
      }
    }
  }
  // Kahn's algorithm, taking the earliest listed stage that is ready.
  std::vector<int> missing(stages->size(), 0);
  std::vector<std::vector<size_t>> readers(stages->size());
  for (size_t i = 0; i < stages->size(); ++i) {
    for (const InputSpec& in : (*stages)[i].inputs) {
      if (in.stage.empty()) continue;
      ++missing[i];
      readers[index[in.stage]].push_back(i);
    }
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < stages->size(); ++i)
    if (missing[i] == 0) ready.insert(i);
  std::vector<StageSpec> ordered;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    ordered.push_back((*stages)[i]);
    for (size_t r : readers[i])
      if (--missing[r] == 0) ready.insert(r);
  }
  if (ordered.size() != stages->size()) {
    std::string cycle;
    for (size_t i = 0; i < stages->size(); ++i) {
      if (missing[i] > 0) cycle += (cycle.empty() ? "" : ", ") + (*stages)[i].name;
    }
    return Bad("stages", "the inputs form a cycle through " + cycle);
  }
  *stages = std::move(ordered);
  return Status::Ok();
}

// Vertex counts from pointwise inputs; pointwise pairs must agree.
Status InferVertices(std::vector<StageSpec>* stages, const std::map<std::string, int>& partitions,
                     bool files_known) {
  std::map<std::string, int> count;
  for (StageSpec& s : *stages) {
    std::string where = "stage '" + s.name + "'";
    for (const InputSpec& in : s.inputs) {
      int items = 0;
      std::string what;
      if (!in.stage.empty()) {
        items = count[in.stage];
        what = "stage '" + in.stage + "' has " + std::to_string(items) + " vertices";
      } else if (files_known) {
        items = partitions.at(in.file);
        what = "file " + in.file + " has " + std::to_string(items) + " partitions";
      } else {
        continue;
      }
      if (in.connection == Connection::kBroadcast && items != 1) {
        return Bad(where, "broadcast needs a single item, but " + what);
      }
      if (in.connection != Connection::kPointwise) continue;
      if (s.vertices == 0) {
        s.vertices = items;
      } else if (s.vertices != items) {
        return Bad(where,
                   "reads pointwise, so it needs as many vertices as its input, but it has " +
                       std::to_string(s.vertices) + " and " + what);
      }
    }
    bool gathers = false;
    for (const InputSpec& in : s.inputs) gathers |= in.connection == Connection::kGather;
    if (s.vertices == 0 && gathers) s.vertices = 1;
    if (s.vertices == 0 && files_known) {
      return Bad(where, "needs 'vertices' (it has no pointwise input to take the count from)");
    }
    if (gathers && s.vertices != 1 && s.vertices != 0) {
      return Bad(where, "gathers its input into one vertex, but has " + std::to_string(s.vertices) +
                            " vertices");
    }
    count[s.name] = s.vertices;
  }
  return Status::Ok();
}

}  // namespace

Result<JobSpec> ParseJobSpec(std::string_view text, const SpecLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Bad("spec", std::to_string(text.size()) + " bytes is over the limit of " +
                           std::to_string(limits.max_bytes) + " bytes (1 MiB)");
  }
  COPSE_ASSIGN_OR_RETURN(Json j, ParseJson(text, "job spec"));
  if (!j.is_object()) return Bad("spec", std::string("must be a JSON object, not ") + TypeName(j));
  COPSE_RETURN_IF_ERROR(CheckKeys(j, "spec", {"name", "settings", "stages"}));
  JobSpec spec;
  COPSE_ASSIGN_OR_RETURN(spec.name, GetString(j, "name", "spec", true));
  COPSE_RETURN_IF_ERROR(ValidateName(spec.name, "job spec: 'name'", 128));
  if (auto it = j.find("settings"); it != j.end()) {
    COPSE_RETURN_IF_ERROR(ParseSettings(*it, &spec.settings));
  }
  auto stages = j.find("stages");
  if (stages == j.end() || !stages->is_array() || stages->empty()) {
    return Bad("spec", "'stages' must be a non-empty list");
  }
  for (size_t i = 0; i < stages->size(); ++i) {
    COPSE_ASSIGN_OR_RETURN(StageSpec s, ParseStage((*stages)[i], i, limits));
    spec.stages.push_back(std::move(s));
  }
  COPSE_RETURN_IF_ERROR(OrderStages(&spec.stages));
  std::set<std::string> outputs;
  for (const StageSpec& s : spec.stages) {
    if (!s.output.empty() && !outputs.insert(s.output).second) {
      return Bad("stage '" + s.name + "'", "another stage writes " + s.output + " too");
    }
  }
  COPSE_RETURN_IF_ERROR(InferVertices(&spec.stages, {}, /*files_known=*/false));
  int64_t total = 0;
  for (const StageSpec& s : spec.stages) total += s.vertices;
  if (total > limits.max_vertices) {
    return Bad("spec", std::to_string(total) + " vertices is over the cluster's limit of " +
                           std::to_string(limits.max_vertices));
  }
  return spec;
}

std::string JobSpecToJson(const JobSpec& spec) {
  Json settings = Json::object();
  const JobSettings& st = spec.settings;
  settings["attempts"] = st.attempts;
  if (st.vertex_timeout) settings["vertex_timeout_s"] = ToSeconds(*st.vertex_timeout);
  settings["duplicate_factor"] = st.duplicate_factor;
  settings["duplicate_floor_s"] = ToSeconds(st.duplicate_floor);
  if (st.min_tasks) settings["min_tasks"] = *st.min_tasks;
  if (st.max_tasks) settings["max_tasks"] = *st.max_tasks;
  Json pool = {{"name", st.pool.name},
               {"weight", st.pool.weight},
               {"min_share", st.pool.min_share},
               {"fifo", st.pool.fifo}};
  if (st.pool.min_share_timeout)
    pool["min_share_timeout_s"] = ToSeconds(*st.pool.min_share_timeout);
  settings["pool"] = pool;
  if (st.slot_time > Duration{0}) settings["slot_time_s"] = ToSeconds(st.slot_time);
  Json stages = Json::array();
  for (const StageSpec& s : spec.stages) {
    Json inputs = Json::array();
    for (const InputSpec& in : s.inputs) {
      Json i = Json::object();
      if (!in.file.empty()) i["file"] = in.file;
      if (!in.stage.empty()) i["stage"] = in.stage;
      i["connection"] = ConnectionName(in.connection);
      inputs.push_back(i);
    }
    Json stage = {{"name", s.name},
                  {"program", s.program},
                  {"params", Json::parse(s.params_json)},
                  {"inputs", inputs}};
    if (s.vertices > 0) stage["vertices"] = s.vertices;
    if (!s.output.empty()) stage["output"] = s.output;
    if (s.streaming) {
      const StreamingSpec& how = *s.streaming;
      Json sj = {{"format", how.format}, {"sort", how.sort}};
      if (!how.combiner.empty()) sj["combiner"] = how.combiner;
      if (!how.range_bounds.empty()) sj["range_bounds"] = how.range_bounds;
      stage["streaming"] = sj;
    }
    stages.push_back(stage);
  }
  return DumpJson(Json{{"name", spec.name}, {"settings", settings}, {"stages", stages}});
}

Result<JobDag> BuildJobDag(const JobSpec& spec, const std::map<std::string, FileFacts>& files,
                           const SpecLimits& limits) {
  std::map<std::string, int> partitions;
  for (const auto& [path, f] : files) partitions[path] = f.partitions;
  for (const std::string& f : InputFiles(spec)) {
    if (partitions.count(f) == 0) return NotFound("job input " + f + " does not exist");
  }
  std::vector<StageSpec> stages = spec.stages;
  COPSE_RETURN_IF_ERROR(InferVertices(&stages, partitions, /*files_known=*/true));
  JobDag dag;
  dag.name = spec.name;
  dag.app = "job";
  std::map<std::string, int> file_index, stage_index;
  int64_t total = 0;
  for (const StageSpec& s : stages) {
    Stage st;
    st.name = s.name;
    st.vertices = s.vertices;
    total += s.vertices;
    for (const InputSpec& in : s.inputs) {
      StageInput si;
      si.connection = in.connection;
      if (!in.file.empty()) {
        auto [it, fresh] = file_index.emplace(in.file, static_cast<int>(dag.files.size()));
        if (fresh) {
          const FileFacts& f = files.at(in.file);
          dag.files.push_back(
              {in.file, f.partitions, f.partitions > 0 ? f.bytes / f.partitions : 0});
        }
        si.from_file = true;
        si.source = it->second;
      } else {
        si.from_file = false;
        si.source = stage_index.at(in.stage);
      }
      st.inputs.push_back(si);
    }
    stage_index[s.name] = static_cast<int>(dag.stages.size());
    dag.stages.push_back(std::move(st));
  }
  if (total > limits.max_vertices) {
    return Bad("spec", std::to_string(total) + " vertices is over the cluster's limit of " +
                           std::to_string(limits.max_vertices));
  }
  Status s = ValidateDag(dag);
  if (!s.ok()) return Bad("spec", s.message());
  return dag;
}

std::vector<std::string> InputFiles(const JobSpec& spec) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const StageSpec& s : spec.stages) {
    for (const InputSpec& in : s.inputs) {
      if (!in.file.empty() && seen.insert(in.file).second) out.push_back(in.file);
    }
  }
  return out;
}

std::vector<std::string> OutputFiles(const JobSpec& spec) {
  std::vector<std::string> out;
  for (const StageSpec& s : spec.stages)
    if (!s.output.empty()) out.push_back(s.output);
  return out;
}

}  // namespace copse::rootjob

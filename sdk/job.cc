// Job graphs built in code (copse/job.h), turned into the one job spec
// format through the spec's own writer and parser (rootjob/job_spec.h).
#include "copse/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "rootjob/job_spec.h"

namespace copse {
namespace {

using Json = nlohmann::json;

rootjob::Connection ToSpec(Connection c) {
  switch (c) {
    case Connection::kPointwise:
      return rootjob::Connection::kPointwise;
    case Connection::kAllToAll:
      return rootjob::Connection::kAllToAll;
    case Connection::kGather:
      return rootjob::Connection::kGather;
    case Connection::kBroadcast:
      return rootjob::Connection::kBroadcast;
  }
  return rootjob::Connection::kPointwise;
}

const char* Name(Connection c) {
  switch (c) {
    case Connection::kPointwise:
      return "pointwise (>=)";
    case Connection::kAllToAll:
      return "all-to-all (>>)";
    case Connection::kGather:
      return "gather";
    case Connection::kBroadcast:
      return "broadcast";
  }
  return "?";
}

}  // namespace

Stage::Stage(std::string name, std::string program)
    : name_(std::move(name)), program_(std::move(program)) {}

Stage& Stage::Copies(int n) {
  copies_ = n;
  return *this;
}

Stage& Stage::Param(std::string_view name, std::string_view value) {
  params_[std::string(name)] = DumpJson(Json(std::string(value)));
  return *this;
}
Stage& Stage::Param(std::string_view name, const char* value) {
  return Param(name, std::string_view(value));
}
Stage& Stage::Param(std::string_view name, double value) {
  params_[std::string(name)] = std::isfinite(value) ? DumpJson(Json(value)) : "null";
  return *this;
}
Stage& Stage::Param(std::string_view name, int64_t value) {
  params_[std::string(name)] = DumpJson(Json(value));
  return *this;
}
Stage& Stage::Param(std::string_view name, int value) {
  return Param(name, static_cast<int64_t>(value));
}
Stage& Stage::Param(std::string_view name, bool value) {
  params_[std::string(name)] = value ? "true" : "false";
  return *this;
}
Stage& Stage::Streaming(StreamingOptions options) {
  streaming_ = true;
  streaming_options_ = std::move(options);
  return *this;
}

Stage operator^(Stage stage, int copies) {
  stage.Copies(copies);
  return stage;
}

Graph::Graph(Stage stage) { stages_.push_back(std::move(stage)); }

Graph Input(std::string path) {
  Graph g;
  g.files_.push_back(std::move(path));
  return g;
}

std::vector<std::string> Graph::Outputs() const {
  std::vector<std::string> out;
  for (const Stage& s : stages_) {
    bool read = false;
    for (const Stage& t : stages_) {
      for (const Stage::Input_& in : t.inputs_) read |= in.stage == s.name_;
    }
    if (!read && s.output_.empty()) out.push_back(s.name_);
  }
  return out;
}

std::vector<std::string> Graph::Inputs() const {
  std::vector<std::string> in;
  for (const Stage& s : stages_) {
    bool fed = std::any_of(s.inputs_.begin(), s.inputs_.end(),
                           [](const Stage::Input_& i) { return !i.stage.empty(); });
    if (!fed) in.push_back(s.name_);
  }
  return in;
}

// Both graphs' stages; a stage in both is one stage whose inputs are the
// union of its inputs in each.
Graph operator||(const Graph& a, const Graph& b) {
  Graph g = a;
  if (g.error_.empty()) g.error_ = b.error_;
  for (const std::string& f : b.files_) g.files_.push_back(f);
  for (const Stage& s : b.stages_) {
    auto it = std::find_if(g.stages_.begin(), g.stages_.end(),
                           [&](const Stage& t) { return t.name_ == s.name_; });
    if (it == g.stages_.end()) {
      g.stages_.push_back(s);
      continue;
    }
    if (it->program_ != s.program_ || it->copies_ != s.copies_ || it->params_ != s.params_) {
      if (g.error_.empty()) {
        g.error_ = fmt::format("two different stages are named '{}'", s.name_);
      }
      continue;
    }
    for (const Stage::Input_& in : s.inputs_) {
      bool have = std::any_of(it->inputs_.begin(), it->inputs_.end(), [&](const Stage::Input_& x) {
        return x.file == in.file && x.stage == in.stage && x.connection == in.connection;
      });
      if (!have) it->inputs_.push_back(in);
    }
    if (it->output_.empty()) it->output_ = s.output_;
  }
  return g;
}

Graph Graph::Connect(const Graph& a, const Graph& b, Connection c) {
  Graph g = a || b;
  if (!a.stages_.empty() && !a.files_.empty() && g.error_.empty()) {
    g.error_ = "a graph that mixes Input() files and stages cannot feed another: connect the "
               "files to stages first";
  }
  if (!g.error_.empty()) return g;
  std::vector<std::string> to = b.Inputs();
  if (to.empty()) {
    g.error_ = fmt::format("the right side of a {} connection has no stage to feed", Name(c));
    return g;
  }
  if (!a.files_.empty()) {
    if (c == Connection::kAllToAll) {
      g.error_ = "a file is read pointwise (>=), gathered or broadcast, not all-to-all";
      return g;
    }
    for (Stage& s : g.stages_) {
      if (std::find(to.begin(), to.end(), s.name_) == to.end()) continue;
      for (const std::string& f : a.files_) s.inputs_.push_back({f, "", c});
    }
    g.files_.clear();
    return g;
  }
  std::vector<std::string> from = a.Outputs();
  if (from.empty()) {
    g.error_ = fmt::format("the left side of a {} connection has no stage to read from", Name(c));
    return g;
  }
  for (Stage& s : g.stages_) {
    if (std::find(to.begin(), to.end(), s.name_) == to.end()) continue;
    if (std::find(from.begin(), from.end(), s.name_) != from.end()) {
      g.error_ = fmt::format("stage '{}' would read its own output", s.name_);
      return g;
    }
    for (const std::string& f : from) s.inputs_.push_back({"", f, c});
  }
  return g;
}

Graph operator>=(const Graph& a, const Graph& b) { return Graph::Connect(a, b, Connection::kPointwise); }
Graph operator>>(const Graph& a, const Graph& b) { return Graph::Connect(a, b, Connection::kAllToAll); }
Graph Gather(const Graph& a, const Graph& b) { return Graph::Connect(a, b, Connection::kGather); }
Graph Broadcast(const Graph& a, const Graph& b) {
  return Graph::Connect(a, b, Connection::kBroadcast);
}

Graph Graph::WriteTo(std::string path) const {
  Graph g = *this;
  std::vector<std::string> out = Outputs();
  if (out.size() != 1) {
    if (g.error_.empty()) {
      g.error_ = fmt::format("WriteTo({}): the graph has {} output stages, not one", path,
                             out.size());
    }
    return g;
  }
  for (Stage& s : g.stages_) {
    if (s.name_ == out[0]) s.output_ = path;
  }
  return g;
}

JobSpec::JobSpec(std::string name, Graph graph) : name_(std::move(name)), graph_(std::move(graph)) {}

JobSpec& JobSpec::Attempts(int n) {
  attempts_ = n;
  return *this;
}
JobSpec& JobSpec::VertexTimeout(double seconds) {
  vertex_timeout_s_ = seconds;
  return *this;
}
JobSpec& JobSpec::Pool(std::string name) {
  pool_ = std::move(name);
  return *this;
}

Result<std::string> JobSpec::ToJson() const {
  if (!graph_.error_.empty()) return InvalidArgument("job graph: " + graph_.error_);
  if (!graph_.files_.empty()) {
    return InvalidArgument("job graph: a file from Input() is read by no stage");
  }
  Json spec = {{"name", name_}};
  Json settings = Json::object();
  if (attempts_ > 0) settings["attempts"] = attempts_;
  if (vertex_timeout_s_ > 0) settings["vertex_timeout_s"] = vertex_timeout_s_;
  if (!pool_.empty()) settings["pool"] = pool_;
  if (!settings.empty()) spec["settings"] = settings;
  Json stages = Json::array();
  for (const Stage& s : graph_.stages_) {
    Json st = {{"name", s.name_}, {"program", s.program_}};
    if (s.copies_ > 0) st["vertices"] = s.copies_;
    Json params = Json::object();
    for (const auto& [k, v] : s.params_) params[k] = Json::parse(v);
    if (!params.empty()) st["params"] = params;
    Json inputs = Json::array();
    for (const Stage::Input_& in : s.inputs_) {
      Json i = in.file.empty() ? Json{{"stage", in.stage}} : Json{{"file", in.file}};
      i["connection"] = rootjob::ConnectionName(ToSpec(in.connection));
      inputs.push_back(i);
    }
    if (!inputs.empty()) st["inputs"] = inputs;
    if (!s.output_.empty()) st["output"] = s.output_;
    if (s.streaming_) {
      const StreamingOptions& o = s.streaming_options_;
      Json sj = {{"format", o.format}, {"sort", o.sort}};
      if (!o.combiner.empty()) sj["combiner"] = o.combiner;
      if (!o.range_bounds.empty()) sj["range_bounds"] = o.range_bounds;
      st["streaming"] = sj;
    }
    stages.push_back(st);
  }
  spec["stages"] = stages;
  std::string text = DumpJson(spec, 2);
  // The master's own check, here, so that a graph built wrong says so
  // before it is sent.
  COPSE_RETURN_IF_ERROR(rootjob::ParseJobSpec(text).status());
  return text;
}

}  // namespace copse

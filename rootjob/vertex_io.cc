#include "rootjob/vertex_io.h"

#include <nlohmann/json.hpp>

#include "common/json.h"

namespace copse::rootjob {
namespace {

using Json = nlohmann::json;

template <typename T>
Status Get(const Json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end()) return InvalidArgument(std::string("task descriptor: no '") + key + "'");
  try {
    *out = it->get<T>();
  } catch (const Json::exception&) {
    return InvalidArgument(std::string("task descriptor: '") + key + "' has the wrong type");
  }
  return Status::Ok();
}

template <typename T>
void GetOr(const Json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  try {
    *out = it->get<T>();
  } catch (const Json::exception&) {
  }
}

}  // namespace

std::string ScratchPrefix(uint64_t job, uint32_t incarnation, const std::string& stage, int index,
                          int version) {
  return "/.scratch/" + std::to_string(job) + "/i" + std::to_string(incarnation) + "." + stage +
         "." + std::to_string(index) + ".v" + std::to_string(version);
}

std::string ScratchFile(const std::string& prefix, uint32_t attempt) {
  return prefix + ".a" + std::to_string(attempt);
}

std::string DescriptorToJson(const VertexDescriptor& d) {
  Json inputs = Json::array();
  for (const InputRef& in : d.inputs) {
    inputs.push_back({{"input", in.input},
                      {"kind", in.from_file ? "file" : "stage"},
                      {"path", in.path},
                      {"partition", in.partition},
                      {"stage", in.stage},
                      {"index", in.index},
                      {"bytes", in.bytes}});
  }
  Json params = Json::parse(d.params, nullptr, false);
  if (!params.is_object()) params = Json::object();
  return DumpJson(Json{{"job_name", d.job_name},
                       {"stage", d.stage},
                       {"index", d.index},
                       {"version", d.version},
                       {"program", d.program},
                       {"params", params},
                       {"inputs", inputs},
                       {"scratch_job", d.scratch_job},
                       {"buckets", d.buckets},
                       {"scratch_prefix", d.scratch_prefix},
                       {"output", d.output},
                       {"output_partition", d.output_partition},
                       {"streaming",
                        {{"format", d.streaming.format},
                         {"sort", d.streaming.sort},
                         {"combiner", d.streaming.combiner},
                         {"bounds", d.streaming.bounds}}}});
}

Result<std::string> CompleteDescriptor(const std::string& root_part, const VertexDescriptor& run) {
  Json d = Json::parse(root_part.empty() ? "{}" : root_part, nullptr, /*allow_exceptions=*/false);
  if (d.is_discarded()) return InvalidArgument("the task descriptor is not JSON");
  if (!d.is_object()) return InvalidArgument("the task descriptor is not a JSON object");
  d["task"] = run.task;
  d["attempt"] = run.attempt;
  d["job"] = run.job;
  d["incarnation"] = run.incarnation;
  d["computer"] = run.computer;
  d["config"] = run.config;
  d["secret_fd"] = run.secret_fd;
  d["result_file"] = run.result_file;
  d["launch_received_ns"] = run.launch_received_ns;
  d["contract"] = run.contract;
  if (!run.exec.empty()) d["exec"] = run.exec;
  if (!run.combiner_exec.empty()) d["combiner_exec"] = run.combiner_exec;
  return DumpJson(d, 2);
}

Result<VertexDescriptor> ParseDescriptor(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("task descriptor: not a JSON object");
  VertexDescriptor d;
  COPSE_RETURN_IF_ERROR(Get(j, "job", &d.job));
  COPSE_RETURN_IF_ERROR(Get(j, "stage", &d.stage));
  COPSE_RETURN_IF_ERROR(Get(j, "index", &d.index));
  COPSE_RETURN_IF_ERROR(Get(j, "version", &d.version));
  COPSE_RETURN_IF_ERROR(Get(j, "task", &d.task));
  COPSE_RETURN_IF_ERROR(Get(j, "attempt", &d.attempt));
  COPSE_RETURN_IF_ERROR(Get(j, "computer", &d.computer));
  COPSE_RETURN_IF_ERROR(Get(j, "config", &d.config));
  COPSE_RETURN_IF_ERROR(Get(j, "secret_fd", &d.secret_fd));
  COPSE_RETURN_IF_ERROR(Get(j, "result_file", &d.result_file));
  GetOr(j, "job_name", &d.job_name);
  GetOr(j, "program", &d.program);
  GetOr(j, "incarnation", &d.incarnation);
  GetOr(j, "scratch_job", &d.scratch_job);
  GetOr(j, "buckets", &d.buckets);
  GetOr(j, "scratch_prefix", &d.scratch_prefix);
  GetOr(j, "output", &d.output);
  GetOr(j, "output_partition", &d.output_partition);
  GetOr(j, "launch_received_ns", &d.launch_received_ns);
  GetOr(j, "contract", &d.contract);
  GetOr(j, "exec", &d.exec);
  GetOr(j, "combiner_exec", &d.combiner_exec);
  if (auto st = j.find("streaming"); st != j.end()) {
    if (!st->is_object()) return InvalidArgument("task descriptor: 'streaming' is not an object");
    GetOr(*st, "format", &d.streaming.format);
    GetOr(*st, "sort", &d.streaming.sort);
    GetOr(*st, "combiner", &d.streaming.combiner);
    GetOr(*st, "bounds", &d.streaming.bounds);
  }
  if (auto p = j.find("params"); p != j.end()) {
    if (!p->is_object()) return InvalidArgument("task descriptor: 'params' is not an object");
    d.params = p->dump();
  }
  if (auto in = j.find("inputs"); in != j.end()) {
    if (!in->is_array()) return InvalidArgument("task descriptor: 'inputs' is not a list");
    for (const Json& x : *in) {
      InputRef r;
      std::string kind;
      COPSE_RETURN_IF_ERROR(Get(x, "kind", &kind));
      COPSE_RETURN_IF_ERROR(Get(x, "path", &r.path));
      COPSE_RETURN_IF_ERROR(Get(x, "partition", &r.partition));
      r.from_file = kind == "file";
      GetOr(x, "input", &r.input);
      GetOr(x, "stage", &r.stage);
      GetOr(x, "index", &r.index);
      GetOr(x, "bytes", &r.bytes);
      d.inputs.push_back(std::move(r));
    }
  }
  if (d.buckets < 0 || (d.buckets > 0 && d.scratch_prefix.empty())) {
    return InvalidArgument("task descriptor: buckets without a scratch prefix");
  }
  return d;
}

std::string ResultToJson(const VertexResult& r) {
  Json j = {{"started_ns", r.started_ns},
            {"bytes_read", {{"local", r.read_local}, {"rack", r.read_rack}, {"core", r.read_core}}},
            {"bytes_written", r.bytes_written},
            {"records_written", r.records_written},
            {"buckets", r.buckets}};
  if (r.input_lost) j["input_lost"] = *r.input_lost;
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.counters.empty()) j["counters"] = r.counters;
  return DumpJson(j);
}

VertexResult ParseResult(const std::string& text) {
  VertexResult r;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return r;
  GetOr(j, "started_ns", &r.started_ns);
  if (auto b = j.find("bytes_read"); b != j.end() && b->is_object()) {
    GetOr(*b, "local", &r.read_local);
    GetOr(*b, "rack", &r.read_rack);
    GetOr(*b, "core", &r.read_core);
  }
  GetOr(j, "bytes_written", &r.bytes_written);
  GetOr(j, "records_written", &r.records_written);
  GetOr(j, "buckets", &r.buckets);
  if (auto l = j.find("input_lost"); l != j.end() && l->is_number_integer()) {
    r.input_lost = l->get<int>();
  }
  GetOr(j, "error", &r.error);
  if (auto c = j.find("counters"); c != j.end() && c->is_object()) {
    for (const auto& [name, v] : c->items()) {
      if (v.is_number_integer()) r.counters[name] = v.get<int64_t>();
    }
  }
  return r;
}

}  // namespace copse::rootjob

// What the engine's own programs know of a vertex run beyond the public
// contract (copse/vertex.h): the whole descriptor, and the streaming
// adapter's settings (apps/streaming/). Not installed.
// Thread-safety: as copse::Vertex.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "copse/status.h"
#include "copse/vertex.h"
#include "rootjob/vertex_io.h"

namespace copse::apps {

// CLOCK_MONOTONIC in ns: call first thing in main (the launch latency ends
// here).
int64_t MarkStart();

const rootjob::VertexDescriptor& DescriptorOf(const Vertex& v);
// The stage's parameters, parsed (a JSON object).
const nlohmann::json& ParamsOf(const Vertex& v);
// The run's working directory (where its descriptor lies).
std::filesystem::path WorkingDir(const Vertex& v);

// How the streaming adapter runs the stage's program.
struct StreamingSettings {
  std::string program;  // the program's name, for messages
  std::string exec;     // its path on this computer
  std::string combiner, combiner_exec;
  RecordFormat format = RecordFormat::kText;
  bool sort = false;
  std::vector<std::string> bounds;  // a range partitioner's; empty: hash
  size_t sort_memory = 256u << 20;  // [streaming] sort_memory_mb
  size_t max_record = 1u << 20;     // [streaming] max_record_bytes
};
// kInvalidArgument when the descriptor names no program to stream.
Result<StreamingSettings> StreamingOf(Vertex& v);

// The environment a streaming program runs with: of this process's, PATH,
// HOME, USER, LOGNAME, LANG, LANGUAGE, LC_*, TZ, TMPDIR and
// LD_LIBRARY_PATH; then COPSE_JOB, COPSE_JOB_NAME, COPSE_STAGE, COPSE_INDEX, COPSE_VERSION,
// COPSE_ATTEMPT, COPSE_COMPUTER, COPSE_PARAMS (the stage's parameters, JSON)
// and COPSE_PROGRAM_DIR (the directory `exec` is in, where a shipped
// archive's helper files are).
std::vector<std::string> ChildEnvironment(const Vertex& v, const std::string& exec);

}  // namespace copse::apps

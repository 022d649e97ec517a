// What a root tells a vertex run and what the run reports back (docs/jobs.md
// "Vertex programs"): the descriptor (task.json: the vertex, its parameters,
// each input piece by name, where its output goes) and the result document
// (result.json: counters, output bucket sizes, an input that was lost). The
// root writes descriptors and reads results; the vertex runtime (apps/) reads
// descriptors and writes results: one definition of both, here.
//
// Intermediate data lives in the job's scratch area under names that carry
// the job's incarnation, the vertex's version and the run's attempt, so that
// a retry, a preempted run or a restarted job never meets an earlier one's
// files: /.scratch/<job>/i<incarnation>.<stage>.<index>.v<version>.a<attempt>,
// one partition per output bucket.
// Thread-safety: plain data and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "copse/status.h"

namespace copse::rootjob {

// Exit codes a vertex program may use besides 0 (success) and 1 (failed,
// worth a retry).
inline constexpr int kExitDoNotRetry = 65;  // bad input or parameters: retrying cannot help
inline constexpr int kExitInputLost = 75;   // an upstream output is gone: its producer reruns

// "/.scratch/<job>/i<inc>.<stage>.<index>.v<version>" (the attempt follows).
std::string ScratchPrefix(uint64_t job, uint32_t incarnation, const std::string& stage, int index,
                          int version);
// A run's output file: the prefix and ".a<attempt>".
std::string ScratchFile(const std::string& prefix, uint32_t attempt);

struct InputRef {
  int input = 0;          // which of the stage's inputs
  bool from_file = true;  // a partition of a DFS file, else a producer's output
  std::string path;       // the file; for a producer, its scratch file
  int partition = 0;      // the file's partition, or the producer's bucket (-1: every bucket)
  std::string stage;      // the producer's stage and index, for messages
  int index = 0;
  int64_t bytes = 0;  // what the root expects it to hold
};

// How a stage runs a program that does not link the vertex runtime (the
// streaming adapter, apps/streaming/). The root writes it for every vertex;
// programs that link the runtime ignore it.
struct StreamingDescriptor {
  std::string format = "text";  // "text" or "binary"
  bool sort = false;            // the inputs merged in key order
  std::string combiner;         // a program (name) each bucket runs through; empty: none
  std::vector<std::string> bounds;  // a range partitioner's; empty: hash
};

struct VertexDescriptor {
  // Written by the root.
  uint64_t job = 0;
  std::string job_name;
  std::string stage;
  int index = 0;
  int version = 0;
  std::string program;
  std::string params = "{}";  // the stage's parameters, a JSON object
  std::vector<InputRef> inputs;
  std::string scratch_job;     // the job's scratch area name
  int buckets = 0;             // output buckets to write as scratch, or
  std::string scratch_prefix;  // (with the attempt: the scratch file)
  std::string output;          // the DFS output file this vertex writes
  int output_partition = 0;    // its partition of it
  StreamingDescriptor streaming;
  // Added by the worker.
  uint64_t task = 0;
  uint32_t attempt = 0;
  uint32_t incarnation = 0;
  std::string computer;
  std::string config;
  int secret_fd = -1;
  std::string result_file;
  int64_t launch_received_ns = 0;
  int contract = 0;           // the vertex contract the worker speaks (copse/vertex.h)
  std::string exec;           // a streaming run: the program's path; empty: not streaming
  std::string combiner_exec;  // ... and its combiner's
};

// The root's part, as the JSON object it submits.
std::string DescriptorToJson(const VertexDescriptor& d);
// The whole task.json: the root's part (a JSON object, as submitted) with
// the worker's fields of `run` added (task, attempt, job, incarnation,
// computer, config, secret_fd, result_file, launch_received_ns, contract,
// and exec and combiner_exec when not empty).
// kInvalidArgument when the root's part is not a JSON object.
Result<std::string> CompleteDescriptor(const std::string& root_part, const VertexDescriptor& run);

// The whole task.json (the root's part and the worker's). kInvalidArgument
// names a missing or mistyped field.
Result<VertexDescriptor> ParseDescriptor(const std::string& json);

struct VertexResult {
  int64_t started_ns = 0;  // CLOCK_MONOTONIC when the program's own code began
  uint64_t read_local = 0, read_rack = 0, read_core = 0;
  uint64_t bytes_written = 0;
  uint64_t records_written = 0;
  std::vector<int64_t> buckets;   // bytes per output bucket
  std::optional<int> input_lost;  // the index in `inputs` of a piece it could not read
  std::string error;
  std::map<std::string, int64_t> counters;  // the program's own (Vertex::Count)
};

std::string ResultToJson(const VertexResult& r);
// Tolerant of missing fields (a program that died early wrote little).
VertexResult ParseResult(const std::string& json);

}  // namespace copse::rootjob

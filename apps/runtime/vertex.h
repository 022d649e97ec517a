// Vertex: the small runtime every vertex program links (DESIGN.md §6,
// docs/jobs.md "Vertex programs"). A worker starts a program as
//   PROGRAM TASK_JSON
// with the cluster secret on descriptor 3. The runtime reads the descriptor
// (rootjob/vertex_io.h), reads the vertex's input pieces through the DFS
// client (a replica on this computer first, then in this rack, then
// anywhere; bytes counted by locality), writes its output — one bucket per
// consumer into the job's scratch area (dfs/bucket_writer.h), or its
// partition of the job's output file — and at the end writes the result
// document the root reads (counters, bucket sizes, an input found lost) and
// gives the exit code:
//   0  done;
//   65 (rootjob::kExitDoNotRetry) bad parameters or input data, or an input
//      file that no longer exists: the job fails at once;
//   75 (rootjob::kExitInputLost) an upstream output is gone: its producer
//      runs again, then this vertex;
//   1  anything else: the root retries it.
//
//   int main(int argc, char** argv) {
//     int64_t start = copse::apps::MarkStart();
//     auto v = copse::apps::Vertex::Open(argc, argv, start);
//     if (!v.ok()) return copse::apps::Vertex::FailEarly(v.status());
//     Status s = ...;   // (*v)->Read(i, sink), (*v)->Write(bucket, bytes) ...
//     return (*v)->Finish(s);
//   }
//
// Every program honours the reserved parameter "delay_s": seconds to wait
// before doing anything (a number), or {"index": I, "version": V,
// "seconds": S} to delay only that vertex's run of that version — a way to
// make stragglers and slow jobs for demonstrations and failure tests.
// Thread-safety: not thread-safe; a program has one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "common/config.h"
#include "common/status.h"
#include "dfs/bucket_writer.h"
#include "dfs/client.h"
#include "rootjob/vertex_io.h"

namespace copse::apps {

// CLOCK_MONOTONIC in ns: call first thing in main (the launch latency ends
// here).
int64_t MarkStart();

class Vertex {
 public:
  static Result<std::unique_ptr<Vertex>> Open(int argc, char** argv, int64_t started_ns);
  // For a program that could not even open its vertex: prints why, exit code.
  static int FailEarly(const Status& s);
  ~Vertex();
  Vertex(const Vertex&) = delete;
  Vertex& operator=(const Vertex&) = delete;

  const rootjob::VertexDescriptor& descriptor() const { return d_; }
  const nlohmann::json& params() const { return params_; }
  // The vertex's input pieces. A piece the root knows to be empty (a
  // producer's empty bucket, an empty partition) is left out, so tell pieces
  // apart by input(i).input (which of the stage's inputs) and .index (the
  // producer), not by position.
  size_t inputs() const { return d_.inputs.size(); }
  const rootjob::InputRef& input(size_t i) const { return d_.inputs[i]; }

  // Streams input piece `i` (every bucket of a producer, in order, when it
  // names none). A sink that returns an error stops the read at once, and
  // Read returns that error: how a program reads only part of a piece.
  Status Read(size_t i, const std::function<Status(std::span<const uint8_t>)>& sink);
  Status ReadAll(size_t i, std::string* out);

  // Buckets to write (0 for a vertex writing the job's output or nothing).
  int buckets() const { return d_.buckets; }
  bool writes_output() const { return !d_.output.empty(); }
  // Appends to bucket `bucket`, or (bucket 0) to the output partition.
  Status Write(int bucket, std::string_view bytes);
  void CountRecords(uint64_t n) { result_.records_written += n; }

  // Commits what was written (when `s` is ok), writes the result document
  // and returns the exit code.
  int Finish(const Status& s);

 private:
  explicit Vertex(rootjob::VertexDescriptor d, int64_t started_ns);
  Status Connect();
  Result<const dfs::FileStatus*> StatInput(size_t i);
  Status Commit();
  void Delay();

  rootjob::VertexDescriptor d_;
  nlohmann::json params_;
  std::string secret_;
  std::unique_ptr<ClusterConfig> config_;
  std::unique_ptr<dfs::DfsClient> dfs_;
  // By (path, partition): an input of one partition asks for that one only
  // (-1: the whole file).
  std::map<std::pair<std::string, int>, dfs::FileStatus> stats_;
  std::unique_ptr<dfs::BucketWriter> buckets_;
  bool output_open_ = false;
  bool output_done_ = false;  // another run committed the partition
  rootjob::VertexResult result_;
};

}  // namespace copse::apps

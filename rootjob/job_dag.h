// JobDag: the shape of a Dryad-style job (DESIGN.md §6) — input files split in
// partitions, and stages of vertices that read files or earlier stages'
// outputs through pointwise, all-to-all, gather or broadcast connections —
// and DagState, the state machine a root task keeps: which vertices are done,
// where their outputs live, which are ready, and what each ready vertex reads
// from where. Pure library: no I/O, no clock; the root task (copse-rootjob)
// and the simulator (sim/) both use it.
// Thread-safety: plain data; DagState is not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace copse::rootjob {

enum class Connection {
  kPointwise,  // vertex i reads item i (partition i, or upstream vertex i's output)
  kAllToAll,   // vertex i reads bucket i of every upstream vertex (or every partition)
  kGather,     // the (single) vertex reads every item
  kBroadcast,  // every vertex reads item 0
};
const char* ConnectionName(Connection c);

struct FileSpec {
  std::string name;
  int partitions = 1;
  int64_t partition_bytes = 0;
};

struct StageInput {
  bool from_file = true;  // else from an earlier stage
  int source = 0;         // index into JobDag::files or JobDag::stages
  Connection connection = Connection::kPointwise;
  // Part of each item actually read (a sampling stage reads a little of each
  // partition); 1 = all of it.
  double fraction = 1.0;
};

struct Stage {
  std::string name;  // also the program's name, e.g. "prime", "sort.partition"
  int vertices = 1;
  std::vector<StageInput> inputs;
  // Output bytes of one vertex: output_fixed_bytes + output_ratio * bytes read.
  int64_t output_fixed_bytes = 0;
  double output_ratio = 0.0;
};

struct JobDag {
  std::string name;  // instance name, e.g. "Sort40"
  std::string app;   // application, e.g. "sort"
  std::vector<FileSpec> files;
  std::vector<Stage> stages;  // topologically ordered: inputs name earlier stages only

  int TotalVertices() const;
};

// Ok when every input names an existing file or earlier stage, pointwise
// inputs match the vertex count, gather stages have one vertex, sizes are
// non-negative. kInvalidArgument names the stage and input.
Status ValidateDag(const JobDag& dag);

// One piece of a vertex's input: `bytes` that can be read from any of
// `replicas` (computer indices; several for DFS partitions, one for an
// intermediate output kept where it was written). `many_to_one`: it comes
// through a gather or all-to-all input (a reader pulls from many sources).
struct InputPiece {
  int64_t bytes = 0;
  std::vector<int> replicas;
  bool many_to_one = false;
};

struct VertexId {
  int stage = 0;
  int index = 0;
  friend bool operator==(const VertexId&, const VertexId&) = default;
  friend auto operator<=>(const VertexId&, const VertexId&) = default;
};

// The state machine of one running job.
class DagState {
 public:
  // `file_replicas[f][p]`: the computers holding partition p of file f.
  // REQUIRES: ValidateDag(dag) is ok and file_replicas matches dag.files.
  DagState(JobDag dag, std::vector<std::vector<std::vector<int>>> file_replicas);

  const JobDag& dag() const { return dag_; }
  // Vertices ready to run and not yet returned, in (stage, index) order;
  // each is returned once.
  std::vector<VertexId> TakeReady();
  // What vertex `v` reads. REQUIRES: v was returned by TakeReady().
  std::vector<InputPiece> Inputs(VertexId v) const;
  // Output bytes of `v` given the bytes it read.
  int64_t OutputBytes(VertexId v, int64_t bytes_read) const;
  // `v` finished on `computer`, writing `output_bytes` there.
  void Completed(VertexId v, int computer, int64_t output_bytes);
  bool Done() const { return done_count_ == total_; }
  int completed() const { return done_count_; }

 private:
  struct VertexState {
    bool done = false;
    bool issued = false;
    int computer = -1;
    int64_t output_bytes = 0;
  };
  bool IsReady(VertexId v) const;
  void AppendItem(const StageInput& in, int item, int consumers,
                  std::vector<InputPiece>* out) const;
  VertexState& state(VertexId v) { return vertices_[v.stage][v.index]; }
  const VertexState& state(VertexId v) const { return vertices_[v.stage][v.index]; }

  JobDag dag_;
  std::vector<std::vector<std::vector<int>>> file_replicas_;
  std::vector<std::vector<VertexState>> vertices_;
  std::vector<int> stage_done_;
  int done_count_ = 0;
  int total_ = 0;
};

}  // namespace copse::rootjob

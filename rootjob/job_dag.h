// JobDag: the shape of a Dryad-style job (docs/design.md §6) — input files split in
// partitions, and stages of vertices that read files or earlier stages'
// outputs through pointwise, all-to-all, gather or broadcast connections.
// The state machine a root task keeps over it is rootjob/job_manager.h. Pure
// library: no I/O, no clock; the root task (copse-rootjob) and the simulator
// (sim/) both use it.
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "copse/status.h"

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
// inputs match the vertex count, gather stages have one vertex, the
// all-to-all consumers of one stage have the same vertex count (its bucket
// count), sizes are non-negative. kInvalidArgument names the stage and input.
Status ValidateDag(const JobDag& dag);

// One piece of a vertex's input: `bytes` that can be read from any of
// `replicas` (computer indices; several for DFS partitions, one for an
// intermediate output kept where it was written). `many_to_one`: it comes
// through a gather or all-to-all input (a reader pulls from many sources).
// The rest names it: partition `item` of file `source`, or bucket `bucket`
// (-1: every bucket) of the output of vertex `item` of stage `source`, as
// run `version` (attempt `attempt`) of that vertex wrote it.
struct InputPiece {
  int64_t bytes = 0;
  std::vector<int> replicas;
  bool many_to_one = false;
  bool from_file = true;
  int input = 0;  // which of the stage's inputs
  int source = 0;
  int item = 0;
  int bucket = 0;
  int version = 0;
  int attempt = 0;
};

struct VertexId {
  int stage = 0;
  int index = 0;
  friend bool operator==(const VertexId&, const VertexId&) = default;
  friend auto operator<=>(const VertexId&, const VertexId&) = default;
};

}  // namespace copse::rootjob

// JobSpec: a job as a user submits it, in JSON (docs/jobs.md; docs/design.md §6):
// a name, job-level settings, and stages. A stage runs a program from the
// cluster's apps directory on each of its vertices with the stage's
// parameters; it reads DFS files (one vertex per partition, or gathered, or
// broadcast) or earlier stages' outputs (pointwise, all-to-all, gather or
// broadcast), and an output stage writes one partition of a DFS file per
// vertex.
//
// ParseJobSpec checks everything that needs no cluster: the JSON, every key
// and type, names, the stages' graph (no cycles, known stages, connections
// that fit their vertex counts) and the limits. Errors are kInvalidArgument
// and name the stage (or setting) and the problem. What needs the file
// system — input files exist, outputs do not yet, partition counts — is
// checked with the counts BuildJobDag is given.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/program_name.h"
#include "copse/status.h"
#include "rootjob/job_dag.h"

namespace copse::rootjob {

inline constexpr size_t kMaxSpecBytes = 1 << 20;  // a spec larger than 1 MiB is refused

struct SpecLimits {
  int max_vertices = 100'000;        // per job
  size_t max_bytes = kMaxSpecBytes;  // of the spec's text

  // For a spec the master accepted and stored (its normalised form, a little
  // larger than what was submitted): checked against the cluster's limits at
  // submission, it is read again (by the root, by a restarted master) without
  // them.
  static SpecLimits Stored() {
    return {std::numeric_limits<int>::max(), std::numeric_limits<size_t>::max()};
  }
};

struct InputSpec {
  std::string file;   // a DFS path, or
  std::string stage;  // an earlier stage's name
  Connection connection = Connection::kPointwise;
};

// How a stage runs a program that does not link the vertex runtime
// (docs/sdk.md "Streaming vertices"): the spec's "streaming" object.
struct StreamingSpec {
  std::string format = "text";            // "text" or "binary"
  std::string sort = "auto";              // "auto", "yes" or "no"
  std::string combiner;                   // a program each output bucket runs through; empty: none
  std::vector<std::string> range_bounds;  // a range partitioner's bounds; empty: hash
};

struct StageSpec {
  std::string name;
  std::string program;      // NAME or NAME@VERSION: the program store's, or the apps directory's
  std::string params_json;  // a JSON object, handed to the program as it was given
  int vertices = 0;         // 0: as many as its pointwise input has items
  std::vector<InputSpec> inputs;
  std::string output;  // a DFS path this stage writes (one partition per vertex), or empty
  std::optional<StreamingSpec> streaming;
};

struct PoolSettings {
  std::string name;  // empty: a pool of its own
  double weight = 1.0;
  int min_share = 0;
  bool fifo = false;
  std::optional<Duration> min_share_timeout;  // nullopt: never
};

struct JobSettings {
  int attempts = 3;                         // failed runs of a vertex before the job fails
  std::optional<Duration> vertex_timeout;   // wall-clock limit per run; nullopt: the worker's
  double duplicate_factor = 2.0;            // 0: no duplicates
  Duration duplicate_floor{30'000'000};     // a straggler runs at least this long first
  std::optional<int> min_tasks, max_tasks;  // allocation bounds (Quincy E_j, F_j)
  PoolSettings pool;                        // HFS
  Duration slot_time{0};                    // CFQ/SRPT profile; 0: estimated
};

struct JobSpec {
  std::string name;
  JobSettings settings;
  std::vector<StageSpec> stages;  // in an order where every input names an earlier stage
};

// Parses and checks a spec. `text` over kMaxSpecBytes, malformed JSON, an
// unknown key, a wrong type, a cycle, an unknown stage, a program given as a
// path, pointwise stages of different sizes, more vertices than the limit:
// kInvalidArgument naming where.
Result<JobSpec> ParseJobSpec(std::string_view text, const SpecLimits& limits = {});

// The spec as compact JSON (what the master stores and the root reads).
std::string JobSpecToJson(const JobSpec& spec);

// One input file as the name service knows it.
struct FileFacts {
  int partitions = 0;
  int64_t bytes = 0;  // the file's size
};

// The DAG of `spec` once its input files are known (`files` holds every
// file a stage reads). Fills in vertex counts taken from inputs. Errors:
// kInvalidArgument for counts that do not fit (a pointwise file input with
// a different partition count, over the vertex limit), naming the stage.
// REQUIRES: spec came from ParseJobSpec.
Result<JobDag> BuildJobDag(const JobSpec& spec, const std::map<std::string, FileFacts>& files,
                           const SpecLimits& limits = {});

// The files `spec` reads, and those it writes.
std::vector<std::string> InputFiles(const JobSpec& spec);
std::vector<std::string> OutputFiles(const JobSpec& spec);

}  // namespace copse::rootjob

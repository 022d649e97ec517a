// The sample apps' job builders (docs/design.md §6, §12; docs/apps.md): the job
// spec (rootjob/job_spec.h) `copse run APP` submits, from a few options. Each
// builder is the one definition of its app's DAG — `copse run`, the tests,
// the benchmarks and the simulator (apps/instances.h) all build their jobs
// here — together with the app's size model, which says what share of each
// input a vertex reads and how many bytes it writes, for the simulator.
//
//   prime:        count (a vertex per input partition: the primes among its
//                 integers, by the paper's naive test) -> total (one vertex,
//                 gather): one line, the number of primes.
//   wordcount:    count (a vertex per input partition: words counted and
//                 hashed into N buckets) -> sum (N vertices, all-to-all:
//                 each word's total, sorted). With one output partition the
//                 sum vertex gathers every count and writes the output; with
//                 N > 1 -> merge (one vertex, gather: the global order, cut
//                 into N runs) -> write (N vertices: output partition i).
//   sort:         sample (one vertex reading the first 1% of every input
//                 partition: S−1 split records) -> partition (a vertex per
//                 input partition, with the splits broadcast: S buckets) ->
//                 sort (S vertices, all-to-all: output partition i).
//   databasejoin: phase1 (a vertex per matching pair of partitions of the
//                 two tables: their join, in P buckets by the second join
//                 key) -> phase2 (a vertex per partition of the big table,
//                 with its bucket of every phase-1 vertex: output partition).
//   streaming:    map (a vertex per input partition: the --mapper program,
//                 streaming; its records partitioned by key into R buckets,
//                 by hash or --range bounds, through the --combiner if
//                 given) -> reduce (R vertices, all-to-all: the --reducer
//                 program on its records sorted by key; output partition i).
//   pagerank:     three iterations of phase1.i (a vertex per graph
//                 partition, with its ranks of the previous iteration:
//                 contributions in P buckets) -> phase2.i (P vertices,
//                 all-to-all: the new ranks; the last writes the output).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "copse/status.h"
#include "rootjob/job_spec.h"

namespace copse::apps {

// A megabyte as the apps' models count data: 10^6 bytes.
inline constexpr int64_t kMB = 1'000'000;

// `copse run streaming`'s programs and settings (docs/sdk.md).
struct StreamingRun {
  std::string mapper, reducer, combiner;  // NAME or NAME@VERSION
  int reducers = 0;                       // 0: --partitions, else 1
  std::string format;                     // empty: text
  std::vector<std::string> range_bounds;  // empty: hash partitioning
};

struct RunOptions {
  std::vector<std::string> inputs;  // DFS files
  // Partitions of each input (as many entries as inputs), for the builders
  // whose vertex counts depend on them (sort, databasejoin, pagerank);
  // `copse run` asks the name service.
  std::vector<int> input_partitions;
  std::string output;  // the DFS file to write
  int partitions = 0;  // the output's partitions; 0: the app's default
  std::string name;    // the job's name; empty: the app's
  StreamingRun streaming;
};

// What one vertex of a stage reads and writes, in the simulator's terms:
// output_fixed_bytes + output_ratio × bytes read, reading `input_fraction`
// of each input item (one entry per stage input).
struct StageSizes {
  std::string role;  // the program's role in the stage ("count", "phase1", ...)
  int64_t output_fixed_bytes = 0;
  double output_ratio = 0;
  std::vector<double> input_fraction;
};

struct AppJob {
  rootjob::JobSpec spec;
  std::vector<StageSizes> sizes;  // one per spec stage, in order
};

// Apps `copse run` knows, sorted.
std::vector<std::string> RunnableApps();

// The job of `app` with `options`, checked as the master would check its
// spec (rootjob::ParseJobSpec). kInvalidArgument for an unknown app or
// options it cannot take, naming the option.
Result<AppJob> BuildApp(const std::string& app, const RunOptions& options);

// The job's spec as the JSON `copse job submit` takes.
Result<std::string> BuildJobSpec(const std::string& app, const RunOptions& options);

}  // namespace copse::apps

// Job builders of the sample apps: the job spec (rootjob/job_spec.h, JSON)
// that `copse run APP` submits, from a few options (DESIGN.md §12). Each
// builder is the one definition of its app's DAG.
//
//   wordcount: count (a vertex per input partition: words counted and
//              hashed into N buckets) -> sum (N vertices, all-to-all: each
//              word's total, sorted) -> merge (one vertex, gather: the global
//              order, cut into N runs of equal line counts) -> write (N
//              vertices: output partition i). Output: `word<TAB>count` lines,
//              count descending then word ascending (byte order).
//   prime:     count (a vertex per input partition: primes among its lines'
//              integers, by trial division) -> total (one vertex, gather):
//              one line, the number of primes. One output partition.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace copse::apps {

struct RunOptions {
  std::vector<std::string> inputs;  // DFS files
  std::string output;               // the DFS file to write
  int partitions = 0;               // the output's partitions; 0: the app's default
  std::string name;                 // the job's name; empty: the app's
};

// Apps `copse run` knows.
std::vector<std::string> RunnableApps();

// The spec of `app` with `options`, as JSON. kInvalidArgument for an unknown
// app or options it cannot take.
Result<std::string> BuildJobSpec(const std::string& app, const RunOptions& options);

}  // namespace copse::apps

// `copse job submit|status|list|wait|kill|logs` and `copse run APP` (with
// `copse run streaming`, a map -> all-to-all -> reduce job of streaming
// programs): jobs
// from the command line (docs/design.md §12, docs/jobs.md). Each returns the
// process exit code (0 ok; 1 the operation failed: a job failed or was
// killed, a file is missing, the master is unreachable; 2 bad usage or bad
// input: a bad spec, an unknown program) after printing what happened. A
// submission prints the job id alone on the first stdout line; --json
// prints one JSON document on stdout and nothing else there.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"

namespace copse::client {

struct JobOptions {
  std::string spec_file;  // submit: the spec ("-": stdin)
  uint64_t job = 0;
  bool wait = false;
  bool json = false;
  std::string vertex;  // logs: "STAGE" or "STAGE[INDEX]" or "root"; empty: every run
  // run
  std::string app;
  std::vector<std::string> inputs;
  std::string output;
  int partitions = 0;
  std::string name;
  // run streaming (docs/sdk.md "Streaming vertices")
  std::string mapper, reducer, combiner;
  int reducers = 0;
  std::string format;
  std::vector<std::string> range_bounds;
  std::chrono::seconds master_wait{30};  // --master-wait
};

int JobSubmit(const ClusterConfig& config, const JobOptions& o);
int JobStatus(const ClusterConfig& config, const JobOptions& o);
int JobList(const ClusterConfig& config, const JobOptions& o);
int JobWait(const ClusterConfig& config, const JobOptions& o);
int JobKill(const ClusterConfig& config, const JobOptions& o);
int JobLogs(const ClusterConfig& config, const JobOptions& o);
int JobHistory(const ClusterConfig& config, const JobOptions& o);
int Run(const ClusterConfig& config, const JobOptions& o);

}  // namespace copse::client

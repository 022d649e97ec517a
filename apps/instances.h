// The Quincy paper's workload (§5.1, Table 3) as application instances, and
// the workload file format that lists them in submission order
// (bench/workloads/*.toml):
//
//   [[instance]]
//   name = "DatabaseJoin5"     # unique
//   app = "databasejoin"       # prime_small, prime_large, wordcount, databasejoin, sort, pagerank
//   partitions = 40
//   placement = "confine 5 r1" # input placement (dfs/placement.h modes); default "random"
//   submit_s = 0.0             # when the job arrives (seconds from the start); default 0
//   task_seconds = 12.5        # synthetic only: every task's run time
//
// An instance is one of the sample apps (apps/catalog.h builds its job: the
// same job `copse run` submits) with the paper's input sizes, which a scale
// factor shrinks: prime_small / prime_large (prime over 40,000 / 500,000
// integers a partition), wordcount (~50 MB partitions, one output
// partition), databasejoin (11.8 GB and 41.8 GB tables co-located partition
// by partition), sort (~4 GB partitions), pagerank (~1 GB partitions).
// `synthetic` is not an app: `partitions` independent tasks that read
// nothing and run task_seconds each, driven by their client (no root task;
// the CFQ experiment's job mix).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "apps/catalog.h"
#include "common/config.h"
#include "copse/status.h"
#include "rootjob/job_dag.h"

namespace copse::apps {

struct InstanceSpec {
  std::string name;
  std::string app;
  int partitions = 1;
  std::string placement = "random";
  double submit_s = 0;
  double task_seconds = 0;  // synthetic only
};

// Names accepted in InstanceSpec::app.
std::vector<std::string> InstanceKinds();

// The input files of an instance kind, as `copse gen` writes them.
struct InputModel {
  std::string app;                 // the app that runs it (prime for prime_small)
  std::vector<std::string> files;  // file names under the instance's directory
  // Bytes of one partition of each file at scale 1 (the paper's sizes) when
  // the files have `partitions` partitions.
  std::vector<int64_t> partition_bytes;
};
// kInvalidArgument for an unknown kind (or synthetic, which reads nothing).
Result<InputModel> PaperInputs(const std::string& kind, int partitions);

// The job `copse run` would submit for an instance: the app that runs it
// (prime for prime_small and prime_large), its options (inputs
// "/<name>/<file>", output `output`, WordCount's one output partition) and
// each input's facts at `scale` (partitions, bytes) for rootjob::BuildJobDag.
struct InstanceJob {
  std::string app;
  RunOptions options;
  std::map<std::string, rootjob::FileFacts> facts;
};
// kInvalidArgument as BuildInstanceDag; synthetic instances have no app job.
Result<InstanceJob> BuildInstanceJob(const InstanceSpec& instance, double scale = 1.0,
                                     const std::string& output = "");

// The DAG of one instance, from its app's builder: input files named
// "/<name>/<file>", partition sizes the paper's times `scale`, each stage
// named "<program>.<role>" (the simulator's cost model looks stages up by
// that) with the app's size model (fixed output bytes scaled too).
// kInvalidArgument for an unknown app or a bad partition count.
Result<rootjob::JobDag> BuildInstanceDag(const InstanceSpec& instance, double scale = 1.0);

// The placement mode of file `file` of an instance's DAG (dfs/placement.h
// syntax): the first file takes the instance's placement; DatabaseJoin's
// second table is co-located with the first ("colocate <first file>").
std::string FilePlacement(const InstanceSpec& instance, const rootjob::JobDag& dag, int file);

// `placement` fitted to `cluster`: an instance that names more computers than
// its rack has ("confine 5 r1" on a rack of 3) spreads over all of the rack's
// computers ("confine 3 r1"), or over the whole cluster ("random") when the
// rack has fewer computers than `replication` (0: the cluster's) replicas
// need. Any other mode, or a rack the cluster lacks, is returned as it is
// (placing it then says what is wrong).
std::string FitPlacement(const std::string& placement, const ClusterConfig& cluster,
                         int replication = 0);

// Parses a workload file's text; `origin` names it in errors.
Result<std::vector<InstanceSpec>> ParseWorkload(const std::string& text, const std::string& origin);
Result<std::vector<InstanceSpec>> LoadWorkload(const std::filesystem::path& path);

}  // namespace copse::apps

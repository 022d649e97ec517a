// The sample applications' job DAGs with the data sizes of the Quincy paper's
// workload (§5.1, Table 3), and the workload file format that lists
// application instances in submission order (bench/workloads/*.toml):
//
//   [[instance]]
//   name = "DatabaseJoin5"     # unique
//   app = "databasejoin"       # prime_small, prime_large, wordcount, databasejoin, sort, pagerank
//   partitions = 40
//   placement = "confine 5 r1" # input placement (dfs/placement.h modes); default "random"
//   submit_s = 0.0             # when the job arrives (seconds from the start); default 0
//   task_seconds = 12.5        # synthetic only: every task's run time
//
// Apps: prime_small / prime_large (one stage, 40,000 / 500,000 integers a
// partition), wordcount (count per ~50 MB partition, gather the top words),
// databasejoin (11.8 GB and 41.8 GB tables co-located partition by partition;
// phase 1 joins matching partitions into one bucket per range, phase 2 joins
// each big partition with its buckets), sort (~4 GB partitions: sample →
// range-partition → sort), pagerank (~1 GB partitions, 3 iterations of two
// phases; phase 1 reads its partition and the previous ranks, phase 2
// gathers one bucket from every phase-1 vertex), synthetic (`partitions`
// independent tasks that read nothing and run task_seconds each, driven by
// their client: no root task; the CFQ experiment's job mix).
// Thread-safety: pure functions.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"
#include "rootjob/job_dag.h"

namespace copse::rootjob {

struct InstanceSpec {
  std::string name;
  std::string app;
  int partitions = 1;
  std::string placement = "random";
  double submit_s = 0;
  double task_seconds = 0;  // synthetic only
};

// Names accepted in InstanceSpec::app.
std::vector<std::string> SampleAppNames();

// The DAG of one instance. File placements are in FileSpecPlacement().
// kInvalidArgument for an unknown app or a bad partition count.
Result<JobDag> BuildSampleJob(const InstanceSpec& instance);

// The placement mode of file `file` of an instance's DAG (dfs/placement.h
// syntax): the first file takes the instance's placement; DatabaseJoin's
// second table is co-located with the first ("colocate <first file>").
std::string FilePlacement(const InstanceSpec& instance, const JobDag& dag, int file);

// Parses a workload file's text; `origin` names it in errors.
Result<std::vector<InstanceSpec>> ParseWorkload(const std::string& text, const std::string& origin);
Result<std::vector<InstanceSpec>> LoadWorkload(const std::filesystem::path& path);

}  // namespace copse::rootjob

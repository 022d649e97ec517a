// Simulator: runs a list of application instances on a simulated cluster
// with the real scheduler (scheduler::Scheduler) making every decision
// (docs/design.md §10). One SimGrid actor plays the master and the computers:
// it feeds the scheduler the events a master would (job submitted, task
// started, completed, killed, timer) and carries out its decisions. A
// started task reads its inputs from the computers holding them — local
// reads are free, others are SimGrid flows sharing computer links and rack
// uplinks — then computes for the time the CostModel gives and writes its
// output locally. A killed (preempted) task loses its work; the bytes it had
// read still count. A job's root task holds a slot from its start until the
// job's last vertex completes. Inputs are placed by dfs/placement.h with the
// config's replication, from one generator seeded by `seed`, so every
// policy sees the same placement. Jobs arrive at their instances' submit_s.
// Synthetic jobs have no root task (their client drives them): they start
// when admitted and their tasks run task_seconds each. Deterministic: the same options give the
// same result.
//
// SimGrid allows one engine per process, so RunSimulation runs once per
// process (bench/sim runs each (policy, seed) in a child process).
// Thread-safety: not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/instances.h"
#include "common/config.h"
#include "copse/status.h"
#include "sim/cost_model.h"

namespace copse::sim {

struct SimOptions {
  ClusterConfig config;       // topology, network, replication; [scheduler] is replaced
  SchedulerConfig scheduler;  // policy name and parameters
  int max_running_jobs = 10;  // K
  uint64_t seed = 1;
  std::string flow_solver = kSchedulerSolver;
  CostModel costs = PaperCostModel();
  double scale = 1.0;  // the instances' input sizes: the paper's times this (apps/instances.h)
  double max_time_s = 400'000;     // give up (kDeadlineExceeded) past this simulated time
  double utilisation_step_s = 30;  // sampling period of the utilisation trace
  // Job profiles for CFQ and SRPT: kAccurate gives synthetic jobs their true
  // slot time (tasks × task_seconds) and every job its task count; kNaive
  // gives only the task count (the scheduler estimates the slot time).
  enum class Profiles { kNone, kAccurate, kNaive };
  Profiles profiles = Profiles::kAccurate;
};

struct JobResult {
  std::string name;
  double submit_s = 0;
  double start_s = -1;      // its root task started
  double finish_s = -1;     // its last vertex completed
  int vertices = 0;         // worker vertices in its DAG (a synthetic job's width)
  int tasks = 0;            // worker task attempts started
  int preempted = 0;        // attempts killed
  double slot_seconds = 0;  // worker slot time used (killed attempts included)
  double max_task_s = 0;    // longest worker attempt
  int64_t local_bytes = 0;
  int64_t rack_bytes = 0;
  int64_t core_bytes = 0;
  // Of the bytes above, those read through gather or all-to-all inputs (a
  // reader pulls from many sources: shuffles and gathers), those of them read
  // across the core, and the part of them that would have crossed the core
  // even had each reader run in the rack holding most of its such input.
  int64_t many_to_one_bytes = 0;
  int64_t many_to_one_core_bytes = 0;
  int64_t many_to_one_floor_core_bytes = 0;
};

struct RunResult {
  std::string policy;
  uint64_t seed = 0;
  int slots = 0;
  double makespan_s = 0;
  std::vector<JobResult> jobs;  // in workload order
  // Busy worker slots per job, sampled every utilisation_step_s: row t holds
  // one count per job.
  std::vector<std::vector<int>> utilisation;
};

// Runs the workload to completion. Errors: a bad option or workload
// (kInvalidArgument), a scheduler error, or no progress (kDeadlineExceeded).
// REQUIRES: called at most once per process.
Result<RunResult> RunSimulation(const SimOptions& options,
                                const std::vector<apps::InstanceSpec>& workload);

}  // namespace copse::sim

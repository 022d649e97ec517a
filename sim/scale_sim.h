// Scale simulator: placement latency of the Quincy policy at Google-cluster
// scale (Firmament OSDI'16 §7.2: 12,500 computers, ~150,000 tasks at ~90%
// slot utilisation). It drives the real scheduler::Scheduler with synthetic
// jobs and CHARGES each scheduling round's measured wall time to simulated
// time: a round that starts at simulated time T and takes W of wall time
// hands out its placements at T + W, and the next round starts no earlier
// than T + W. A task's placement latency is the simulated time from its
// submission (its job's arrival) to the moment its placement takes effect.
//
// Network-less: unlike sim/simulator.h there is no SimGrid network (at
// 12,500 computers SimGrid's full route table would hold ~78M routes).
// Tasks only occupy a slot for their duration; their inputs exist only as
// locality preferences (three replicas on random computers) that shape the
// flow network's preference arcs, never as transfers.
//
// Workload (all from one generator seeded by `seed`, so every solver sees
// the same arrivals and durations): the cluster starts with
// min(`utilisation`, 1) × slots tasks already running (adopted via TaskAdopted,
// grouped into jobs of `mean_tasks_per_job` tasks on average); task
// durations are exponential with mean `mean_task_s` (the remaining time of
// a running task is, by memorylessness, exponential too, and so is the age
// it is adopted with: θ for the preemptive policies, drawn from a second
// generator so that the workload does not depend on it); new jobs arrive
// as a Poisson stream whose task rate keeps the utilisation steady
// (utilisation × slots / mean_task_s tasks per second). All of a job's tasks
// are submitted when it arrives; a job finishes when its last task does.
//
// With ScaleOptions::burst_tasks, one extra job arrives at burst_at_s with
// every input in the first burst_racks racks.
//
// The run stops after `max_rounds` rounds or `max_time_s` of simulated time
// (the arrival stream is endless), whichever comes first.
//
// Every decision is checked: a start must name a waiting task of this run
// and a computer with a free slot (by the simulator's own slot count);
// violations are counted, never silently accepted.
// Thread-safety: none. Unlike RunSimulation it may run several times per
// process (no SimGrid engine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "copse/status.h"

namespace copse::sim {

struct ScaleOptions {
  ClusterConfig config;       // topology (computers, racks, slots); network unused
  SchedulerConfig scheduler;  // policy and parameters (a Quincy policy for flow solvers)
  std::string flow_solver = kSchedulerSolver;
  uint64_t seed = 1;
  // Offered load: arrivals bring utilisation x slots / mean_task_s tasks per
  // second; min(utilisation, 1) x slots run at time 0. Above 1 the cluster
  // is oversubscribed and a queue builds (Firmament §7.3).
  double utilisation = 0.9;
  double mean_task_s = 600;         // mean task duration
  double mean_tasks_per_job = 80;   // ~150,000 tasks in ~1,800 jobs (Firmament §3 fn. 2)
  int64_t input_bytes = 1ll << 30;  // per task, for the locality preferences
  // A burst (the flow benchmark's (d)): at burst_at_s one job of
  // burst_tasks tasks whose inputs all lie in the first burst_racks racks
  // (three replicas on random computers there). Under the fair-share
  // regimes, whenever every task fits it is forced to run, displacing the
  // running tasks in those racks or running elsewhere. 0 tasks: none.
  int burst_tasks = 0;
  double burst_at_s = 10;
  int burst_racks = 4;
  int max_rounds = 100;
  double max_time_s = 300;
  // Measures each round (Schedule call). Required.
  const Clock* wall = nullptr;
};

struct ScaleResult {
  std::string policy;
  std::string solver;
  uint64_t seed = 0;
  int computers = 0;
  int slots = 0;
  int initial_tasks = 0;  // running at time 0
  int rounds = 0;         // Schedule calls that ran
  double sim_time_s = 0;  // simulated time at the end
  int jobs_arrived = 0;   // after time 0
  int jobs_finished = 0;
  int tasks_submitted = 0;  // after time 0
  int tasks_placed = 0;     // starts (each has a latency)
  int tasks_completed = 0;
  int tasks_killed = 0;
  int tasks_waiting_at_end = 0;
  int violations = 0;           // invalid decisions (must be 0)
  double mean_utilisation = 0;  // busy slots / slots, averaged over rounds
  // The burst (ScaleOptions::burst_tasks > 0): how many of its tasks were
  // placed by the end, the wall time of the first round that saw it, and
  // the simulated time from its arrival until its last task was first
  // placed (-1: not all were, or no round saw it).
  int burst_tasks = 0;
  int burst_placed = 0;
  double burst_round_ms = -1;
  double burst_all_placed_s = -1;
  std::vector<double> round_ms;    // wall time of every round
  std::vector<double> latency_ms;  // placement latency of every start, in start order
};

// Runs the workload. Errors: a bad option (kInvalidArgument) or a
// scheduler error.
Result<ScaleResult> RunScaleSimulation(const ScaleOptions& options);

}  // namespace copse::sim

// QuincyWorkload: an evolving Quincy scheduling graph for the solver
// benchmarks and tests, built by the scheduler's own code: the network is a
// scheduler::QuincyGraph (the Quincy appendix's Figure 4 as the policy keeps
// it), every task's costs come from ComputeQuincyCosts, its locality from
// rootjob::ComputeLocality over synthetic block replicas, and each job's
// allocation bounds E_j, F_j from scheduler::QuincyBounds under the
// configured fairness regime (QFP, the scheduler's default, unless the spec
// says otherwise). So whenever every task fits, every regime forces all of
// them to run, as the scheduler does; above that, QF/QFP run each job at
// exactly its fair share.
//
// Each Step() advances the clock by one second (every waiting task's wait
// cost rises, every running task's continuation cost falls), finishes a
// share of the running tasks and submits as many new ones (and, at the
// step spec.burst_step, the burst job if the spec has one), and updates the graph in
// place through FlowGraph's change-recording edits — with the clock hint,
// one shift of two cost groups (QuincyGraph::ShiftClock) for the tasks whose
// state did not change, and each other task's costs set anew. ApplySolution() reads
// placements from a solved flow (Firmament Listing 1) and marks tasks
// running or waiting. Deterministic for a given spec and seed.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "scheduler/fair_share.h"
#include "scheduler/flow/flow_graph.h"
#include "scheduler/flow/solver.h"
#include "scheduler/quincy_costs.h"
#include "scheduler/quincy_graph.h"
#include "scheduler/topology.h"

namespace copse::bench {

struct QuincyScaleSpec {
  std::string name;
  int racks = 8;
  int computers = 243;
  int slots_min = 1, slots_max = 1;
  int jobs = 10;
  int tasks = 1000;                // worker tasks at the start
  double initially_running = 1.0;  // share of tasks placed before the first solve (slots allowing)
  double churn = 0.01;             // share of tasks finishing and arriving per step
  int burst_tasks = 0;             // a job of this many tasks arrives in step burst_step...
  int burst_racks = 4;             // ...with all its data in this many racks
  int burst_step = 1;              // 1: the first step, the first solve after the cold one
  scheduler::QuincyRegime regime = scheduler::QuincyRegime::kQFP;
  // Pass the clock through the graph's cost groups (QuincyGraph::ShiftClock)
  // rather than as every task's own cost change; the costs are the same.
  bool clock_hint = true;
};

// Scales (a)-(e) of the issue; "t" and "tburst" are tiny ones for tests.
// kInvalidArgument for any other name.
Result<QuincyScaleSpec> ScaleSpec(const std::string& name);
// "Q", "QP", "QF" or "QFP"; kInvalidArgument otherwise.
Result<scheduler::QuincyRegime> ParseRegime(const std::string& name);

class QuincyWorkload {
 public:
  QuincyWorkload(const QuincyScaleSpec& spec, uint64_t seed,
                 scheduler::QuincyCostParams params = {});

  flow::FlowGraph& graph() { return quincy_->graph(); }
  const flow::FlowGraph& graph() const { return quincy_->graph(); }
  const scheduler::QuincyGraph& quincy() const { return *quincy_; }

  // Marks tasks running where the flow places them and waiting otherwise.
  void ApplySolution(const flow::FlowSolution& solution);
  // One second passes: churn, burst (in spec.burst_step only), costs and bounds.
  void Step();

  int running_tasks() const { return running_; }
  int live_tasks() const { return static_cast<int>(live_.size()); }
  int total_slots() const { return total_slots_; }
  // Tasks of the burst job, and how many of them the last ApplySolution placed.
  int burst_tasks() const;
  int burst_running() const;

 private:
  struct Task {
    scheduler::JobId job = 0;
    scheduler::TaskLocality locality;
    scheduler::TaskTimes times;
    scheduler::ComputerId running_on = scheduler::kNoComputer;
    scheduler::ComputerId assigned = scheduler::kNoComputer;
    int live_pos = -1;
    bool stale = true;  // its costs are set in full at the next Refresh
  };
  struct Job {
    scheduler::TaskId root = scheduler::kNoTask;
    scheduler::ComputerId root_computer = scheduler::kNoComputer;
    int tasks = 0;
    int running = 0;
  };

  void BuildCluster();
  scheduler::JobId AddJob(scheduler::ComputerId root_computer);
  scheduler::TaskLocality MakeLocality(int64_t bytes, const std::vector<int>& racks);
  void AddTask(scheduler::JobId job, bool burst);
  void RemoveTask(scheduler::TaskId t);
  void SetRunning(scheduler::TaskId t, scheduler::ComputerId c);
  void PlaceInitially();
  // Every task's costs for its current state and times, and the bounds.
  void Refresh();

  QuincyScaleSpec spec_;
  scheduler::QuincyCostParams params_;
  std::mt19937_64 rng_;
  scheduler::Topology topology_;
  std::unique_ptr<scheduler::QuincyGraph> quincy_;
  std::vector<std::vector<int>> rack_computers_;
  std::vector<int> rack_of_;
  std::vector<int> free_slots_;
  std::vector<Job> jobs_;                // JobId = index
  std::vector<Task> tasks_;              // TaskId = index (roots have an empty entry)
  std::vector<scheduler::TaskId> live_;  // worker tasks in the graph
  std::vector<double> job_weight_;
  scheduler::JobId burst_job_ = -1;
  int running_ = 0;
  int total_slots_ = 0;
  int steps_ = 0;
  // The clock hint is exact when its step (scheduler::ClockQuantum) divides
  // a second: then these are every tick's shifts.
  bool hint_ = false;
  int64_t wait_tick_ = 0, run_tick_ = 0;
};

}  // namespace copse::bench

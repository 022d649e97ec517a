// QuincyWorkload: an evolving Quincy scheduling graph (Quincy appendix,
// Figure 4) for the solver benchmarks and tests, with costs from the one
// Quincy cost function (scheduler/quincy_costs.h) in DESIGN.md §5 units.
//
// Nodes: a sink S, a cluster aggregator X, a rack aggregator per rack, a
// node per computer (capacity = its slots), per job an unscheduled node U_j
// and a root task pinned to a computer, and a node per worker task with arcs
// to U_j (wait cost), X (worst-case data cost), its preferred racks and
// computers, and the computer it runs on (cost falling with running time).
// Fairness as Quincy's unfair-with-preemption policy: E_j = 1, F_j = N_j.
//
// Each Step() advances the clock by one second (every waiting task's wait
// cost rises, every running task's continuation cost falls), finishes a
// share of the running tasks and submits as many new ones, and updates the
// graph in place through FlowGraph's change-recording edits. ApplySolution()
// reads placements from a solved flow (Firmament Listing 1) and marks tasks
// running or waiting. Deterministic for a given spec and seed.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "scheduler/flow/flow_graph.h"
#include "scheduler/flow/solver.h"
#include "scheduler/quincy_costs.h"

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
  int burst_tasks = 0;             // a job of this many tasks arrives in the first step...
  int burst_racks = 3;             // ...with all its data in this many racks
};

// Scales (a)-(e) of the issue; "t" is a tiny one for tests.
// REQUIRES: name is one of a, b, c, d, e, t.
QuincyScaleSpec ScaleSpec(const std::string& name);

class QuincyWorkload {
 public:
  QuincyWorkload(const QuincyScaleSpec& spec, uint64_t seed,
                 scheduler::QuincyCostParams params = {});

  flow::FlowGraph& graph() { return graph_; }
  const flow::FlowGraph& graph() const { return graph_; }

  // Marks tasks running where the flow places them and waiting otherwise.
  void ApplySolution(const flow::FlowSolution& solution);
  // One second passes: churn, burst (first step only), cost updates.
  void Step();

  int running_tasks() const { return running_; }
  int live_tasks() const { return static_cast<int>(live_.size()); }
  int total_slots() const { return total_slots_; }

 private:
  struct Computer {
    int rack;
    int slots;
    flow::NodeId node;
  };
  struct Job {
    flow::NodeId unscheduled;
    flow::ArcId unscheduled_arc;
    flow::NodeId root;
    flow::ArcId root_arc;
    int root_computer = -1;  // -1 until the root is placed (its arc goes to X)
    int workers = 0;
  };
  struct Task {
    int job = -1;
    flow::NodeId node = flow::kNoId;
    scheduler::TaskLocality locality;
    scheduler::TaskTimes times;
    int running_on = -1;              // computer index
    int assigned = -1;                // computer from the last ApplySolution
    std::vector<flow::ArcId> arcs;    // U, X, racks..., computers...
    flow::ArcId extra = flow::kNoId;  // arc to a non-preferred computer it runs on
    int live_pos = -1;
  };

  void BuildCluster();
  int AddJob(int root_computer);
  scheduler::TaskLocality MakeLocality(int64_t bytes, const std::vector<int>& racks);
  int AddTask(int job, bool burst);
  void RemoveTask(int t);
  void UpdateJobArcs(int j);
  void UpdateTaskCosts(Task& t);
  void SetRunning(int t, int computer);
  void PlaceInitially();

  QuincyScaleSpec spec_;
  scheduler::QuincyCostParams params_;
  std::mt19937_64 rng_;
  flow::FlowGraph graph_;
  flow::NodeId sink_ = 0, cluster_ = 0;
  std::vector<flow::NodeId> rack_nodes_;
  std::vector<std::vector<int>> rack_computers_;
  std::vector<Computer> computers_;
  std::vector<int> free_slots_;
  std::vector<Job> jobs_;
  std::vector<Task> tasks_;
  std::vector<int> free_tasks_;
  std::vector<int> live_;
  std::vector<int> task_of_node_;  // NodeId -> task index or -1
  std::vector<int> root_of_node_;  // NodeId -> job index or -1
  std::vector<flow::NodeId> machine_nodes_;
  std::vector<double> job_weight_;
  int64_t sink_demand_ = 0;
  int running_ = 0;
  int total_slots_ = 0;
  int steps_ = 0;
};

}  // namespace copse::bench

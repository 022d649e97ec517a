// QuincyGraph: the scheduling flow network of the Quincy appendix (Figure 4),
// kept up to date edit by edit so that the flow layer's incremental solver
// can start from the previous solution (Firmament §5.2).
//
//   r_j   root task of job j, supply 1; one arc (cap 1, cost 0) to C_m when
//         the root runs on m, else to X — plus, while it waits, an arc to S
//         with a prohibitive cost (see kRootWaitCost below);
//   w     worker task, supply 1; arcs (cap 1) to U_j (cost υ), X (α), each
//         preferred rack R_l (ρ), each preferred computer C_m (γ), and the
//         computer it runs on when that is not preferred (γ = d* − p*);
//   U_j   unscheduled node, supply F_j − N_j; arc to S with cap F_j − E_j;
//   X     cluster aggregator; arc to each R_l with cap = the rack's slots;
//   R_l   rack aggregator; arc to each of its C_m with cap = its slots;
//   C_m   computer; arc to S with cap = its slots (0 while down; slots whose
//         task is being killed are not counted);
//   S     sink, supply −(Σ_j F_j + number of roots).
// Costs come from the one Quincy cost function (scheduler/quincy_costs.h).
// A running task that may not be preempted (policies Q and QF) keeps all its
// arcs but every one except the arc to its computer gets capacity 0, so the
// policies differ in capacities (and the U_j/S supplies that encode E_j)
// only.
//
// The appendix assumes a free computer for every root; when none exists and
// running tasks may not be preempted the network would have no feasible
// flow, so a waiting root also has an arc straight to S costing
// kRootWaitCost (3Ω): it is taken only when placing the root is impossible
// or would evict a task whose eviction costs more than that.
//
// Explanations read the last solution against the graph it solved, while
// the graph keeps changing between rounds (the round's own starts and kills,
// events). After each solve the policy calls Checkpoint(); from then on the
// first edit of an arc, a node's supply, a task's arcs or a job's bounds
// keeps what it was at the checkpoint (a handful of edits per event), and
// the Solved*() accessors answer as of the checkpoint: arcs and nodes added
// since are left out, removed ones kept. The flow layer does not reuse a
// removed id before the next commit, and the policy commits only right
// after a solve, so a solution's ids keep naming the same things. Suspend()
// (when a round begins) drops the record.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "scheduler/events.h"
#include "scheduler/flow/flow_graph.h"
#include "scheduler/flow/solver.h"
#include "scheduler/quincy_costs.h"
#include "scheduler/topology.h"

namespace copse::scheduler {

class QuincyGraph {
 public:
  // Where a task's flow goes, read from a solution.
  struct Route {
    enum class Via { kUnscheduled, kCluster, kRack, kComputer } via = Via::kUnscheduled;
    RackId rack = -1;                   // kRack
    ComputerId computer = kNoComputer;  // kComputer: the computer its own arc reaches
  };

  QuincyGraph(const Topology& topology, const QuincyCostParams& params);
  QuincyGraph(const QuincyGraph&) = delete;
  QuincyGraph& operator=(const QuincyGraph&) = delete;

  const flow::FlowGraph& graph() const { return g_; }
  flow::FlowGraph& graph() { return g_; }
  const QuincyCostParams& params() const { return params_; }
  int64_t root_wait_cost() const { return 3 * params_.max_cost_milli; }

  // Slots of `c` that tasks may be placed in (0 while down).
  void SetComputerCapacity(ComputerId c, int slots);
  int computer_capacity(ComputerId c) const { return capacity_[c]; }

  void AddJob(JobId job);
  // REQUIRES: the job's tasks and root were removed.
  void RemoveJob(JobId job);
  bool HasJob(JobId job) const { return jobs_.count(job) != 0; }
  // E_j and F_j; N_j is the number of the job's task nodes.
  // REQUIRES: 0 <= e <= f <= N_j.
  void SetJobBounds(JobId job, int64_t e, int64_t f);
  int64_t job_tasks(JobId job) const { return jobs_.at(job).tasks; }

  void AddRoot(JobId job, TaskId root);
  void RemoveRoot(JobId job);
  // The computer the root runs on, or kNoComputer while it waits.
  void SetRootComputer(JobId job, ComputerId c);

  void AddTask(TaskId task, JobId job, const TaskLocality& locality);
  void RemoveTask(TaskId task);
  bool HasTask(TaskId task) const { return tasks_.count(task) != 0; }
  // The computer the task runs on, or kNoComputer while it waits.
  void SetTaskComputer(TaskId task, ComputerId c);
  // Costs from ComputeQuincyCosts for the task's current locality/running state.
  void SetTaskCosts(TaskId task, const QuincyArcCosts& costs);
  // The time-dependent costs alone, between state changes: υ of a waiting
  // task, and the cost of the arc to the computer a placed task runs on.
  void SetWaitCost(TaskId task, int64_t cost);
  // REQUIRES: the task has a computer (SetTaskComputer).
  void SetRunningCost(TaskId task, int64_t cost);
  // υ as the graph holds it.
  int64_t wait_cost(TaskId task) const { return g_.cost(tasks_.at(task).unscheduled); }
  // The arc to the computer the task runs on (kNoId while it waits); it
  // changes only with SetTaskComputer.
  flow::ArcId running_arc(TaskId task) const { return RunningArc(tasks_.at(task)); }
  // Whether a running task may be moved or preempted (capacities 1) or not (0).
  void SetTaskMovable(TaskId task, bool movable);

  // The clock hint (FlowGraph cost groups): a clocked task's time-dependent
  // cost — υ while it waits, the cost of the arc to its computer while it
  // runs — moves with ShiftClock() from its value now, across state
  // changes too, until set again; a solver that knows groups then skips
  // the change of every clocked task. A waiting task must be unclocked
  // before its υ reaches the cap Ω (ComputeQuincyCosts caps it; a shift
  // does not). Tasks start unclocked.
  void SetTaskClocked(TaskId task, bool clocked);
  // Adds `wait` to υ of every clocked waiting task and `run` to the running
  // cost of every clocked running task (ω and −1 milli-unit per second passed).
  void ShiftClock(int64_t wait, int64_t run);

  // Keeps the sink's supply equal to minus everything else's.
  void BalanceSink();

  // Task (or root) node → task id, for placement extraction.
  const std::vector<uint8_t>& is_task() const { return is_task_; }
  TaskId task_of_node(flow::NodeId n) const { return node_task_[n]; }
  const std::vector<flow::NodeId>& computer_nodes() const { return computer_node_; }
  ComputerId computer_of_node(flow::NodeId n) const { return node_computer_[n]; }
  flow::NodeId task_node(TaskId task) const;
  // How the task's flow leaves its node in `flow`.
  Route RouteOf(TaskId task, const std::vector<int64_t>& flow) const;
  // Flow into C_m and its arc's capacity; flow and capacity of X → R_l.
  int64_t ComputerInflow(ComputerId c, const std::vector<int64_t>& flow) const;
  int64_t RackSpare(RackId r, const std::vector<int64_t>& flow) const;
  // Flow on X → R_l, and on R_l → C_m (tasks reaching C_m through its rack).
  int64_t ClusterToRackFlow(RackId r, const std::vector<int64_t>& flow) const {
    return flow[rack_arc_[r]];
  }
  int64_t RackToComputerFlow(ComputerId c, const std::vector<int64_t>& flow) const {
    return flow[computer_rack_[c]];
  }

  // ---- The graph as of the last checkpoint (explanations) ----
  enum class ArcTo : uint8_t { kUnscheduled, kCluster, kRack, kComputer, kSink };
  struct SolvedArc {
    flow::ArcId arc = flow::kNoId;
    flow::NodeId head = flow::kNoId;
    ArcTo to = ArcTo::kCluster;
    int32_t id = -1;       // the rack (kRack) or computer (kComputer)
    bool running = false;  // to the computer the task ran on
    int64_t cost = 0;
    int64_t capacity = 0;
  };
  struct SolvedTask {
    JobId job = 0;
    bool root = false;
    flow::NodeId node = flow::kNoId;
    ComputerId running = kNoComputer;  // where it ran (kNoComputer: waiting)
    std::vector<SolvedArc> arcs;       // workers: U_j, X, racks, computers, the extra one
  };
  struct SolvedJob {
    JobId job = 0;
    flow::NodeId unscheduled = flow::kNoId;
    flow::ArcId to_sink = flow::kNoId;
    int64_t e = 0, f = 0, tasks = 0;  // E_j, F_j, N_j
    int64_t supply = 0;               // of U_j: F_j - N_j
    int64_t to_sink_capacity = 0;     // F_j - E_j
  };

  // Starts a record of the graph as it is now (call right after a solve and
  // CommitChanges()). Suspend() stops and forgets it.
  void Checkpoint();
  void Suspend();
  bool checkpointed() const { return journal_; }
  // The task's (or root's) node and arcs at the checkpoint; nullopt when it
  // had no node then (or there is no checkpoint).
  std::optional<SolvedTask> SolvedTaskOf(TaskId task) const;
  // Every task and root that had a node at the checkpoint, removed ones
  // included, in no particular order.
  void ForEachSolvedTask(const std::function<void(TaskId, const SolvedTask&)>& f) const;
  std::optional<SolvedJob> SolvedJobOf(JobId job) const;
  std::vector<SolvedJob> SolvedJobs() const;  // by job id
  int64_t SolvedCost(flow::ArcId a) const;
  int64_t SolvedCapacity(flow::ArcId a) const;
  int64_t SolvedSupply(flow::NodeId n) const;
  flow::NodeId sink_node() const { return sink_; }
  flow::NodeId cluster_node() const { return cluster_; }
  flow::NodeId rack_node(RackId r) const { return rack_node_[r]; }
  flow::ArcId cluster_rack_arc(RackId r) const { return rack_arc_[r]; }
  flow::ArcId rack_computer_arc(ComputerId c) const { return computer_rack_[c]; }
  flow::ArcId computer_sink_arc(ComputerId c) const { return computer_sink_[c]; }

 private:
  struct Job {
    flow::NodeId unscheduled = flow::kNoId;
    flow::ArcId to_sink = flow::kNoId;
    flow::NodeId root = flow::kNoId;
    flow::ArcId root_arc = flow::kNoId;
    flow::ArcId root_wait = flow::kNoId;  // r_j → S while the root waits
    TaskId root_task = kNoTask;
    int64_t tasks = 0;  // N_j
    int64_t e = 0, f = 0;
  };
  struct Task {
    JobId job = 0;
    flow::NodeId node = flow::kNoId;
    flow::ArcId unscheduled = flow::kNoId;
    flow::ArcId cluster = flow::kNoId;
    std::vector<flow::ArcId> racks;      // in locality.racks order
    std::vector<flow::ArcId> computers;  // in locality.computers order
    std::vector<RackId> rack_ids;
    std::vector<ComputerId> computer_ids;
    ComputerId running = kNoComputer;
    flow::ArcId extra = flow::kNoId;  // to `running` when it is not preferred
    bool movable = true;
    bool clocked = false;
  };

  void SetCost(flow::ArcId a, int64_t cost);
  void SetCap(flow::ArcId a, int64_t cap);
  void SetSupply(flow::NodeId n, int64_t supply);
  void SetGroup(flow::ArcId a, flow::GroupId group);
  void ApplyClock(const Task& t);
  // How far the clock moved arc a's cost since the checkpoint.
  int64_t ClockSinceCheckpoint(flow::ArcId a) const;
  // Keep the checkpoint's view of an arc, task or job before editing it.
  void KeepArc(flow::ArcId a);
  void KeepTask(TaskId task);
  void KeepJob(JobId job);
  SolvedArc ViewArc(flow::ArcId a, ArcTo to, int32_t id, bool running) const;
  SolvedTask ViewTask(TaskId task) const;  // as it is now, with checkpoint values
  SolvedJob ViewJob(JobId job) const;
  void MarkNode(flow::NodeId n, TaskId task);
  void UnmarkNode(flow::NodeId n);
  flow::ArcId RunningArc(const Task& t) const;
  void ApplyMovable(Task& t);

  // A copy: the policy outlives the Topology it was created from (the
  // Scheduler moves that into its ClusterState).
  const Topology topology_;
  QuincyCostParams params_;
  flow::FlowGraph g_;
  flow::NodeId sink_, cluster_;
  std::vector<flow::NodeId> rack_node_;
  std::vector<flow::ArcId> rack_arc_;  // X → R_l
  std::vector<flow::NodeId> computer_node_;
  std::vector<flow::ArcId> computer_sink_;  // C_m → S
  std::vector<flow::ArcId> computer_rack_;  // R_l → C_m
  std::vector<int> capacity_;
  std::vector<int64_t> rack_capacity_;
  std::unordered_map<JobId, Job> jobs_;
  std::unordered_map<TaskId, Task> tasks_;
  std::unordered_map<TaskId, JobId> roots_;  // root task → job
  std::vector<uint8_t> is_task_;
  std::vector<TaskId> node_task_;
  std::vector<ComputerId> node_computer_;
  int64_t sink_demand_ = 0;
  flow::GroupId wait_group_ = flow::kNoGroup, run_group_ = flow::kNoGroup;
  // The checkpoint's view of what changed since (see the top comment).
  bool journal_ = false;
  std::unordered_map<flow::ArcId, std::pair<int64_t, int64_t>> arc_was_;  // cost, capacity
  std::unordered_map<flow::NodeId, int64_t> supply_was_;
  std::unordered_map<TaskId, SolvedTask> task_was_;
  std::unordered_map<JobId, SolvedJob> job_was_;
  int64_t wait_offset_was_ = 0, run_offset_was_ = 0;  // the groups' offsets then
};

}  // namespace copse::scheduler

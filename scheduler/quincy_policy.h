// QuincyPolicy: the flow-based schedulers of Quincy §4 and the appendix.
// Every change of the cluster state edits the flow network (QuincyGraph) in
// place; a round brings the time-dependent costs (wait cost υ = ων of
// waiting tasks, continuation cost d* − θ of running ones) and the
// allocation bounds E_j, F_j up to date, solves min-cost flow with the flow
// layer's incremental solver, reads placements from the flow (Firmament
// Listing 1) and turns the difference from the current assignment into
// start and kill decisions. Rounds run after salient events (a task is
// submitted, ends, is re-queued; a job or computer comes or goes) and on a
// timer, because costs change with time (§4.2).
//
// Fairness regimes, by capacities alone (§4.3):
//   Q    no fairness, no preemption: E_j = 1, F_j = N_j (E_j = F_j = N_j when
//        all tasks fit), running tasks keep only their arc to their computer;
//   QP   the same with preemption: running tasks keep every arc;
//   QF   fair shares A_j (§3.3), raised to what a job already runs, others
//        shrunk in proportion; E_j = F_j = A_j; no preemption;
//   QFP  E_j = F_j = A_j with preemption;
//   QFPX QFP with ξ = 20 by default.
// Bounds given with a job (min_tasks, max_tasks) narrow the regime's. When
// lower bounds cannot all be met without preempting (Q, QF), the most
// recently admitted jobs' lower bounds are lowered first.
//
// Placements are read from the flow by handing each computer's units of
// flow back to the tasks that sent them (Firmament Listing 1), specialised
// to this graph's three levels: a task whose flow reaches a computer over
// its own arc runs there; the tasks whose flow went through a rack node R_l
// or the cluster node X share the computers that R_l's arcs fed. Among
// those, a task that already runs on such a computer keeps it (the flow is
// indifferent between them, and keeping it avoids a kill); the rest take the
// remaining computers in id order.
//
// Between state changes only the time-dependent costs move (υ of waiting
// tasks, d* − θ of running ones), so a round updates those two arcs per
// task and recomputes a task's full set of costs only after it changed
// state.
//
// Explanations (Describe, Explain, FlowGraph; quincy_explain.cc) read the
// last solved round: its flow and node potentials, against the graph as it
// was at that solve (QuincyGraph's checkpoint). A node's price is its
// potential minus the sink's: what sending one more unit from it to the
// sink costs at the optimum. A task changed since (submitted, re-queued)
// has no prices until the next round.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "scheduler/fair_share.h"
#include "scheduler/flow/solver.h"
#include "scheduler/policy.h"
#include "scheduler/quincy_costs.h"
#include "scheduler/quincy_graph.h"

namespace copse::scheduler {

struct QuincyOptions {
  QuincyRegime regime = QuincyRegime::kQFP;
  QuincyCostParams costs;
  Duration round_interval{1'000'000};
  std::string solver = kSchedulerSolver;
  const Clock* stats_clock = nullptr;  // times round phases; may be null
  // The clock hint ([scheduler] clock_hint = 1; QuincyGraph::ShiftClock):
  // between its state changes a task's wait or running cost moves with a
  // clock read in steps of ClockQuantum(costs) — two cost groups shifted once
  // a round instead of a change to every task — so it may lag the exact
  // cost by up to a step's worth (at the default ω and its 2 ms step, a
  // milli-unit of wait cost, two of running cost). Off by default: only the
  // leaf solver (incremental_leaf) gains from it.
  bool clock_hint = false;
};

// What the last round did and how long its phases took (the times are zero
// without a stats clock: the policy reads no clock of its own).
struct QuincyRoundStats {
  uint64_t rounds = 0;
  Duration update{0};   // costs, capacities, bounds
  Duration solve{0};    // min-cost flow
  Duration extract{0};  // placements and decisions
  uint32_t nodes = 0, arcs = 0;
  size_t changes = 0;  // graph edits since the previous round
  int64_t cost = 0;
  size_t starts = 0, kills = 0;
};

class QuincyPolicy final : public Policy {
 public:
  static Result<std::unique_ptr<QuincyPolicy>> Create(std::string name, const Topology& topology,
                                                      QuincyOptions options);

  std::string_view name() const override { return name_; }
  void Observe(const ClusterState& state, const Change& change, Timestamp now) override;
  Status Schedule(const ClusterState& state, Timestamp now, std::vector<Decision>* out) override;
  std::optional<Timestamp> NextWakeup(const ClusterState& state) const override;
  void Describe(const ClusterState& state, Timestamp now, nlohmann::json* out) const override;
  void LastRound(nlohmann::json* out) const override;
  void Explain(const ClusterState& state, const TaskInfo& task, Timestamp now,
               nlohmann::json* out) const override;
  bool FlowGraph(const ClusterState& state, nlohmann::json* out) const override;

  // Switches the fairness regime; the next round changes capacities only.
  void set_regime(QuincyRegime regime);
  QuincyRegime regime() const { return options_.regime; }
  // A round's first phase: brings costs, capacities and bounds up to date
  // for `now` without solving (for tests that inspect the network).
  void UpdateGraph(const ClusterState& state, Timestamp now);
  const QuincyGraph& graph() const { return graph_; }
  const QuincyRoundStats& stats() const { return stats_; }
  // E_j and F_j as of the last UpdateGraph.
  std::pair<int64_t, int64_t> bounds(JobId job) const;

 private:
  QuincyPolicy(std::string name, const Topology& topology, QuincyOptions options,
               std::unique_ptr<flow::FlowSolver> solver);

  bool preemptive() const;
  bool fair() const;
  void UpdateCapacities(const ClusterState& s);
  void UpdateCosts(const ClusterState& s, Timestamp now);
  void UpdateBounds(const ClusterState& s);
  // The computer each member task should be on (kNoComputer: none), by
  // position in members_.
  std::vector<ComputerId> Assign(const ClusterState& s) const;
  void Decide(const ClusterState& s, const std::vector<ComputerId>& target,
              std::vector<Decision>* out);
  void AddMember(const TaskInfo* task);
  void RemoveMember(TaskId id);
  Timestamp Now() const;
  friend class QuincyExplainer;  // quincy_explain.cc

  std::string name_;
  QuincyOptions options_;
  QuincyGraph graph_;
  std::unique_ptr<flow::FlowSolver> solver_;
  flow::FlowSolution solution_;
  // Task and root nodes in the graph, in a deterministic order (insertion,
  // with removals filled by the last), and each one's position.
  struct Member {
    TaskId id = kNoTask;
    const TaskInfo* info = nullptr;         // in the ClusterState; valid while the task is
    bool stale = true;                      // changed state: recompute all its costs
    bool clocked = false;                   // its costs move with the clock hint
    int64_t data_cost = 0;                  // d* on the computer it is placed on
    flow::ArcId running_arc = flow::kNoId;  // its arc to that computer (workers)
  };
  std::vector<Member> members_;
  std::unordered_map<TaskId, size_t> position_;
  std::unordered_set<TaskId> own_;  // our decisions, not yet reported back
  std::map<JobId, std::pair<int64_t, int64_t>> bounds_;
  Duration clock_quantum_{0};          // the hint's step (0: no hint)
  std::optional<Timestamp> clock_at_;  // the hint's clock at the last shift
  bool dirty_ = true;
  bool regime_changed_ = false;  // every task's movability is set anew
  bool drain_changed_ = false;   // the same, after a computer began or stopped draining
  std::optional<Timestamp> last_round_;
  QuincyRoundStats stats_;
  // For explanations: when the last solve ran (unset while a round is under
  // way or after a failed one, whose error is kept), and what the round then
  // decided: tasks it started, tasks the flow placed on a computer whose slot
  // was still held (with that computer), tasks it preempted.
  std::optional<Timestamp> solved_at_;
  std::string round_error_;
  std::unordered_set<TaskId> started_;
  std::unordered_map<TaskId, ComputerId> held_;
  std::unordered_set<TaskId> preempted_;
};

}  // namespace copse::scheduler

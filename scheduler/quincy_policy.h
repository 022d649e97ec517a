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
// Placement read-out keeps tasks where they are when the flow allows it at
// the same cost: a running task whose unit of flow went through an
// aggregator (X or its rack) that also reaches its own computer stays there,
// swapping with another aggregator-routed task if needed, instead of being
// moved arbitrarily between equal-cost computers.
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
#include "scheduler/flow/solver.h"
#include "scheduler/policy.h"
#include "scheduler/quincy_costs.h"
#include "scheduler/quincy_graph.h"

namespace copse::scheduler {

enum class QuincyRegime { kQ, kQP, kQF, kQFP };

struct QuincyOptions {
  QuincyRegime regime = QuincyRegime::kQFP;
  QuincyCostParams costs;
  Duration round_interval{1'000'000};
  std::string solver = "incremental";
  const Clock* stats_clock = nullptr;  // times round phases; may be null
};

// What the last round did and how long its phases took (zero without a
// stats clock).
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
  std::unordered_map<TaskId, ComputerId> ReadPlacements(const ClusterState& s) const;
  void KeepInPlace(const ClusterState& s, std::unordered_map<TaskId, ComputerId>& target) const;
  void Decide(const ClusterState& s, const std::unordered_map<TaskId, ComputerId>& target,
              std::vector<Decision>* out);
  Timestamp Now() const;

  std::string name_;
  QuincyOptions options_;
  QuincyGraph graph_;
  std::unique_ptr<flow::FlowSolver> solver_;
  flow::FlowSolution solution_;
  std::set<TaskId> tasks_;          // task and root nodes in the graph, in id order
  std::unordered_set<TaskId> own_;  // our decisions, not yet reported back
  std::map<JobId, std::pair<int64_t, int64_t>> bounds_;
  bool dirty_ = true;
  std::optional<Timestamp> last_round_;
  QuincyRoundStats stats_;
};

}  // namespace copse::scheduler

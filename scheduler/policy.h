// Policy: the part of the scheduler that decides (docs/design.md §5, §11 "policy
// separate from mechanism"). The Scheduler (mechanism) owns the cluster
// state, applies events and decisions to it, and reports every resulting
// change to the policy through Observe(); the policy keeps whatever indexes
// it needs (queues, a flow graph) from those changes and, when asked to
// Schedule(), returns start and kill decisions. A policy never changes the
// state itself, reads no clock (time is passed in) and draws randomness only
// from the generator it was given, so the same events give the same
// decisions.
//
// A policy also explains itself (docs/design.md §13; the master's HTTP API):
// Describe(), LastRound(), Explain() and FlowGraph() build JSON documents
// whose fields docs/scheduler.md "Explaining decisions" lists. They are
// const, read no clock and change nothing a later Schedule() depends on;
// they report what the policy used for its last decisions, never a
// recomputed answer of their own. Times are seconds (`_s`), costs paper
// units (the graph's milli-units / 1000); computers and racks are ids.
// Thread-safety: none; one Scheduler drives one policy.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "copse/status.h"
#include "scheduler/cluster_state.h"
#include "scheduler/events.h"

namespace copse::scheduler {

// One change of the cluster state, reported after it happened.
struct Change {
  enum class Kind {
    kJobAdmitted,        // job: admitted (its root, if any, is added next)
    kJobRemoved,         // job: gone (its tasks were removed first)
    kTaskWaiting,        // task: became waiting (submitted, preempted, start failed, re-queued)
    kTaskPlaced,         // task: start requested on task->computer (or adopted, running)
    kTaskRunning,        // task: the worker confirmed the start
    kTaskKillRequested,  // task: kill requested
    kTaskRemoved,        // task: forgotten (completed, failed, lost); `task` is its last state
    kComputerUp,         // computer
    kComputerDown,       // computer (its tasks were removed or re-queued first)
    kComputerDraining,   // computer: began or stopped draining (ComputerInfo::draining)
  };
  // Why a task was removed.
  enum class Reason { kNone, kCompleted, kFailed, kKilled, kLost, kJobGone };

  Kind kind;
  JobId job = 0;
  const TaskInfo* task = nullptr;  // valid during Observe only
  ComputerId computer = kNoComputer;
  Reason reason = Reason::kNone;
};

class Policy {
 public:
  virtual ~Policy() = default;

  // The name it was chosen by ("QFP", "GF", "HFS", "CFQ", ...).
  virtual std::string_view name() const = 0;

  // Called after each change of `state`, at time `now`.
  virtual void Observe(const ClusterState& state, const Change& change, Timestamp now) = 0;

  // Appends start and kill decisions for the current state to `out`. Starts
  // must name a waiting task and a computer with a free slot (counting
  // earlier starts in `out`); kills must name a placed task. The Scheduler
  // applies them (and reports the changes back through Observe) after this
  // returns. Errors mean the policy could not decide this time (for example
  // a flow solve failed); the state is unchanged.
  virtual Status Schedule(const ClusterState& state, Timestamp now, std::vector<Decision>* out) = 0;

  // The next time the policy wants to be asked again even if nothing
  // happens (a delay-scheduling wait expiring, a Quincy round timer), or
  // nullopt. The driver sends a Timer event then.
  virtual std::optional<Timestamp> NextWakeup(const ClusterState& state) const {
    (void)state;
    return std::nullopt;
  }

  // ---- Explaining decisions ----

  // Sets (*out)["parameters"] (an object: the policy's own parameters) and
  // (*out)["jobs"] (per admitted job, in admission order: {job, running,
  // waiting, fair_share, lower_bound, upper_bound} and the policy's own
  // fields). Default: no parameters; fair_share is Quincy §3.3's share of
  // the worker slots, the bounds null.
  virtual void Describe(const ClusterState& state, Timestamp now, nlohmann::json* out) const;

  // Sets fields of *out (an object) to the last round's statistics, if the
  // policy keeps any. Default: leaves *out alone.
  virtual void LastRound(nlohmann::json* out) const { (void)out; }

  // Adds to *out — which holds the fields every explanation has (task, job,
  // policy, state, computer, rack, waited_s, ran_s) — why `task` waits or
  // runs where it does, in the policy's terms, and sets "summary" to one
  // plain-English sentence. Default: a generic account of its state.
  // REQUIRES: `task` is in `state`.
  virtual void Explain(const ClusterState& state, const TaskInfo& task, Timestamp now,
                       nlohmann::json* out) const;

  // The flow graph of the last solved round, aggregated per job, rack and
  // computer (never per task). False, and *out untouched, for policies that
  // have no flow graph (or before their first solve).
  virtual bool FlowGraph(const ClusterState& state, nlohmann::json* out) const {
    (void)state;
    (void)out;
    return false;
  }
};

}  // namespace copse::scheduler

// Policy: the part of the scheduler that decides (DESIGN.md §5, §11 "policy
// separate from mechanism"). The Scheduler (mechanism) owns the cluster
// state, applies events and decisions to it, and reports every resulting
// change to the policy through Observe(); the policy keeps whatever indexes
// it needs (queues, a flow graph) from those changes and, when asked to
// Schedule(), returns start and kill decisions. A policy never changes the
// state itself, reads no clock (time is passed in) and draws randomness only
// from the generator it was given, so the same events give the same
// decisions.
// Thread-safety: none; one Scheduler drives one policy.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
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
};

}  // namespace copse::scheduler

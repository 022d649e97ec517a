// SchedulingLoop: the one cycle every driver of the scheduler runs (the
// master, the simulators, the scenario driver, the benchmarks; docs/design.md §2):
//
//   loop.Handle(event, now);      // apply what happened
//   loop.Run(now);                // Schedule() until a round decides nothing;
//                                 // each round's decisions go to the sink
//   loop.NextWakeup();            // when to call loop.Wakeup(t) next
//
// A round's decisions reach the DecisionSink one by one, in order, before
// the next round; the sink carries them out (sends start and kill messages,
// or simulates them) and may feed the events that follow straight back
// through Handle() (a simulated worker confirms a start at once). Run() stops
// at the first round that decides nothing, so the policy sees the
// consequences of its own decisions before the driver moves on; a policy that
// decides something new in every round is a bug, reported after max_rounds.
//
// Wakeups: the scheduler names a time it wants a Timer event even if nothing
// happens (a delay-scheduling wait expiring, a Quincy round timer).
// NextWakeup() returns it, except that a wakeup at or before one already
// served waits one tick past it, so a policy whose wakeup stays in the past
// cannot keep a driver busy at one instant.
//
// Charging decision time: a driver that measures how long a round took (the
// scale simulator) sets Hooks::after_round, which hears of every round with
// its wall time (from LoopOptions::wall) and says when its decisions take
// effect; the next round of the same Run() starts then.
// Thread-safety: none; one thread drives a loop.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "common/clock.h"
#include "copse/status.h"
#include "scheduler/scheduler.h"

namespace copse::scheduler {

// Carries out decisions. REQUIRES: outlives the loop.
class DecisionSink {
 public:
  virtual ~DecisionSink() = default;
  // `d` was decided; it takes effect at `at`. An error ends Run() with it.
  virtual Status Apply(const Decision& d, Timestamp at) = 0;
};

struct LoopOptions {
  // Rounds one Run() may take before it reports a policy that never settles.
  int max_rounds = 1000;
  // How long a wakeup already served pushes a wakeup at or before it.
  Duration tick{1000};
  // Times each Schedule() call for Hooks::after_round; may be null.
  const Clock* wall = nullptr;
};

// One Schedule() call, as Hooks::after_round hears of it.
struct RoundInfo {
  Timestamp at{0};   // the time the round decided at
  Duration wall{0};  // wall time of the Schedule() call (0 without LoopOptions::wall)
  size_t decisions = 0;
};

class SchedulingLoop {
 public:
  struct Hooks {
    // After each round, before its decisions go to the sink: the time they
    // take effect (default: the round's own time). REQUIRES: not earlier.
    std::function<Result<Timestamp>(const RoundInfo&)> after_round;
  };

  // REQUIRES: scheduler and sink outlive the loop.
  SchedulingLoop(Scheduler& scheduler, DecisionSink& sink, LoopOptions options = {},
                 Hooks hooks = {});
  SchedulingLoop(const SchedulingLoop&) = delete;
  SchedulingLoop& operator=(const SchedulingLoop&) = delete;

  // Applies one event that happened at `now` (Scheduler::Handle).
  Status Handle(const Event& event, Timestamp now);

  // Runs rounds from `now` until one decides nothing. Returns the time the
  // last round's decisions took effect (`now` unless after_round moved it).
  // kInternal when max_rounds rounds all decided something.
  Result<Timestamp> Run(Timestamp now);
  // Runs at most `rounds` rounds (stopping early at one that decides
  // nothing); never an error for running out of rounds.
  Result<Timestamp> RunRounds(Timestamp now, int rounds);

  // When the driver should call Wakeup() next, if ever.
  std::optional<Timestamp> NextWakeup() const;
  // Sends a Timer event if the scheduler's wakeup is due at `now` (one
  // already served counts as due again; NextWakeup() only delays the call);
  // returns whether it did. It does not Run().
  Result<bool> Wakeup(Timestamp now);

  Scheduler& scheduler() { return sched_; }
  const Scheduler& scheduler() const { return sched_; }
  // Schedule() calls so far.
  uint64_t rounds() const { return rounds_; }

 private:
  // One round at `now`; sets *decided to the number of decisions.
  Result<Timestamp> Round(Timestamp now, size_t* decided);

  Scheduler& sched_;
  DecisionSink& sink_;
  LoopOptions options_;
  Hooks hooks_;
  std::optional<Timestamp> served_;  // the last wakeup a Timer was sent for
  uint64_t rounds_ = 0;
};

}  // namespace copse::scheduler

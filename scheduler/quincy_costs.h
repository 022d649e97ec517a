// The Quincy cost function (Quincy appendix; docs/design.md §5): the costs of a
// worker task's arcs in the scheduling graph, in integer milli-units of the
// paper's costs (a paper cost c becomes round(1000 c)). One implementation
// serves the scheduler, the solver benchmarks' generated graphs and the
// simulator.
//
//   unscheduled  υ = ω ν                      (arc to the job's node U_j)
//   any computer α = ψ R^X + ξ X^X            (arc to the cluster node X)
//   rack l       ρ = ψ R^R_l + ξ X^R_l        (arc to a preferred rack R_l)
//   computer m   γ = ψ R^C_m + ξ X^C_m        (arc to a preferred computer C_m)
//   running on m0: γ = d* − p*, d* = ψ R^C_m0 + ξ X^C_m0, p* = θ seconds
//
// ω is per second of waiting, ψ and ξ per GB (10^9 bytes) read across a rack
// switch and across the core switch; ν is the task's total time unscheduled
// and θ its total time running. For a task that is not running, data and
// wait costs are capped at Ω, so that a task that has run long enough is
// never preempted (the appendix's starvation-freedom argument). Byte counts
// for racks and computers not in the task's preferred lists use the
// appendix's approximations: a rack's are (X^X / P, X^X) with P racks, a
// computer's are its rack's.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/clock.h"

namespace copse::scheduler {

struct QuincyCostParams {
  double omega = 0.5;                  // ω: cost per second waiting
  double psi = 1.0;                    // ψ: cost per GB across a rack switch
  double xi = 2.0;                     // ξ: cost per GB across the core switch
  int64_t max_cost_milli = 1'000'000;  // Ω in milli-units (1000 paper units)
};

// Bytes a task would read across a rack switch and across the core switch.
struct TransferBytes {
  int64_t rack = 0;  // R
  int64_t core = 0;  // X
};

struct PreferredComputer {
  int32_t computer = 0;
  TransferBytes bytes;  // (R^C_m, X^C_m), exact
};

struct PreferredRack {
  int32_t rack = 0;
  TransferBytes bytes;  // (R^R_l, X^R_l), exact
};

struct TaskLocality {
  TransferBytes worst;                       // (R^X, X^X): the worst computer
  std::vector<PreferredComputer> computers;  // at most ten
  std::vector<PreferredRack> racks;          // at most ten
};

struct TaskTimes {
  Duration unscheduled{0};  // ν: total time unscheduled since submission
  Duration running{0};      // θ: total time running on any computer
};

struct RunningOn {
  int32_t computer = 0;
  int32_t rack = 0;
};

// The costs of every arc leaving one worker task node.
struct QuincyArcCosts {
  int64_t unscheduled = 0;         // υ
  int64_t any_computer = 0;        // α
  std::vector<int64_t> racks;      // ρ, in the order of locality.racks
  std::vector<int64_t> computers;  // γ, in the order of locality.computers
  std::optional<int64_t> running;  // γ for the computer it runs on
};

// A running task's cost where it runs (γ = d* − p*) takes for d* the
// cheapest way the same task could reach that computer afresh: its own
// arc, the cluster node X (α) or its rack's node (ρ). The appendix's
// approximations can price a computer outside the preferred lists above α
// (the rack's (X^X / P, X^X) against the worst computer's (R^X, X^X)); then
// a running task there cost more than an identical waiting one placed on the
// same computer through X, so the flow killed it and started the other,
// and in the next round did the same to that one (the simulator's
// constrained QFPX runs, with the leaf solver, rotated three tasks of a job
// between two computers at one instant without end). And it is one
// milli-unit (a thousandth of a paper unit) below that, so that a task
// that has just started (θ = 0) is kept where an identical waiting one
// would cost the same (without it the paper's QP runs rotated two tasks at
// one instant).
inline constexpr int64_t kRunningTieBreakMilli = 1;

// ψ R + ξ X in milli-units (uncapped).
int64_t DataCostMilli(const QuincyCostParams& p, TransferBytes bytes);
// ω ν in milli-units (uncapped).
int64_t WaitCostMilli(const QuincyCostParams& p, Duration unscheduled);

// θ in milli-units (1 per second run), rounded as ComputeQuincyCosts rounds
// it; ran is in microseconds.
inline int64_t InvestedMilli(Duration ran) { return (ran.count() + 500) / 1000; }

// The clock hint's step (QuincyGraph::ShiftClock): the shortest whole number
// of milliseconds whose wait cost is a whole number of milli-units (2 ms at
// ω = 0.5), so that a clock moved in such steps moves every task's wait and
// running costs by the same integers; zero when there is none up to a
// second (then the hint cannot be exact).
Duration ClockQuantum(const QuincyCostParams& p);

// Byte counts for rack `rack` (exact if preferred, else approximated).
// REQUIRES: num_racks >= 1.
TransferBytes RackBytes(const TaskLocality& loc, int32_t rack, int32_t num_racks);
// Byte counts for computer `computer` in rack `rack`.
TransferBytes ComputerBytes(const TaskLocality& loc, int32_t computer, int32_t rack,
                            int32_t num_racks);
// d* of a task running on `computer` in `rack`: the byte counts of the
// cheapest way to reach that computer afresh — its own, X's worst computer
// or its rack's (kRunningTieBreakMilli above says why).
TransferBytes RunningBytes(const QuincyCostParams& p, const TaskLocality& loc, int32_t computer,
                           int32_t rack, int32_t num_racks);

// All arc costs of a worker task. `running` names the computer it runs on,
// if any; its arc there gets the running cost instead of γ (when that
// computer is also preferred, its entry in `computers` holds the running
// cost too).
QuincyArcCosts ComputeQuincyCosts(const QuincyCostParams& p, const TaskLocality& loc,
                                  const TaskTimes& times, std::optional<RunningOn> running,
                                  int32_t num_racks);

}  // namespace copse::scheduler

// Helpers the policies share when they explain themselves (Policy::Describe,
// Policy::Explain; docs/scheduler.md "Explaining decisions" documents every
// field): unit conversions, the names of states and placements, the generic
// per-job rows and the plain-English numbers of summaries. Only the .cc
// files that build documents include <nlohmann/json.hpp>.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "scheduler/cluster_state.h"

namespace copse::scheduler::explain {

// Paper units (what the Quincy paper writes) from the graph's milli-units.
inline double Paper(int64_t milli) { return static_cast<double>(milli) / 1000.0; }
// Milliseconds as a double, for phase timings.
inline double Millis(Duration d) { return static_cast<double>(d.count()) / 1000.0; }

// "waiting", "start_requested", "running", "kill_requested".
const char* StateKey(TaskState s);

// Where computer `c` stands for task `t`'s input: "preferred_computer" (on
// its preferred list), "preferred_rack" (its rack is preferred),
// "no_preference" (the task reads nothing worth moving: local everywhere)
// or "other".
const char* PlacementKey(const ClusterState& s, const TaskInfo& t, ComputerId c);
// The same in words: "a preferred computer", "in a preferred rack", ...
std::string PlacementWords(const char* key);

// A number for a summary: at most three decimals, trailing zeros dropped
// ("12.5", "14", "0.125").
std::string Num(double v);
// "1st", "2nd", "3rd", "11th", ...
std::string Ordinal(size_t n);
// "computer 3", "rack 1" (ids; the master adds names beside them).
std::string ComputerWords(ComputerId c);

// Per admitted job, in admission order: {job, running, waiting, fair_share,
// lower_bound: null, upper_bound: null}, fair_share being Quincy §3.3's
// share of the worker slots given the jobs' demands N_j (running, waiting
// and being preempted) and their min/max_tasks. Policies add their own
// fields to the rows.
nlohmann::json DefaultJobs(const ClusterState& s);

// The Quincy §3.3 shares of the admitted jobs (in admission order), for
// demands `demand` (one per admitted job).
std::vector<int> FairShares(const ClusterState& s, const std::vector<int>& demand);

// The summary of a task no policy-specific account applies to: what it is
// doing and since when.
std::string GenericSummary(const ClusterState& s, const TaskInfo& t, Timestamp now);

}  // namespace copse::scheduler::explain

// RootPlacer: where a newly admitted job's root task runs under the policies
// that have no flow graph to decide it. Quincy §3.1: a computer chosen at
// random among the up computers not already running a root task (nor
// draining); a worker task running there is killed and re-queued, and the
// root starts once the kill is confirmed (the computer stays reserved for it meanwhile). With
// `prefer_free`, computers with a free slot are drawn from first, so a worker
// is killed only when no such computer exists.
// Randomness comes only from the seed; draws use `rng() % n`, which gives the
// same choices on every platform.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "scheduler/cluster_state.h"
#include "scheduler/events.h"

namespace copse::scheduler {

// Free slots as decisions accumulate during one Schedule() call.
class SlotLedger {
 public:
  explicit SlotLedger(const ClusterState& s);
  int free(ComputerId c) const { return free_[c]; }
  void Take(ComputerId c) { --free_[c]; }

 private:
  std::vector<int> free_;
};

class RootPlacer {
 public:
  RootPlacer(uint64_t seed, bool prefer_free);

  // Appends decisions that place waiting roots of admitted jobs, in
  // admission order: starts where a slot is free, else a kill of the most
  // recently started worker on the chosen computer.
  void Place(const ClusterState& s, SlotLedger& ledger, std::vector<Decision>* out);
  // Forgets the reservation of `job` (its root was placed or the job ended).
  void Forget(JobId job) { reserved_.erase(job); }

 private:
  ComputerId Choose(const ClusterState& s, const SlotLedger& ledger);
  static TaskId Victim(const ClusterState& s, ComputerId c);

  std::mt19937_64 rng_;
  bool prefer_free_;
  std::map<JobId, ComputerId> reserved_;  // root waiting for a kill to finish
};

}  // namespace copse::scheduler

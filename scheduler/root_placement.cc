#include "scheduler/root_placement.h"

#include <set>

namespace copse::scheduler {

SlotLedger::SlotLedger(const ClusterState& s) : free_(s.num_computers()) {
  for (ComputerId c = 0; c < s.num_computers(); ++c) free_[c] = s.computer(c).free_slots();
}

RootPlacer::RootPlacer(uint64_t seed, bool prefer_free) : rng_(seed), prefer_free_(prefer_free) {}

ComputerId RootPlacer::Choose(const ClusterState& s, const SlotLedger& ledger) {
  std::set<ComputerId> taken;
  for (const auto& [job, c] : reserved_) taken.insert(c);
  std::vector<ComputerId> any, free;
  for (ComputerId c = 0; c < s.num_computers(); ++c) {
    const ComputerInfo& m = s.computer(c);
    if (!m.usable() || m.roots > 0 || taken.count(c)) continue;
    any.push_back(c);
    if (ledger.free(c) > 0) free.push_back(c);
  }
  const std::vector<ComputerId>& from = prefer_free_ && !free.empty() ? free : any;
  if (from.empty()) return kNoComputer;
  return from[rng_() % from.size()];
}

TaskId RootPlacer::Victim(const ClusterState& s, ComputerId c) {
  TaskId best = kNoTask;
  uint64_t seq = 0;
  for (TaskId id : s.computer(c).tasks) {
    const TaskInfo& t = s.task(id);
    if (!t.root && t.placed() && t.placed_seq >= seq) {
      best = id;
      seq = t.placed_seq;
    }
  }
  return best;
}

void RootPlacer::Place(const ClusterState& s, SlotLedger& ledger, std::vector<Decision>* out) {
  for (JobId job : s.admitted_jobs()) {
    TaskId root = s.job(job).root_task;
    if (root == kNoTask || s.task(root).state != TaskState::kWaiting) {
      reserved_.erase(job);
      continue;
    }
    auto it = reserved_.find(job);
    if (it != reserved_.end() && !s.computer(it->second).usable()) {
      reserved_.erase(it);
      it = reserved_.end();
    }
    ComputerId c = it != reserved_.end() ? it->second : Choose(s, ledger);
    if (c == kNoComputer) continue;  // every computer runs a root: wait
    if (ledger.free(c) > 0) {
      out->push_back({Decision::Kind::kStartTask, job, root, c, true});
      ledger.Take(c);
      reserved_.erase(job);
      continue;
    }
    bool fresh = it == reserved_.end();
    reserved_[job] = c;
    if (!fresh) continue;  // the kill is on its way
    TaskId victim = Victim(s, c);
    if (victim != kNoTask) {
      out->push_back({Decision::Kind::kKillTask, s.task(victim).job, victim, c, false});
    }
  }
}

}  // namespace copse::scheduler

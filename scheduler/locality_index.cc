#include "scheduler/locality_index.h"

#include <set>

namespace copse::scheduler {

void LocalityIndex::Add(const ClusterState& s, const TaskInfo& t) {
  if (node_local_.empty()) {
    node_local_.resize(s.num_computers());
    rack_local_.resize(s.num_racks());
  }
  const uint64_t seq = t.queued_seq;
  indexed_[t.id] = seq;
  std::set<RackId> racks;
  for (const PreferredComputer& c : t.locality.computers) {
    node_local_[c.computer].Push(t.job, seq, t.id);
    racks.insert(s.rack_of(c.computer));
  }
  for (const PreferredRack& r : t.locality.racks) racks.insert(r.rack);
  for (RackId r : racks) rack_local_[r].Push(t.job, seq, t.id);
  if (ClusterState::LocalityFree(t)) anywhere_.Push(t.job, seq, t.id);
  all_.Push(t.job, seq, t.id);
}

void LocalityIndex::Remove(const TaskInfo& t) {
  auto it = indexed_.find(t.id);
  if (it == indexed_.end()) return;
  const uint64_t seq = it->second;
  indexed_.erase(it);
  for (const PreferredComputer& c : t.locality.computers) {
    node_local_[c.computer].Erase(t.job, seq, t.id);
  }
  // The racks a task was filed under also include its preferred computers'
  // racks; erasing from every rack queue covers them without the topology.
  if (!ClusterState::LocalityFree(t)) {
    for (TaskQueue& q : rack_local_) q.Erase(t.job, seq, t.id);
  }
  anywhere_.Erase(t.job, seq, t.id);
  all_.Erase(t.job, seq, t.id);
}

}  // namespace copse::scheduler

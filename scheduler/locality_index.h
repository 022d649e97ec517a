// LocalityIndex: waiting worker tasks indexed by where they would run
// locally — per preferred computer, per preferred rack (a preferred
// computer's rack counts), locality-free, and all of them — in the order
// they started waiting. The delay-scheduling (HFS) and job-order (CFQ, FIFO,
// FAIR, SRPT) policies pick "the first task of job j that is local to
// computer c" from it.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "scheduler/cluster_state.h"
#include "scheduler/task_queue.h"

namespace copse::scheduler {

class LocalityIndex {
 public:
  // Indexes a waiting worker task (sized to the topology on first use).
  void Add(const ClusterState& s, const TaskInfo& t);
  // Forgets a task; a task not indexed is ignored.
  void Remove(const TaskInfo& t);

  // False until the first Add(): the per-computer queues do not exist yet.
  bool sized() const { return !node_local_.empty(); }
  const TaskQueue& node_local(ComputerId c) const { return node_local_[c]; }
  const TaskQueue& rack_local(RackId r) const { return rack_local_[r]; }
  const TaskQueue& anywhere() const { return anywhere_; }
  const TaskQueue& all() const { return all_; }

 private:
  std::vector<TaskQueue> node_local_;             // per computer
  std::vector<TaskQueue> rack_local_;             // per rack
  TaskQueue anywhere_;                            // locality-free tasks
  TaskQueue all_;                                 // every indexed task
  std::unordered_map<TaskId, uint64_t> indexed_;  // task → its queue sequence number
};

}  // namespace copse::scheduler

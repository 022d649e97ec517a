// TaskQueue: one of the queue-based schedulers' queues (Quincy §3.1, Figure
// 3) — per computer, per rack, or cluster-wide. Tasks are kept in the order
// they entered the queue, grouped by job, so that "the first ready task"
// (the earliest task whose job is not blocked) is found in time linear in
// the number of jobs rather than the number of tasks.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "scheduler/events.h"

namespace copse::scheduler {

class TaskQueue {
 public:
  void Push(JobId job, uint64_t seq, TaskId task) { jobs_[job].insert({seq, task}); }
  void Erase(JobId job, uint64_t seq, TaskId task);
  // The earliest task among jobs for which `ready(job)` holds, or kNoTask.
  TaskId FirstReady(const std::function<bool(JobId)>& ready) const;
  // The earliest task of `job` in this queue, or kNoTask.
  TaskId FirstOf(JobId job) const;
  // Tasks queued before sequence number `seq` whose jobs `ready` accepts
  // (those FirstReady() serves first). Linear in the number counted.
  size_t CountBefore(uint64_t seq, const std::function<bool(JobId)>& ready) const;
  bool empty() const { return jobs_.empty(); }

 private:
  std::map<JobId, std::set<std::pair<uint64_t, TaskId>>> jobs_;
};

}  // namespace copse::scheduler

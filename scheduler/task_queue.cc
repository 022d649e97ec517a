#include "scheduler/task_queue.h"

namespace copse::scheduler {

void TaskQueue::Erase(JobId job, uint64_t seq, TaskId task) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  it->second.erase({seq, task});
  if (it->second.empty()) jobs_.erase(it);
}

TaskId TaskQueue::FirstReady(const std::function<bool(JobId)>& ready) const {
  const std::pair<uint64_t, TaskId>* best = nullptr;
  for (const auto& [job, tasks] : jobs_) {
    const auto& head = *tasks.begin();
    if ((best == nullptr || head.first < best->first) && ready(job)) best = &head;
  }
  return best == nullptr ? kNoTask : best->second;
}

TaskId TaskQueue::FirstOf(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? kNoTask : it->second.begin()->second;
}

}  // namespace copse::scheduler

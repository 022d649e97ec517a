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

size_t TaskQueue::CountBefore(uint64_t seq, const std::function<bool(JobId)>& ready) const {
  size_t n = 0;
  for (const auto& [job, tasks] : jobs_) {
    if (!ready(job)) continue;
    for (auto it = tasks.begin(); it != tasks.end() && it->first < seq; ++it) ++n;
  }
  return n;
}

TaskId TaskQueue::FirstOf(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? kNoTask : it->second.begin()->second;
}

}  // namespace copse::scheduler

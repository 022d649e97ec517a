#include "scheduler/queue_policy.h"

#include <algorithm>
#include <set>

#include "scheduler/fair_share.h"

namespace copse::scheduler {

QueuePolicy::QueuePolicy(std::string name, QueuePolicyOptions options, uint64_t seed)
    : name_(std::move(name)), options_(options), roots_(seed, /*prefer_free=*/false) {}

void QueuePolicy::Enqueue(const ClusterState& s, const TaskInfo& t) {
  if (computer_queues_.empty()) {
    computer_queues_.resize(s.num_computers());
    rack_queues_.resize(s.num_racks());
  }
  const uint64_t seq = t.queued_seq;
  queued_[t.id] = seq;
  for (const PreferredComputer& c : t.locality.computers) {
    computer_queues_[c.computer].Push(t.job, seq, t.id);
  }
  for (const PreferredRack& r : t.locality.racks) rack_queues_[r.rack].Push(t.job, seq, t.id);
  cluster_queue_.Push(t.job, seq, t.id);
}

void QueuePolicy::Dequeue(const TaskInfo& t) {
  auto it = queued_.find(t.id);
  if (it == queued_.end()) return;
  const uint64_t seq = it->second;
  queued_.erase(it);
  for (const PreferredComputer& c : t.locality.computers) {
    computer_queues_[c.computer].Erase(t.job, seq, t.id);
  }
  for (const PreferredRack& r : t.locality.racks) rack_queues_[r.rack].Erase(t.job, seq, t.id);
  cluster_queue_.Erase(t.job, seq, t.id);
}

void QueuePolicy::Observe(const ClusterState& s, const Change& ch, Timestamp now) {
  (void)now;
  switch (ch.kind) {
    case Change::Kind::kJobAdmitted:
      jobs_[ch.job] = JobState{};
      break;
    case Change::Kind::kJobRemoved:
      jobs_.erase(ch.job);
      roots_.Forget(ch.job);
      break;
    case Change::Kind::kTaskWaiting:
      if (!ch.task->root) Enqueue(s, *ch.task);
      break;
    case Change::Kind::kTaskPlaced:
    case Change::Kind::kTaskKillRequested:
    case Change::Kind::kTaskRemoved:
      Dequeue(*ch.task);
      break;
    default:
      break;
  }
}

void QueuePolicy::ComputeShares(const ClusterState& s) {
  std::vector<JobDemand> demand;
  for (JobId id : s.admitted_jobs()) {
    const JobInfo& j = s.job(id);
    JobDemand d{j.demand(), j.attributes.min_tasks.value_or(0),
                j.attributes.max_tasks.value_or(JobDemand{}.cap)};
    if (!options_.fair) d.floor = 0;
    demand.push_back(d);
  }
  std::vector<int> shares = QuincyFairShares(s.WorkerSlots(), demand);
  for (size_t i = 0; i < shares.size(); ++i) {
    JobId id = s.admitted_jobs()[i];
    JobState& js = jobs_[id];
    js.running = s.job(id).placed;
    js.waiting = s.job(id).waiting;
    // G has no fairness: a job is limited only by its own max_tasks.
    js.share = options_.fair ? shares[i] : demand[i].cap;
  }
}

void QueuePolicy::UpdateBlocked(JobState& j, Timestamp now) const {
  if (j.waiting == 0) {  // nothing to hold back; a new batch starts unblocked
    j.blocked = false;
    j.below_since.reset();
    return;
  }
  if (j.running >= j.share) {
    j.blocked = true;
    j.below_since.reset();
    return;
  }
  if (!j.blocked) return;
  if (!options_.hysteresis) {
    j.blocked = false;
    return;
  }
  if (!j.below_since) j.below_since = now;
  if (j.running < j.share - options_.margin || now - *j.below_since >= options_.delay) {
    j.blocked = false;
    j.below_since.reset();
  }
}

bool QueuePolicy::Ready(JobId job) const {
  auto it = jobs_.find(job);
  return it != jobs_.end() && !it->second.blocked;
}

void QueuePolicy::Preempt(const ClusterState& s, std::vector<Decision>* out) {
  std::set<TaskId> killing;
  for (const Decision& d : *out) {
    if (d.kind == Decision::Kind::kKillTask) killing.insert(d.task);
  }
  for (JobId id : s.admitted_jobs()) {
    JobState& js = jobs_[id];
    if (js.running <= js.share) continue;
    std::vector<const TaskInfo*> placed;
    for (TaskId t : s.job(id).workers) {
      const TaskInfo& task = s.task(t);
      if (task.placed() && !killing.count(t)) placed.push_back(&task);
    }
    std::sort(placed.begin(), placed.end(), [](const TaskInfo* a, const TaskInfo* b) {
      return a->placed_seq > b->placed_seq;  // most recently scheduled first
    });
    for (const TaskInfo* t : placed) {
      if (js.running <= js.share) break;
      out->push_back({Decision::Kind::kKillTask, id, t->id, t->computer, false});
      --js.running;
    }
  }
}

TaskId QueuePolicy::Pick(const ClusterState& s, ComputerId c) {
  auto ready = [this](JobId j) { return Ready(j); };
  TaskId t = computer_queues_.empty() ? kNoTask : computer_queues_[c].FirstReady(ready);
  if (t == kNoTask && !rack_queues_.empty()) t = rack_queues_[s.rack_of(c)].FirstReady(ready);
  if (t == kNoTask) t = cluster_queue_.FirstReady(ready);
  return t;
}

Status QueuePolicy::Schedule(const ClusterState& s, Timestamp now, std::vector<Decision>* out) {
  last_schedule_ = now;
  ComputeShares(s);
  for (auto& [id, js] : jobs_) UpdateBlocked(js, now);
  SlotLedger ledger(s);
  roots_.Place(s, ledger, out);
  if (options_.preempt) Preempt(s, out);
  for (ComputerId c = 0; c < s.num_computers(); ++c) {
    while (ledger.free(c) > 0) {
      TaskId t = Pick(s, c);
      if (t == kNoTask) break;
      const TaskInfo& task = s.task(t);
      out->push_back({Decision::Kind::kStartTask, task.job, t, c, false});
      ledger.Take(c);
      Dequeue(task);  // so later picks this round skip it
      JobState& js = jobs_[task.job];
      ++js.running;
      if (js.running >= js.share) js.blocked = true;
    }
  }
  return Status::Ok();
}

std::optional<Timestamp> QueuePolicy::NextWakeup(const ClusterState& s) const {
  std::optional<Timestamp> next;
  if (!options_.hysteresis) return next;
  for (const auto& [id, js] : jobs_) {
    if (!js.blocked || !js.below_since || s.job(id).waiting == 0) continue;
    Timestamp at = *js.below_since + options_.delay;
    if (!next || at < *next) next = at;
  }
  return next;
}

int QueuePolicy::share(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : it->second.share;
}

bool QueuePolicy::blocked(JobId job) const {
  auto it = jobs_.find(job);
  return it != jobs_.end() && it->second.blocked;
}

}  // namespace copse::scheduler

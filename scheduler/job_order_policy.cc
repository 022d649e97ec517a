#include "scheduler/job_order_policy.h"

#include <algorithm>

namespace copse::scheduler {

JobOrderPolicy::JobOrderPolicy(std::string name, JobOrderOptions options, uint64_t seed)
    : name_(std::move(name)), options_(options), roots_(seed, /*prefer_free=*/true) {}

void JobOrderPolicy::AdvanceVirtualTime(const ClusterState& s, Timestamp now) {
  if (!v_at_) v_at_ = now;
  double t = ToSeconds(*v_at_);
  const double end = ToSeconds(now);
  const double m = s.WorkerSlots();
  while (m > 0 && !gps_.empty() && t < end) {
    double rate = m / static_cast<double>(gps_.size());
    double first = *gps_.begin();
    double dt = (first - v_) / rate;
    if (t + dt <= end) {  // the job with the smallest F_j leaves the reference system
      v_ = std::max(v_, first);
      t += dt;
      gps_.erase(gps_.begin());
    } else {
      v_ += rate * (end - t);
      t = end;
    }
  }
  v_at_ = now;
}

double JobOrderPolicy::EstimateSlotTime(const JobInfo& j) const {
  if (j.attributes.slot_time > Duration{0}) return ToSeconds(j.attributes.slot_time);
  double n = std::max(j.attributes.expected_tasks, 1);
  double avg = completed_ > 0 ? ToSeconds(completed_time_) / static_cast<double>(completed_)
                              : ToSeconds(options_.default_task_time);
  return n * avg;
}

void JobOrderPolicy::Observe(const ClusterState& s, const Change& ch, Timestamp now) {
  switch (ch.kind) {
    case Change::Kind::kJobAdmitted: {
      AdvanceVirtualTime(s, now);
      JobState& j = jobs_[ch.job];
      j.slot_time = EstimateSlotTime(s.job(ch.job));
      j.finish = v_ + j.slot_time;
      gps_.insert(j.finish);
      break;
    }
    case Change::Kind::kJobRemoved:
      jobs_.erase(ch.job);
      roots_.Forget(ch.job);
      break;
    case Change::Kind::kTaskWaiting:
      if (!ch.task->root) index_.Add(s, *ch.task);
      break;
    case Change::Kind::kTaskRemoved:
      if (ch.reason == Change::Reason::kCompleted) {
        completed_time_ += ch.task->ran;
        ++completed_;
      }
      index_.Remove(*ch.task);
      break;
    case Change::Kind::kTaskPlaced:
    case Change::Kind::kTaskKillRequested:
      index_.Remove(*ch.task);
      break;
    default:
      break;
  }
}

std::vector<double> JobOrderPolicy::Keys(const ClusterState& s, Timestamp now) const {
  const std::vector<JobId>& jobs = s.admitted_jobs();
  std::vector<double> keys(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& j = s.job(jobs[i]);
    switch (options_.order) {
      case JobOrder::kCfq:
        keys[i] = jobs_.at(jobs[i]).finish;
        break;
      case JobOrder::kFifo:
        keys[i] = 0;  // admission order breaks the tie
        break;
      case JobOrder::kFair:
        keys[i] = j.placed;
        break;
      case JobOrder::kSrpt: {
        Duration used = j.completed_run_time;
        for (TaskId t : j.workers) used += s.task(t).RunTime(now);
        keys[i] = jobs_.at(jobs[i]).slot_time - ToSeconds(used);
        break;
      }
    }
  }
  return keys;
}

TaskId JobOrderPolicy::PickTask(const ClusterState& s, JobId job, ComputerId c) const {
  TaskId t = index_.node_local(c).FirstOf(job);
  if (t == kNoTask) t = index_.anywhere().FirstOf(job);
  if (t == kNoTask) t = index_.rack_local(s.rack_of(c)).FirstOf(job);
  if (t == kNoTask) t = index_.all().FirstOf(job);
  return t;
}

Status JobOrderPolicy::Schedule(const ClusterState& s, Timestamp now, std::vector<Decision>* out) {
  last_schedule_ = now;
  AdvanceVirtualTime(s, now);
  SlotLedger ledger(s);
  roots_.Place(s, ledger, out);
  if (!index_.sized()) return Status::Ok();  // no task seen yet
  const std::vector<JobId>& jobs = s.admitted_jobs();
  std::vector<double> keys = Keys(s, now);
  std::vector<int> running(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) running[i] = s.job(jobs[i]).placed;
  for (ComputerId c = 0; c < s.num_computers(); ++c) {
    while (ledger.free(c) > 0) {
      int best = -1;  // admitted_jobs is in admission order: the first minimum wins ties
      for (size_t i = 0; i < jobs.size(); ++i) {
        const JobAttributes& a = s.job(jobs[i]).attributes;
        if (index_.all().FirstOf(jobs[i]) == kNoTask ||
            running[i] >= a.max_tasks.value_or(1 << 30)) {
          continue;
        }
        if (best < 0 || keys[i] < keys[best]) best = static_cast<int>(i);
      }
      if (best < 0) return Status::Ok();
      TaskId t = PickTask(s, jobs[best], c);
      out->push_back({Decision::Kind::kStartTask, jobs[best], t, c, false});
      ledger.Take(c);
      index_.Remove(s.task(t));
      ++running[best];
      if (options_.order == JobOrder::kFair) keys[best] = running[best];
    }
  }
  return Status::Ok();
}

}  // namespace copse::scheduler

#include "scheduler/testing/driver.h"

namespace copse::scheduler::testing {

Driver::Driver(Scheduler& scheduler) : sched_(scheduler), loop_(scheduler, *this) {}

void Driver::Post(Timestamp at, std::function<Status()> act) {
  queue_.emplace(std::make_pair(at, seq_++), Item{std::move(act)});
}

void Driver::AddJob(JobPlan plan) {
  plan.attributes.submitted = plan.arrival;
  JobId id = plan.id;
  left_[id] = static_cast<int>(plan.tasks.size());
  auto [it, fresh] = jobs_.emplace(id, std::move(plan));
  const JobPlan& p = it->second;
  for (const TaskPlan& t : p.tasks) plans_[t.id] = &t;
  JobSubmitted e{id, p.root, p.attributes};
  Post(p.arrival, [this, e] {
    unsubmitted_.insert(e.job);
    return Feed(e);
  });
}

void Driver::At(Timestamp at, Event event) {
  Post(at, [this, event] { return Feed(event); });
}

Status Driver::Feed(const Event& event) {
  COPSE_RETURN_IF_ERROR(loop_.Handle(event, now_));
  // Jobs the event admitted submit their tasks at once (those without a
  // delay before the next Schedule()), as a root that is already running
  // would; a job without tasks is over.
  for (auto it = unsubmitted_.begin(); it != unsubmitted_.end();) {
    const JobInfo* j = sched_.state().FindJob(*it);
    if (j == nullptr || !j->admitted) {
      ++it;
      continue;
    }
    JobId job = *it;
    it = unsubmitted_.erase(it);
    const JobPlan& p = jobs_.at(job);
    if (p.tasks.empty()) {
      finished_[job] = now_;
      COPSE_RETURN_IF_ERROR(loop_.Handle(JobFinished{job}, now_));
      continue;
    }
    for (const TaskPlan& t : p.tasks) {
      TaskSubmitted e{t.id, job, t.locality};
      if (t.submit_after == Duration{0}) {
        COPSE_RETURN_IF_ERROR(loop_.Handle(e, now_));
      } else {
        Post(now_ + t.submit_after, [this, e] { return Feed(e); });
      }
    }
  }
  return Status::Ok();
}

void Driver::CloseSpan(TaskId task, bool completed) {
  auto it = open_span_.find(task);
  if (it == open_span_.end()) return;
  spans_[it->second].end = now_;
  spans_[it->second].completed = completed;
  open_span_.erase(it);
}

Status Driver::Complete(TaskId task, uint64_t attempt) {
  if (attempt_[task] != attempt) return Status::Ok();  // killed meanwhile
  CloseSpan(task, true);
  JobId job = sched_.state().task(task).job;
  COPSE_RETURN_IF_ERROR(Feed(TaskCompleted{task}));
  if (--left_[job] == 0) {
    finished_[job] = now_;
    return Feed(JobFinished{job});
  }
  return Status::Ok();
}

Status Driver::Apply(const Decision& d, Timestamp) {
  decisions_.push_back({now_, d});
  if (on_decision) on_decision(now_, d);
  switch (d.kind) {
    case Decision::Kind::kAdmitJob:  // its tasks were submitted when it was admitted
      return Status::Ok();
    case Decision::Kind::kStartTask: {
      uint64_t attempt = ++attempt_[d.task];
      Timestamp start = now_ + confirm_delay;
      Post(start, [this, d, attempt, start] {
        if (attempt_[d.task] != attempt) return Status::Ok();
        open_span_[d.task] = spans_.size();
        spans_.push_back({d.task, d.job, d.computer, start, start, false});
        return Feed(TaskStarted{d.task});
      });
      if (!d.root) {
        Post(start + plans_.at(d.task)->run,
             [this, d, attempt] { return Complete(d.task, attempt); });
      }
      return Status::Ok();
    }
    case Decision::Kind::kKillTask: {
      ++attempt_[d.task];
      Post(now_ + kill_delay, [this, task = d.task] {
        CloseSpan(task, false);
        return Feed(TaskKilled{task});
      });
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status Driver::RunUntil(Timestamp until) {
  while (!queue_.empty() && queue_.begin()->first.first <= until) {
    now_ = queue_.begin()->first.first;
    while (!queue_.empty() && queue_.begin()->first.first == now_) {
      Item item = std::move(queue_.begin()->second);
      queue_.erase(queue_.begin());
      COPSE_RETURN_IF_ERROR(item.act());
    }
    COPSE_RETURN_IF_ERROR(loop_.Run(now_).status());
    std::optional<Timestamp> wake = loop_.NextWakeup();
    if (wake && *wake > now_ && (!timer_ || *timer_ <= now_ || *wake < *timer_)) {
      timer_ = *wake;
      Post(*wake, [this] { return loop_.Wakeup(now_).status(); });
    }
  }
  return Status::Ok();
}

std::optional<Timestamp> Driver::finished(JobId job) const {
  auto it = finished_.find(job);
  if (it == finished_.end()) return std::nullopt;
  return it->second;
}

}  // namespace copse::scheduler::testing

// Scheduler::Describe, Explain and ExplainJob (scheduler.h): the mechanism's
// part of every explanation — admission, the common fields — with the
// policy's account added by Policy::Describe / Policy::Explain.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "scheduler/explain.h"
#include "scheduler/scheduler.h"

namespace copse::scheduler {

using nlohmann::json;

namespace {

std::string Jobs(int n) { return std::to_string(n) + (n == 1 ? " job" : " jobs"); }

}  // namespace

json Scheduler::Describe(Timestamp now) const {
  now = std::max(now, now_);
  json d;
  d["policy"] = std::string(policy_->name());
  d["max_running_jobs"] = max_running_jobs_;
  d["now_s"] = ToSeconds(now);
  d["slots"] = {{"up", state_.up_slots()},
                {"free", state_.free_slots_total()},
                {"worker", state_.WorkerSlots()}};
  d["admitted"] = state_.admitted_jobs();
  json queue = json::array();
  size_t position = 0;
  for (const auto& [submitted, job] : queue_) {
    const JobInfo& j = state_.job(job);
    queue.push_back({{"job", job},
                     {"position", ++position},
                     {"root_task", j.root_task == kNoTask ? json(nullptr) : json(j.root_task)},
                     {"submitted_at_s", ToSeconds(submitted)},
                     {"waited_s", ToSeconds(std::max(Duration{0}, now - submitted))}});
  }
  d["queue"] = std::move(queue);
  policy_->Describe(state_, now, &d);
  json round = json::object();
  policy_->LastRound(&round);
  d["last_round"] = std::move(round);
  return d;
}

json Scheduler::ExplainQueued(const JobInfo& j, Timestamp now) const {
  json ahead = json::array();
  for (const auto& [submitted, job] : queue_) {
    if (job == j.id) break;
    ahead.push_back(job);
  }
  const size_t position = ahead.size() + 1;
  const int running = state_.num_admitted();
  // Jobs that must finish first: enough running ones to bring the count
  // below K, then one for each job ahead in the queue.
  const int finishes = std::max(0, running - max_running_jobs_) + static_cast<int>(position);
  const Duration waited = std::max(Duration{0}, now - j.attributes.submitted);
  json e;
  e["task"] = j.root_task == kNoTask ? json(nullptr) : json(j.root_task);
  e["job"] = j.id;
  e["policy"] = std::string(policy_->name());
  e["state"] = "queued_job";
  e["root"] = true;
  e["computer"] = nullptr;
  e["rack"] = nullptr;
  e["waited_s"] = ToSeconds(waited);
  e["ran_s"] = 0.0;
  e["position"] = position;
  e["ahead"] = std::move(ahead);
  e["max_running_jobs"] = max_running_jobs_;
  e["running_jobs"] = running;
  e["finishes_needed"] = finishes;
  e["summary"] = "waits for admission: job " + std::to_string(j.id) + " is " +
                 explain::Ordinal(position) +
                 " in the admission queue; at most K = " + std::to_string(max_running_jobs_) +
                 " jobs run at once and " + std::to_string(running) + " run now, so " +
                 Jobs(finishes) + " must finish before it is admitted";
  return e;
}

Result<json> Scheduler::Explain(TaskId task, Timestamp now) const {
  now = std::max(now, now_);
  const TaskInfo* t = state_.FindTask(task);
  if (t == nullptr) {
    for (const auto& [submitted, job] : queue_) {
      const JobInfo& j = state_.job(job);
      if (j.root_task == task && task != kNoTask) return ExplainQueued(j, now);
    }
    return NotFound("explain: the scheduler holds no task " + std::to_string(task));
  }
  json e;
  e["task"] = t->id;
  e["job"] = t->job;
  e["policy"] = std::string(policy_->name());
  e["state"] = explain::StateKey(t->state);
  e["root"] = t->root;
  const bool placed = t->computer != kNoComputer;
  e["computer"] = placed ? json(t->computer) : json(nullptr);
  e["rack"] = placed ? json(state_.rack_of(t->computer)) : json(nullptr);
  e["waited_s"] = ToSeconds(t->WaitTime(now));
  e["ran_s"] = ToSeconds(t->RunTime(now));
  if (t->orphan) {  // the policies no longer see it
    e["summary"] = "is being killed on " + explain::ComputerWords(t->computer) +
                   " because its job is over or its root withdrew it; it keeps its slot "
                   "until the worker confirms";
    return e;
  }
  policy_->Explain(state_, *t, now, &e);
  return e;
}

Result<json> Scheduler::ExplainJob(JobId job, Timestamp now) const {
  now = std::max(now, now_);
  const JobInfo* j = state_.FindJob(job);
  if (j == nullptr || j->finished) {
    return NotFound("explain: no queued or running job " + std::to_string(job));
  }
  if (!j->admitted) return ExplainQueued(*j, now);
  json d;
  policy_->Describe(state_, now, &d);
  json e;
  for (const json& row : d["jobs"]) {
    if (row.value("job", JobId{-1}) == job) e = row;
  }
  e["job"] = job;
  e["policy"] = std::string(policy_->name());
  e["state"] = "admitted";
  e["summary"] = "is admitted and runs " + std::to_string(j->placed) + " of its " +
                 std::to_string(j->demand()) + " worker tasks (" + std::to_string(j->waiting) +
                 " waiting); explain a task for why it waits";
  return e;
}

}  // namespace copse::scheduler

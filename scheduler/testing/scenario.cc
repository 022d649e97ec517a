#include "scheduler/testing/scenario.h"

#include <cstdio>
#include <cstdlib>

namespace copse::scheduler::testing {

std::unique_ptr<Scheduler> MakeScheduler(const std::string& policy, Topology topology,
                                         std::map<std::string, double> params,
                                         int max_running_jobs) {
  SchedulerOptions o;
  o.policy.policy = policy;
  o.policy.params = std::move(params);
  o.max_running_jobs = max_running_jobs;
  auto s = Scheduler::Create(std::move(topology), o);
  if (!s.ok()) {
    std::fprintf(stderr, "MakeScheduler(%s): %s\n", policy.c_str(), s.status().ToString().c_str());
    std::abort();
  }
  return std::move(s).value();
}

TaskLocality DataOn(ComputerId c, RackId rack, double gb) {
  TaskLocality l;
  const auto bytes = static_cast<int64_t>(gb * kGB);
  l.worst = {bytes, bytes};
  l.computers.push_back({c, {0, 0}});
  l.racks.push_back({rack, {bytes, 0}});
  return l;
}

TaskPlan MakeTask(TaskId id, double run_seconds, TaskLocality locality, double submit_after) {
  TaskPlan t;
  t.id = id;
  t.run = Sec(run_seconds);
  t.locality = std::move(locality);
  t.submit_after = Sec(submit_after);
  return t;
}

JobPlan MakeJob(JobId id, double arrival, std::vector<TaskPlan> tasks) {
  JobPlan p;
  p.id = id;
  p.arrival = Sec(arrival);
  p.attributes.root_in_cluster = false;
  p.tasks = std::move(tasks);
  return p;
}

std::vector<Act> Acts(const Driver& driver, double from, double to) {
  std::vector<Act> out;
  for (const auto& [at, d] : driver.decisions()) {
    double s = ToSeconds(at);
    if (s < from || s > to || d.kind == Decision::Kind::kAdmitJob) continue;
    out.emplace_back(s, d.kind, d.task, d.computer);
  }
  return out;
}

}  // namespace copse::scheduler::testing

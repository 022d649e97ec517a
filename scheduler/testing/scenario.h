// Small helpers shared by the scheduler's scenario tests: seconds as
// timestamps, a Scheduler for a policy name, tasks with data on one
// computer, and the starts and kills a Driver recorded.
// Thread-safety: plain functions.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/scheduler.h"
#include "scheduler/testing/driver.h"

namespace copse::scheduler::testing {

constexpr Timestamp Sec(double s) { return Timestamp{static_cast<int64_t>(s * 1e6)}; }
inline constexpr int64_t kGB = 1'000'000'000;
inline constexpr auto kStart = Decision::Kind::kStartTask;
inline constexpr auto kKill = Decision::Kind::kKillTask;

// A Scheduler for `policy` with `params`; aborts the test run on error.
std::unique_ptr<Scheduler> MakeScheduler(const std::string& policy, Topology topology,
                                         std::map<std::string, double> params = {},
                                         int max_running_jobs = 100);

// A task reading `gb` GB stored on computer `c` in rack `rack`: nothing
// crosses a switch there, `gb` crosses a rack switch elsewhere in the rack,
// and both switches in another rack.
TaskLocality DataOn(ComputerId c, RackId rack, double gb);

TaskPlan MakeTask(TaskId id, double run_seconds, TaskLocality locality = {},
                  double submit_after = 0);
// A job whose root runs outside the cluster.
JobPlan MakeJob(JobId id, double arrival, std::vector<TaskPlan> tasks);

// (seconds, kind, task, computer) of each start and kill in [from, to].
using Act = std::tuple<double, Decision::Kind, TaskId, ComputerId>;
std::vector<Act> Acts(const Driver& driver, double from, double to);

}  // namespace copse::scheduler::testing

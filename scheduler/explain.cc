#include "scheduler/explain.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "scheduler/fair_share.h"

namespace copse::scheduler::explain {

const char* StateKey(TaskState s) {
  switch (s) {
    case TaskState::kWaiting:
      return "waiting";
    case TaskState::kStartRequested:
      return "start_requested";
    case TaskState::kRunning:
      return "running";
    case TaskState::kKillRequested:
      return "kill_requested";
  }
  return "unknown";
}

const char* PlacementKey(const ClusterState& s, const TaskInfo& t, ComputerId c) {
  if (ClusterState::LocalityFree(t)) return "no_preference";
  if (ClusterState::PrefersComputer(t, c)) return "preferred_computer";
  if (s.PrefersRack(t, s.rack_of(c))) return "preferred_rack";
  return "other";
}

std::string PlacementWords(const char* key) {
  const std::string k = key;
  if (k == "preferred_computer") return "a preferred computer (its input is there)";
  if (k == "preferred_rack") return "a computer in a preferred rack";
  if (k == "no_preference") return "a computer (it reads no input worth moving)";
  return "a computer away from its input";
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string Ordinal(size_t n) {
  const char* suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    if (n % 10 == 2) suffix = "nd";
    if (n % 10 == 3) suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

std::string ComputerWords(ComputerId c) { return "computer " + std::to_string(c); }

std::vector<int> FairShares(const ClusterState& s, const std::vector<int>& demand) {
  std::vector<JobDemand> d;
  const std::vector<JobId>& jobs = s.admitted_jobs();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobAttributes& a = s.job(jobs[i]).attributes;
    d.push_back({demand[i], a.min_tasks.value_or(0), a.max_tasks.value_or(JobDemand{}.cap)});
  }
  return QuincyFairShares(s.WorkerSlots(), d);
}

nlohmann::json DefaultJobs(const ClusterState& s) {
  const std::vector<JobId>& jobs = s.admitted_jobs();
  std::vector<int> demand;
  for (JobId j : jobs) demand.push_back(s.job(j).demand());
  std::vector<int> shares = FairShares(s, demand);
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& j = s.job(jobs[i]);
    rows.push_back({{"job", j.id},
                    {"running", j.placed},
                    {"waiting", j.waiting},
                    {"fair_share", shares[i]},
                    {"lower_bound", nullptr},
                    {"upper_bound", nullptr}});
  }
  return rows;
}

std::string GenericSummary(const ClusterState& s, const TaskInfo& t, Timestamp now) {
  switch (t.state) {
    case TaskState::kWaiting:
      return "waits to be scheduled; it has waited " + Num(ToSeconds(t.WaitTime(now))) +
             " s in all";
    case TaskState::kStartRequested:
      return "is starting on " + ComputerWords(t.computer) + ", " +
             PlacementWords(PlacementKey(s, t, t.computer)) +
             "; the worker has not confirmed the start yet";
    case TaskState::kRunning:
      return "runs on " + ComputerWords(t.computer) + ", " +
             PlacementWords(PlacementKey(s, t, t.computer));
    case TaskState::kKillRequested:
      return "is being killed on " + ComputerWords(t.computer) +
             "; it keeps its slot until the worker confirms";
  }
  return "";
}

}  // namespace copse::scheduler::explain

// HfsPolicy's explanations (hfs_policy.h; fields in docs/scheduler.md
// "Explaining decisions"): delay scheduling's levels and waits, pools and
// their shares, and the order jobs are offered slots in.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "scheduler/explain.h"
#include "scheduler/hfs_policy.h"

namespace copse::scheduler {

using explain::Num;
using nlohmann::json;

namespace {

const char* LevelName(int level) {
  return level == 0 ? "node_local" : level == 1 ? "rack_local" : "any";
}

const char* LevelWords(int level) {
  return level == 0 ? "node-local" : level == 1 ? "rack-local" : "any";
}

json SecondsOrNull(Duration d) { return d == kNever ? json(nullptr) : json(ToSeconds(d)); }

// Whether computer `c` is a slot task `t` may take at `level`.
bool Eligible(const ClusterState& s, const TaskInfo& t, ComputerId c, int level) {
  if (ClusterState::LocalityFree(t) || ClusterState::PrefersComputer(t, c)) return true;
  if (level >= 1 && s.PrefersRack(t, s.rack_of(c))) return true;
  return level >= 2;
}

std::string List(const std::vector<ComputerId>& cs) {
  std::string out;
  for (size_t i = 0; i < cs.size() && i < 5; ++i) out += (i ? ", " : "") + std::to_string(cs[i]);
  if (cs.size() > 5) out += ", ...";
  return out;
}

}  // namespace

Duration HfsPolicy::WaitAt(const JobState& js, Timestamp now) const {
  if (!js.skipped || !last_heartbeat_ || now <= *last_heartbeat_) return js.wait;
  return SatAdd(js.wait, now - *last_heartbeat_);
}

int HfsPolicy::AllowedLevel(const JobState& js, Duration wait) const {
  if (js.level >= 2) return 2;
  if (js.level == 1) return wait >= options_.rack_wait ? 2 : 1;
  if (wait >= SatAdd(options_.node_wait, options_.rack_wait)) return 2;
  return wait >= options_.node_wait ? 1 : 0;
}

void HfsPolicy::Describe(const ClusterState& s, Timestamp now, json* out) const {
  (*out)["parameters"] = {{"node_locality_wait_s", SecondsOrNull(options_.node_wait)},
                          {"rack_locality_wait_s", SecondsOrNull(options_.rack_wait)},
                          {"fair_share_timeout_s", SecondsOrNull(options_.fair_share_timeout)},
                          {"fair_share_threshold", options_.fair_share_threshold}};
  json rows = explain::DefaultJobs(s);
  for (json& row : rows) {
    auto js = jobs_.find(row["job"].get<JobId>());
    if (js == jobs_.end()) continue;
    auto pool = pools_.find(js->second.pool);
    row["pool"] = js->second.pool;
    row["fair_share"] = pool != pools_.end() ? json(pool->second.fair_share) : json(nullptr);
    row["level"] = LevelName(js->second.level);
    row["wait_s"] = ToSeconds(WaitAt(js->second, now));
  }
  (*out)["jobs"] = std::move(rows);
  json pools = json::array();
  for (const auto& [name, p] : pools_) {
    pools.push_back({{"pool", name},
                     {"weight", p.spec.weight},
                     {"min_share", p.spec.min_share},
                     {"fifo", p.spec.fifo},
                     {"min_share_timeout_s", SecondsOrNull(p.spec.min_share_timeout)},
                     {"running", p.running},
                     {"demand", p.demand},
                     {"fair_share", p.fair_share}});
  }
  (*out)["pools"] = std::move(pools);
}

void HfsPolicy::LastRound(json* out) const {
  (*out)["at_s"] = last_heartbeat_ ? json(ToSeconds(*last_heartbeat_)) : json(nullptr);
}

void HfsPolicy::Explain(const ClusterState& s, const TaskInfo& t, Timestamp now, json* out) const {
  json& e = *out;
  auto js = jobs_.find(t.job);
  if (js != jobs_.end()) {
    const JobState& j = js->second;
    auto pool = pools_.find(j.pool);
    e["job_level"] = LevelName(j.level);
    e["job_wait_s"] = ToSeconds(WaitAt(j, now));
    e["pool"] = pool == pools_.end() ? json(nullptr)
                                     : json{{"pool", j.pool},
                                            {"running", pool->second.running},
                                            {"demand", pool->second.demand},
                                            {"fair_share", pool->second.fair_share},
                                            {"min_share", pool->second.spec.min_share}};
  }
  if (t.root) {
    e["summary"] = explain::GenericSummary(s, t, now) +
                   (t.state == TaskState::kWaiting
                        ? " (roots go to a random computer with a free slot and no root)"
                        : "");
    return;
  }
  if (t.state != TaskState::kWaiting || js == jobs_.end()) {
    if (t.computer != kNoComputer) {
      const char* key = explain::PlacementKey(s, t, t.computer);
      e["placement"] = key;
      e["locality"] =
          std::string(key) == "preferred_computer" || std::string(key) == "no_preference"
              ? "node_local"
          : std::string(key) == "preferred_rack" ? "rack_local"
                                                 : "any";
    }
    e["summary"] = explain::GenericSummary(s, t, now);
    return;
  }
  ExplainWaiting(s, t, now, e);
}

void HfsPolicy::ExplainWaiting(const ClusterState& s, const TaskInfo& t, Timestamp now,
                               json& e) const {
  const JobState& j = jobs_.at(t.job);
  const Duration wait = WaitAt(j, now);
  const int allowed = AllowedLevel(j, wait);
  Duration next = kNever;  // the wait at which the next level opens
  if (allowed == 0) next = options_.node_wait;
  if (allowed == 1) {
    next = j.level == 1 ? options_.rack_wait : SatAdd(options_.node_wait, options_.rack_wait);
  }
  const Duration left = next == kNever ? kNever : std::max(Duration{0}, next - wait);
  e["allowed_level"] = LevelName(allowed);
  e["next_level"] = allowed < 2 ? json(LevelName(allowed + 1)) : json(nullptr);
  e["next_level_in_s"] = allowed < 2 ? SecondsOrNull(left) : json(nullptr);
  e["wait_counting"] = j.skipped;
  std::vector<JobId> order = SortedJobs(s);
  auto at = std::find(order.begin(), order.end(), t.job);
  e["rank"] = at == order.end() ? json(nullptr) : json(at - order.begin() + 1);
  e["jobs_ahead"] = std::vector<JobId>(order.begin(), at == order.end() ? order.begin() : at);
  std::vector<ComputerId> free = s.ComputersWithFreeSlots(), fits;
  for (ComputerId c : free) {
    if (Eligible(s, t, c, allowed)) fits.push_back(c);
  }
  e["free_computers_it_may_take"] = fits;
  const int max = s.job(t.job).attributes.max_tasks.value_or(1 << 30);
  const std::string job = "job " + std::to_string(t.job);
  if (s.job(t.job).placed >= max) {
    e["summary"] = "waits: " + job + " runs its max_tasks (" + std::to_string(max) + ")";
  } else if (!fits.empty()) {
    e["summary"] = "waits for the next heartbeat: computer " + List(fits) +
                   " has a free slot it may take at its job's " + LevelWords(allowed) +
                   " level; jobs ahead of " + job + " in the HFS order are offered it first";
  } else if (free.empty()) {
    e["summary"] =
        "waits: every slot is busy; free slots go to jobs in HFS order (pools below "
        "their minimum share first, then by running tasks per weight) and " +
        job + " is " +
        (at == order.end() ? "not ranked" : "number " + std::to_string(at - order.begin() + 1)) +
        " of " + std::to_string(order.size());
  } else {
    std::string s1 =
        "waits for a " + std::string(LevelWords(allowed)) + " slot: no free computer is " +
        (allowed == 0 ? "one of its preferred computers" : "in its preferred racks") + "; " + job +
        " has waited " + Num(ToSeconds(wait)) + " s at level " + LevelWords(j.level);
    if (left != kNever) {
      s1 +=
          " and may take " + std::string(LevelWords(allowed + 1)) + " slots in " +
          Num(ToSeconds(left)) + " s" +
          (j.skipped ? "" : " of being offered slots (its wait grows only while it declines them)");
    }
    e["summary"] = s1;
  }
}

}  // namespace copse::scheduler

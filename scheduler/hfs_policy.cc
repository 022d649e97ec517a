#include "scheduler/hfs_policy.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "scheduler/fair_share.h"

namespace copse::scheduler {

HfsPolicy::HfsPolicy(HfsOptions options, uint64_t seed)
    : options_(options), roots_(seed, /*prefer_free=*/true) {}

std::string HfsPolicy::PoolOf(const JobInfo& j) {
  if (!j.attributes.pool.name.empty()) return j.attributes.pool.name;
  std::string own = "job:";
  own += std::to_string(j.id);
  return own;
}

int HfsPolicy::level(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : it->second.level;
}

Duration HfsPolicy::wait(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? Duration{0} : it->second.wait;
}

double HfsPolicy::fair_share(const std::string& pool) const {
  auto it = pools_.find(pool);
  return it == pools_.end() ? 0 : it->second.fair_share;
}

void HfsPolicy::Observe(const ClusterState& s, const Change& ch, Timestamp now) {
  (void)now;
  switch (ch.kind) {
    case Change::Kind::kJobAdmitted:
      jobs_[ch.job] = JobState{0, Duration{0}, false, PoolOf(s.job(ch.job))};
      break;
    case Change::Kind::kJobRemoved:
      jobs_.erase(ch.job);
      running_.erase(ch.job);
      roots_.Forget(ch.job);
      break;
    case Change::Kind::kTaskWaiting:
      if (!ch.task->root) index_.Add(s, *ch.task);
      break;
    case Change::Kind::kTaskPlaced:
    case Change::Kind::kTaskKillRequested:
    case Change::Kind::kTaskRemoved:
      index_.Remove(*ch.task);
      break;
    default:
      break;
  }
}

void HfsPolicy::UpdatePools(const ClusterState& s, Timestamp now) {
  std::map<std::string, PoolState> next;
  running_.clear();
  for (JobId id : s.admitted_jobs()) {
    const JobInfo& j = s.job(id);
    std::string name = PoolOf(j);
    auto [it, fresh] = next.emplace(name, PoolState{});
    PoolState& p = it->second;
    if (fresh) {
      auto old = pools_.find(name);
      p = old != pools_.end() ? old->second : PoolState{j.attributes.pool, 0, 0, 0, now, now};
      p.running = p.demand = 0;
    }
    p.running += j.placed;
    p.demand += j.demand();
    running_[id] = j.placed;
  }
  std::vector<PoolDemand> demand;
  demand.reserve(next.size());
  for (const auto& [name, p] : next) {
    demand.push_back(
        {p.spec.weight, static_cast<double>(p.spec.min_share), static_cast<double>(p.demand)});
  }
  std::vector<double> shares = WeightedFairShares(s.WorkerSlots(), demand);
  size_t i = 0;
  for (auto& [name, p] : next) {
    p.fair_share = shares[i++];
    if (p.running >= std::min(p.spec.min_share, p.demand)) p.at_min_share = now;
    if (p.running >= options_.fair_share_threshold * p.fair_share - 1e-9) p.at_fair_share = now;
  }
  pools_ = std::move(next);
}

std::vector<JobId> HfsPolicy::SortedJobs(const ClusterState& s) const {
  struct Key {
    bool needy;
    double ratio;
    std::string pool;
    double job_key;
    uint64_t seq;
    JobId id;
  };
  std::vector<Key> keys;
  for (const auto& [id, js] : jobs_) {
    const JobInfo& j = s.job(id);
    int running = running_.count(id) ? running_.at(id) : 0;
    if (index_.all().FirstOf(id) == kNoTask ||
        running >= j.attributes.max_tasks.value_or(1 << 30)) {
      continue;
    }
    const PoolState& p = pools_.at(js.pool);
    int ms = std::min(p.spec.min_share, p.demand);
    bool needy = p.running < ms;
    double ratio = needy ? static_cast<double>(p.running) / ms : p.running / p.spec.weight;
    double job_key = p.spec.fifo ? 0 : running;
    keys.push_back({needy, ratio, js.pool, job_key, j.admit_seq, id});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.needy != b.needy) return a.needy;
    if (a.ratio != b.ratio) return a.ratio < b.ratio;
    if (a.pool != b.pool) return a.pool < b.pool;
    if (a.job_key != b.job_key) return a.job_key < b.job_key;
    return a.seq < b.seq;
  });
  std::vector<JobId> out;
  out.reserve(keys.size());
  for (const Key& k : keys) out.push_back(k.id);
  return out;
}

bool HfsPolicy::Assign(const ClusterState& s, ComputerId c, std::vector<Decision>* out) {
  for (JobId id : SortedJobs(s)) {
    JobState& js = jobs_.at(id);
    TaskId t = index_.node_local(c).FirstOf(id);
    if (t == kNoTask) t = index_.anywhere().FirstOf(id);
    int level = 0;
    if (t == kNoTask) {
      t = index_.rack_local(s.rack_of(c)).FirstOf(id);
      level = 1;
      if (t != kNoTask && !(js.level >= 1 || js.wait >= options_.node_wait)) t = kNoTask;
    }
    if (t == kNoTask) {
      bool may = js.level == 2 || (js.level == 1 && js.wait >= options_.rack_wait) ||
                 (js.level == 0 && js.wait >= SatAdd(options_.node_wait, options_.rack_wait));
      if (may) t = index_.all().FirstOf(id);
      level = 2;
    }
    if (t == kNoTask) {
      js.skipped = true;
      continue;
    }
    js.wait = Duration{0};
    js.level = level;
    out->push_back({Decision::Kind::kStartTask, id, t, c, false});
    index_.Remove(s.task(t));
    ++running_[id];
    ++pools_.at(js.pool).running;
    return true;
  }
  return false;
}

void HfsPolicy::Preempt(const ClusterState& s, Timestamp now, std::vector<Decision>* out) {
  int need = 0;
  for (const auto& [name, p] : pools_) {
    int ms = std::min(p.spec.min_share, p.demand);
    int n = 0;
    if (p.running < ms && now - p.at_min_share >= p.spec.min_share_timeout) n = ms - p.running;
    if (p.running < options_.fair_share_threshold * p.fair_share &&
        now - p.at_fair_share >= options_.fair_share_timeout) {
      n = std::max(n, static_cast<int>(std::floor(p.fair_share + 1e-9)) - p.running);
    }
    need += std::max(n, 0);
  }
  for (JobId id : s.admitted_jobs()) need -= s.job(id).killing;  // kills already under way
  if (need <= 0) return;
  std::set<TaskId> killing;
  for (const Decision& d : *out) killing.insert(d.task);
  std::vector<const TaskInfo*> victims;
  for (const auto& [id, js] : jobs_) {
    if (pools_.at(js.pool).running <= pools_.at(js.pool).fair_share) continue;
    for (TaskId t : s.job(id).workers) {
      if (s.task(t).placed() && !killing.count(t)) victims.push_back(&s.task(t));
    }
  }
  std::sort(victims.begin(), victims.end(), [](const TaskInfo* a, const TaskInfo* b) {
    return a->placed_seq > b->placed_seq;  // most recently launched first
  });
  for (const TaskInfo* v : victims) {
    if (need == 0) break;
    PoolState& p = pools_.at(jobs_.at(v->job).pool);
    if (p.running - 1 < p.fair_share - 1e-9) continue;  // never below its share
    out->push_back({Decision::Kind::kKillTask, v->job, v->id, v->computer, false});
    --p.running;
    --running_[v->job];
    --need;
  }
}

Status HfsPolicy::Schedule(const ClusterState& s, Timestamp now, std::vector<Decision>* out) {
  if (last_heartbeat_) {  // Algorithm 3: skipped jobs wait the time since the last heartbeat
    for (auto& [id, js] : jobs_) {
      if (js.skipped) js.wait = SatAdd(js.wait, now - *last_heartbeat_);
      js.skipped = false;
    }
  }
  last_heartbeat_ = now;
  UpdatePools(s, now);
  SlotLedger ledger(s);
  roots_.Place(s, ledger, out);
  Preempt(s, now, out);
  if (!index_.sized()) return Status::Ok();  // no task seen yet
  for (ComputerId c = 0; c < s.num_computers(); ++c) {
    while (ledger.free(c) > 0 && Assign(s, c, out)) ledger.Take(c);
  }
  return Status::Ok();
}

std::optional<Timestamp> HfsPolicy::NextWakeup(const ClusterState& s) const {
  if (!last_heartbeat_) return std::nullopt;
  const Timestamp last = *last_heartbeat_;
  std::optional<Timestamp> next;
  auto consider = [&](Timestamp at) {
    if (at > last && (!next || at < *next)) next = at;
  };
  // When a job that has waited `waited` reaches `total`.
  auto reach = [&](Duration total, Duration waited) {
    if (total != kNever && total > waited) consider(SatAdd(last, total - waited));
  };
  if (s.free_slots_total() > 0) {
    const Duration both = SatAdd(options_.node_wait, options_.rack_wait);
    for (const auto& [id, js] : jobs_) {
      if (!js.skipped) continue;
      if (js.level == 0) reach(js.wait < options_.node_wait ? options_.node_wait : both, js.wait);
      if (js.level == 1) reach(options_.rack_wait, js.wait);
    }
  }
  for (const auto& [name, p] : pools_) {
    if (p.running < std::min(p.spec.min_share, p.demand) && p.spec.min_share_timeout != kNever) {
      consider(SatAdd(p.at_min_share, p.spec.min_share_timeout));
    }
    if (p.running < options_.fair_share_threshold * p.fair_share &&
        options_.fair_share_timeout != kNever) {
      consider(SatAdd(p.at_fair_share, options_.fair_share_timeout));
    }
  }
  return next;
}

}  // namespace copse::scheduler

#include "master/scheduling_record.h"

#include <optional>
#include <utility>

#include "master/metrics.h"

namespace copse::master {

void SchedulingRecord::OnRound(const scheduler::RoundInfo& info, nlohmann::json policy) {
  if (metrics_) {
    // A Quincy policy counts the rounds it solved; a round that solved
    // none leaves its last solve's time in place.
    std::optional<Duration> solve;
    const nlohmann::json& p = policy;
    if (p.is_object() && p.contains("rounds") && p["rounds"].is_number_unsigned() &&
        p.contains("solve_ms") && p["solve_ms"].is_number()) {
      uint64_t solves = p["rounds"].get<uint64_t>();
      if (solves != policy_solves_) {
        policy_solves_ = solves;
        solve = Duration(static_cast<int64_t>(p["solve_ms"].get<double>() * 1000.0));
      }
    }
    metrics_->SchedulerRound(info.wall, info.decisions, solve);
  }
  if (rounds_.size() == kRoundsKept) rounds_.pop_front();
  rounds_.push_back(Round{info.at, info.wall, info.decisions, std::move(policy)});
}

void SchedulingRecord::OnLaunchLatency(Duration latency) {
  latencies_.push_back(latency.count());
  if (latencies_.size() > kLatenciesKept) latencies_.pop_front();
}

void SchedulingRecord::OnVertexRunEnded(std::string_view outcome) {
  if (metrics_) metrics_->VertexRunEnded(outcome);
}

}  // namespace copse::master

// SchedulingRecord: the read side of scheduling in the master. The
// scheduling service decides; as it does it reports each round, the
// latency of each launch and the end of each vertex run to a
// SchedulingObserver, and keeps nothing of them itself. The record is that
// observer: it keeps the latest rounds (the HTTP API's scheduler document)
// and the decision latencies (`copse bench engine`), and feeds the
// Prometheus metrics (master/metrics.h).
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/clock.h"
#include "scheduler/scheduling_loop.h"

namespace copse::master {

class MasterMetrics;

// What the scheduling service reports as it decides. Calls happen while it
// handles an event: they must not call back into it.
class SchedulingObserver {
 public:
  virtual ~SchedulingObserver() = default;
  // A scheduling round (a Schedule() call) ended; `policy` holds the
  // policy's statistics of it (Policy::LastRound).
  virtual void OnRound(const scheduler::RoundInfo& info, nlohmann::json policy) = 0;
  // A launch went out `latency` after the oldest event that was waiting for
  // a round.
  virtual void OnLaunchLatency(Duration latency) = 0;
  // A vertex run ended as `outcome` (completed, failed, preempted, lost,
  // withdrawn).
  virtual void OnVertexRunEnded(std::string_view outcome) = 0;
};

class SchedulingRecord final : public SchedulingObserver {
 public:
  // `metrics`, when not null, is fed each round and each end of a vertex
  // run. REQUIRES: it outlives the record.
  explicit SchedulingRecord(MasterMetrics* metrics = nullptr) : metrics_(metrics) {}

  // One round as the API lists it.
  struct Round {
    Timestamp at{0};   // the scheduling service's clock
    Duration wall{0};  // how long the round took
    size_t decisions = 0;
    nlohmann::json policy;  // the policy's statistics (Policy::LastRound)
  };
  // The latest rounds, oldest first (at most kRoundsKept).
  static constexpr size_t kRoundsKept = 200;
  const std::deque<Round>& rounds() const { return rounds_; }

  // Scheduling decision latencies (event -> launch sent), in µs, since the
  // last ResetStats; at most the latest kLatenciesKept.
  static constexpr size_t kLatenciesKept = 100'000;
  const std::deque<int64_t>& decision_latencies() const { return latencies_; }
  void ResetStats() { latencies_.clear(); }

  void OnRound(const scheduler::RoundInfo& info, nlohmann::json policy) override;
  void OnLaunchLatency(Duration latency) override;
  void OnVertexRunEnded(std::string_view outcome) override;

 private:
  MasterMetrics* const metrics_;
  uint64_t policy_solves_ = 0;  // the policy's count of solved rounds, as last seen
  std::deque<Round> rounds_;
  std::deque<int64_t> latencies_;
};

}  // namespace copse::master

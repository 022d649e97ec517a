// MasterMetrics: the master's Prometheus metrics, served at /metrics on its
// HTTP port in the text exposition format (docs/deploy.md "Metrics" lists
// them). Definitions live here alone; prometheus-cpp (Debian
// prometheus-cpp-dev: its registry, metric types and text serializer) is
// included only by metrics.cc.
//
// Counters and histograms are counted where things happen (the scheduling
// service's rounds and ends of vertex runs, the HTTP server's responses);
// gauges are set from the master's state when a scrape asks (SetState, on
// the master's loop: master/api.h). Labels take a few fixed values (states,
// outcomes, status codes), never job ids or paths.
// Thread-safety: thread-safe (prometheus-cpp's metrics are atomic or locked).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace copse::master {

class MasterMetrics {
 public:
  MasterMetrics();
  ~MasterMetrics();
  MasterMetrics(const MasterMetrics&) = delete;
  MasterMetrics& operator=(const MasterMetrics&) = delete;

  // One scheduling round: its wall time, its decisions, and the min-cost
  // flow solve's time when the round solved one (Quincy policies).
  void SchedulerRound(Duration wall, size_t decisions, std::optional<Duration> solve);
  // A vertex run ended as `outcome`: completed, failed, preempted, lost or
  // withdrawn (anything else counts as "other").
  void VertexRunEnded(std::string_view outcome);
  // The HTTP server answered a request with `status`.
  void HttpResponse(int status);

  // What the gauges show, read from the master's state.
  struct State {
    std::map<std::string, int> computers;  // by state (live, dead, unknown)
    int slots = 0;                         // of every computer of the config
    int busy_slots = 0;                    // taken by running tasks and roots
    std::map<std::string, int> jobs;       // in the job table, by state
    uint64_t dfs_files = 0;
    uint64_t dfs_blocks = 0;
    uint64_t dfs_under_replicated_blocks = 0;
    uint64_t dfs_stored_bytes = 0;  // committed replicas' bytes on every computer
  };
  void SetState(const State& state);

  // Every metric in the text exposition format (version 0.0.4).
  std::string Serialize() const;
  // The content type of Serialize()'s text.
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace copse::master

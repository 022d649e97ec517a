#include "master/metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace copse::master {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(MasterMetricsTest, EveryFixedLabelValueIsThereFromTheStart) {
  MasterMetrics m;
  std::string t = m.Serialize();
  for (const char* o : {"completed", "failed", "preempted", "lost", "withdrawn", "other"}) {
    EXPECT_TRUE(Has(t, std::string("copse_vertex_runs_total{outcome=\"") + o + "\"} 0")) << o;
  }
  for (const char* s : {"live", "dead", "unknown"}) {
    EXPECT_TRUE(Has(t, std::string("copse_computers{state=\"") + s + "\"} 0")) << s;
  }
  EXPECT_TRUE(Has(t, "# TYPE copse_scheduler_round_duration_seconds histogram")) << t;
  EXPECT_TRUE(Has(t, "copse_scheduler_rounds_total 0")) << t;
}

TEST(MasterMetricsTest, OutcomesCountedUnderTheirLabelAndUnknownOnesUnderOther) {
  MasterMetrics m;
  m.VertexRunEnded("completed");
  m.VertexRunEnded("completed");
  m.VertexRunEnded("lost");
  m.VertexRunEnded("started");  // not an end
  std::string t = m.Serialize();
  EXPECT_TRUE(Has(t, "copse_vertex_runs_total{outcome=\"completed\"} 2")) << t;
  EXPECT_TRUE(Has(t, "copse_vertex_runs_total{outcome=\"lost\"} 1")) << t;
  EXPECT_TRUE(Has(t, "copse_vertex_runs_total{outcome=\"other\"} 1")) << t;
  EXPECT_EQ(t.find("started"), std::string::npos);
}

TEST(MasterMetricsTest, RoundsObserveTheSolveOnlyWhenThereWasOne) {
  MasterMetrics m;
  m.SchedulerRound(Duration(3000), 4, Duration(2000));  // 3 ms, 2 ms solve
  m.SchedulerRound(Duration(20'000), 1, std::nullopt);  // 20 ms, no solve
  std::string t = m.Serialize();
  EXPECT_TRUE(Has(t, "copse_scheduler_rounds_total 2")) << t;
  EXPECT_TRUE(Has(t, "copse_scheduler_decisions_total 5")) << t;
  EXPECT_TRUE(Has(t, "copse_scheduler_round_duration_seconds_count 2")) << t;
  EXPECT_TRUE(Has(t, "copse_scheduler_round_duration_seconds_bucket{le=\"0.005\"} 1")) << t;
  EXPECT_TRUE(Has(t, "copse_scheduler_round_duration_seconds_bucket{le=\"0.025\"} 2")) << t;
  EXPECT_TRUE(Has(t, "copse_scheduler_solve_duration_seconds_count 1")) << t;
  EXPECT_TRUE(Has(t, "copse_scheduler_solve_duration_seconds_sum 0.002")) << t;
}

TEST(MasterMetricsTest, HttpResponsesByCodeAndGaugesAsSet) {
  MasterMetrics m;
  m.HttpResponse(200);
  m.HttpResponse(200);
  m.HttpResponse(404);
  m.HttpResponse(-1);
  MasterMetrics::State s;
  s.computers = {{"live", 5}, {"dead", 1}};
  s.slots = 12;
  s.busy_slots = 3;
  s.jobs = {{"succeeded", 2}, {"running", 1}};
  s.dfs_files = 7;
  s.dfs_blocks = 9;
  s.dfs_under_replicated_blocks = 1;
  s.dfs_stored_bytes = 123456789;
  m.SetState(s);
  std::string t = m.Serialize();
  EXPECT_TRUE(Has(t, "copse_http_requests_total{code=\"200\"} 2")) << t;
  EXPECT_TRUE(Has(t, "copse_http_requests_total{code=\"404\"} 1")) << t;
  EXPECT_TRUE(Has(t, "copse_http_requests_total{code=\"other\"} 1")) << t;
  EXPECT_TRUE(Has(t, "copse_computers{state=\"live\"} 5")) << t;
  EXPECT_TRUE(Has(t, "copse_computers{state=\"unknown\"} 0")) << t;
  EXPECT_TRUE(Has(t, "copse_slots 12")) << t;
  EXPECT_TRUE(Has(t, "copse_busy_slots 3")) << t;
  EXPECT_TRUE(Has(t, "copse_jobs{state=\"succeeded\"} 2")) << t;
  EXPECT_TRUE(Has(t, "copse_jobs{state=\"killed\"} 0")) << t;
  EXPECT_TRUE(Has(t, "copse_dfs_blocks 9")) << t;
  EXPECT_TRUE(Has(t, "copse_dfs_stored_bytes 123456789")) << t;
  // A computer that went from live to dead: the gauges follow the state.
  s.computers = {{"live", 4}, {"dead", 2}};
  m.SetState(s);
  t = m.Serialize();
  EXPECT_TRUE(Has(t, "copse_computers{state=\"live\"} 4")) << t;
  EXPECT_TRUE(Has(t, "copse_computers{state=\"dead\"} 2")) << t;
}

}  // namespace
}  // namespace copse::master

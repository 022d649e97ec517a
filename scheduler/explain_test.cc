// Explanations (Scheduler::Describe/Explain, Policy::Explain/FlowGraph;
// docs/scheduler.md "Explaining decisions"): for each policy family a task
// that waits for a known reason and one that runs, checked field by field;
// the Quincy numbers checked against the flow's own optimality conditions
// (every arc's parts add up to its cost; the chosen arc's total is the
// cheapest at the solved prices); admission; the aggregated flow graph's
// flows adding up; and explaining never changing a decision.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "scheduler/policy_factory.h"
#include "scheduler/quincy_policy.h"
#include "scheduler/scheduler.h"
#include "scheduler/testing/driver.h"
#include "scheduler/testing/scenario.h"

namespace copse::scheduler {
namespace {

using nlohmann::json;
using namespace testing;  // NOLINT(google-build-using-namespace)

constexpr double kEps = 1e-9;

json MustExplain(const Scheduler& s, TaskId task, double at) {
  Result<json> e = s.Explain(task, Sec(at));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? *e : json::object();
}

bool Contains(const json& e, const std::string& text) {
  return e["summary"].get<std::string>().find(text) != std::string::npos;
}

// The checks every Quincy explanation with prices must pass: each arc's
// parts add up to its cost (a "cap" part only where the cost is Ω); its
// total is cost + price; and the flow is optimal at the solved prices — an
// arc with room has a total no lower than the task node's price, an arc
// with flow one no higher.
void CheckQuincyArcs(const json& e, double max_cost) {
  ASSERT_TRUE(e["prices"].get<bool>()) << e.dump(2);
  const double node = e["node_price"].get<double>();
  int chosen = 0;
  for (const json& a : e["arcs"]) {
    double sum = 0;
    for (const auto& [key, v] : a["parts"].items()) sum += v.get<double>();
    EXPECT_NEAR(sum, a["cost"].get<double>(), kEps) << a.dump();
    if (a["parts"].contains("cap")) {
      EXPECT_LT(a["parts"]["cap"].get<double>(), 0) << a.dump();
      EXPECT_NEAR(a["cost"].get<double>(), max_cost, kEps) << a.dump();
    }
    const double total = a["total"].get<double>();
    EXPECT_NEAR(total, a["cost"].get<double>() + a["price"].get<double>(), kEps);
    if (a["flow"].get<int64_t>() < a["capacity"].get<int64_t>()) {
      EXPECT_GE(total, node - kEps) << a.dump();
    }
    if (a["flow"].get<int64_t>() > 0) {
      EXPECT_LE(total, node + kEps) << a.dump();
      EXPECT_TRUE(a["chosen"].get<bool>());
      ++chosen;
    }
  }
  EXPECT_EQ(chosen, 1) << e.dump(2);
}

// ---- Admission ----

TEST(ExplainTest, UnknownTaskAndJobAreNotFound) {
  auto s = MakeScheduler("QFP", Topology::Uniform(1, 2));
  EXPECT_EQ(s->Explain(12345, Sec(0)).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(s->ExplainJob(7, Sec(0)).status().code(), StatusCode::kNotFound);
}

TEST(ExplainTest, QueuedJobIsExplainedByItsPlaceBehindK) {
  auto s = MakeScheduler("G", Topology::Uniform(1, 2), {}, /*max_running_jobs=*/1);
  for (JobId j = 1; j <= 3; ++j) {
    JobSubmitted e;
    e.job = j;
    e.root_task = 1000 + j;
    e.attributes.submitted = Sec(0.1 * static_cast<double>(j));
    ASSERT_TRUE(s->Handle(e, Sec(1)).ok());
  }
  ASSERT_TRUE(s->Schedule(Sec(1)).ok());
  json e = MustExplain(*s, 1003, 2);
  EXPECT_EQ(e["state"], "queued_job");
  EXPECT_EQ(e["job"], 3);
  EXPECT_EQ(e["position"], 2);
  EXPECT_EQ(e["ahead"], json::array({2}));
  EXPECT_EQ(e["max_running_jobs"], 1);
  EXPECT_EQ(e["running_jobs"], 1);
  EXPECT_EQ(e["finishes_needed"], 2);
  EXPECT_TRUE(Contains(e, "2nd in the admission queue")) << e["summary"];
  Result<json> j = s->ExplainJob(3, Sec(2));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["position"], 2);
  json d = s->Describe(Sec(2));
  EXPECT_EQ(d["admitted"], json::array({1}));
  ASSERT_EQ(d["queue"].size(), 2u);
  EXPECT_EQ(d["queue"][0]["job"], 2);
  EXPECT_EQ(d["queue"][0]["position"], 1);
  EXPECT_EQ(d["queue"][1]["job"], 3);
  EXPECT_EQ(d["max_running_jobs"], 1);
  // The admitted job's root is a task like any other.
  EXPECT_EQ(MustExplain(*s, 1001, 2)["state"], "start_requested");
}

// ---- Quincy ----

// Two racks of two one-slot computers (c0 c1 | c2 c3). Job 1 starts t1..t4
// on the computers holding their input (t_i on c_{i-1}); t5 (1 GB on c0)
// follows at 1 s and waits. Job 2 arrives at 8 s with u1 (1 GB on c0); u2
// follows at 10 s. Under QFP (quincy_policy_test.cc works it out) t1 is
// preempted for u1 at 8 s and t2 for u2 at 10 s: the shares are then (2, 2).
void TwoJobs(Driver& d) {
  std::vector<TaskPlan> j1;
  for (int i = 0; i < 4; ++i) j1.push_back(MakeTask(1 + i, 1000, DataOn(i, i / 2, 1)));
  j1.push_back(MakeTask(5, 1000, DataOn(0, 0, 1), 1));
  d.AddJob(MakeJob(1, 0, j1));
  d.AddJob(
      MakeJob(2, 8, {MakeTask(21, 1000, DataOn(0, 0, 1)), MakeTask(22, 1000, DataOn(0, 0, 1), 2)}));
}

TEST(ExplainTest, QuincyTaskWaitsBecauseItsJobRunsItsFairShareUnderQFP) {
  auto s = MakeScheduler("QFP", Topology::Uniform(2, 2));
  Driver d(*s);
  TwoJobs(d);
  ASSERT_TRUE(d.RunUntil(Sec(12)).ok());
  json e = MustExplain(*s, 5, 12);
  EXPECT_EQ(e["state"], "waiting");
  EXPECT_EQ(e["policy"], "QFP");
  CheckQuincyArcs(e, 1000);
  // Its flow stays unscheduled: the chosen option, no dearer than any slot.
  EXPECT_EQ(e["chosen"]["to"]["kind"], "unscheduled");
  const json& best = e["cheapest_placement"];
  ASSERT_TRUE(best.is_object()) << e.dump(2);
  EXPECT_GE(best["margin"].get<double>(), 0);
  EXPECT_NEAR(best["total"].get<double>() - e["chosen"]["total"].get<double>(),
              best["margin"].get<double>(), kEps);
  // Job 1 runs exactly its share: E_1 = F_1 = A_1 = 2 of its 5 tasks.
  const json& alloc = e["allocation"];
  EXPECT_EQ(alloc["lower_bound"], 2);
  EXPECT_EQ(alloc["upper_bound"], 2);
  EXPECT_EQ(alloc["tasks"], 5);
  EXPECT_EQ(alloc["placed_by_round"], 2);
  EXPECT_TRUE(alloc["at_upper_bound"].get<bool>());
  EXPECT_TRUE(Contains(e, "may run at most F_j = 2 tasks (its fair share)")) << e["summary"];
  // Every computer is full; the occupant named is really there.
  const json& slot = best["slot"];
  ASSERT_TRUE(slot.is_object());
  EXPECT_TRUE(slot["full"].get<bool>());
  ASSERT_TRUE(slot["displaces"].is_object()) << slot.dump();
  const auto& here = s->state().computer(slot["computer"].get<ComputerId>()).tasks;
  EXPECT_NE(std::find(here.begin(), here.end(), slot["displaces"]["task"].get<TaskId>()),
            here.end());
  // The wait arc's breakdown: ω × ν at the round.
  const json& wait = e["arcs"][0];
  EXPECT_EQ(wait["to"]["kind"], "unscheduled");
  EXPECT_NEAR(wait["parts"]["wait"].get<double>(), 0.5 * wait["inputs"]["waited_s"].get<double>(),
              1e-3);
}

// One rack, two one-slot computers. t1 and t2 run on the computers holding
// their input; t3 (input on c0) arrives at 1 s. Under QP (E_j = 1, F_j =
// N_j) the job is between its bounds, so what keeps t3 waiting is the price
// of the slots: evicting a task that has run θ seconds costs at least θ,
// more than t3's wait (ω = 0.5 per second).
TEST(ExplainTest, QuincyTaskWaitsBecauseEvictingAnOccupantCostsMore) {
  auto s = MakeScheduler("QP", Topology::Uniform(1, 2));
  Driver d(*s);
  d.AddJob(MakeJob(1, 0,
                   {MakeTask(1, 1000, DataOn(0, 0, 1)), MakeTask(2, 1000, DataOn(1, 0, 1)),
                    MakeTask(3, 1000, DataOn(0, 0, 1), 1)}));
  ASSERT_TRUE(d.RunUntil(Sec(20)).ok());
  json e = MustExplain(*s, 3, 20);
  CheckQuincyArcs(e, 1000);
  EXPECT_EQ(e["chosen"]["to"]["kind"], "unscheduled");
  EXPECT_FALSE(e["allocation"]["at_upper_bound"].get<bool>());
  EXPECT_FALSE(e["allocation"]["at_lower_bound"].get<bool>());
  const json& slot = e["cheapest_placement"]["slot"];
  ASSERT_TRUE(slot.is_object()) << e.dump(2);
  EXPECT_TRUE(slot["full"].get<bool>());
  const json& occupant = slot["displaces"];
  ASSERT_TRUE(occupant.is_object()) << slot.dump();
  const ComputerId c = slot["computer"].get<ComputerId>();
  EXPECT_EQ(occupant["task"].get<TaskId>(), c == 0 ? 1 : 2);
  EXPECT_TRUE(occupant["movable"].get<bool>());
  // The slot's price is at most what displacing its cheapest occupant costs.
  EXPECT_LE(slot["price"].get<double>(), occupant["eviction_cost"].get<double>() + kEps);
  EXPECT_TRUE(Contains(e, "to evict")) << e["summary"];
  EXPECT_GE(e["cheapest_placement"]["margin"].get<double>(), 0);

  // t1 runs where its flow goes, on its preferred computer; staying is the
  // cheapest option.
  json r = MustExplain(*s, 1, 20);
  CheckQuincyArcs(r, 1000);
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["computer"], 0);
  EXPECT_EQ(r["chosen"]["to"]["kind"], "computer");
  EXPECT_EQ(r["chosen"]["to"]["computer"], 0);
  EXPECT_GE(r["next_best"]["margin"].get<double>(), 0);
  const json* running = nullptr;
  for (const json& a : r["arcs"]) {
    if (a["running"].get<bool>()) running = &a;
  }
  ASSERT_NE(running, nullptr);
  // d* = 0 on its own computer, less θ: it has run 20 s by the last round.
  const double ran = (*running)["inputs"]["ran_s"].get<double>();
  EXPECT_GT(ran, 18);
  EXPECT_NEAR((*running)["parts"]["run_time"].get<double>(), -ran, 1e-3);
  EXPECT_TRUE(Contains(r, "runs on computer 0")) << r["summary"];
}

TEST(ExplainTest, QuincyTaskSubmittedAfterTheLastRoundWaitsForItsFirstRound) {
  auto s = MakeScheduler("QFP", Topology::Uniform(1, 1));
  JobSubmitted job;
  job.job = 1;
  job.attributes.root_in_cluster = false;
  ASSERT_TRUE(s->Handle(job, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{1, 1, DataOn(0, 0, 1)}, Sec(0)).ok());
  ASSERT_TRUE(s->Schedule(Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{2, 1, DataOn(0, 0, 1)}, Sec(0.5)).ok());
  json e = MustExplain(*s, 2, 0.5);
  EXPECT_FALSE(e["prices"].get<bool>());
  EXPECT_TRUE(e["next_round"]["after_current_event"].get<bool>());
  EXPECT_TRUE(Contains(e, "waits for its first round")) << e["summary"];
  // After the round it has prices.
  ASSERT_TRUE(s->Schedule(Sec(0.5)).ok());
  CheckQuincyArcs(MustExplain(*s, 2, 0.5), 1000);
}

// The flow graph's flows add up: into the sink, through every rack, per job.
void CheckFlowGraph(const json& g) {
  int64_t placed = 0, unscheduled = 0, into_computers = 0;
  for (const json& c : g["computers"]) placed += c["to_sink"]["flow"].get<int64_t>();
  std::map<int, int64_t> rack_in;  // flow into R_l: from X and from tasks
  for (const json& r : g["cluster"]["to_racks"]) {
    rack_in[r["rack"].get<int>()] += r["flow"].get<int64_t>();
  }
  for (const json& j : g["jobs"]) {
    const json& to = j["flow_to"];
    int64_t sum = to["unscheduled"].get<int64_t>() + to["cluster"].get<int64_t>();
    for (const json& r : to["racks"]) {
      sum += r["flow"].get<int64_t>();
      rack_in[r["rack"].get<int>()] += r["flow"].get<int64_t>();
    }
    for (const json& c : to["computers"]) {
      sum += c["flow"].get<int64_t>();
      into_computers += c["flow"].get<int64_t>();
    }
    EXPECT_EQ(sum, j["tasks"].get<int64_t>()) << j.dump();
    const json& u = j["unscheduled"];
    EXPECT_EQ(to["unscheduled"].get<int64_t>(),
              u["to_sink"]["flow"].get<int64_t>() - u["supply"].get<int64_t>())
        << j.dump();
    unscheduled += u["to_sink"]["flow"].get<int64_t>();
  }
  for (const json& r : g["racks"]) {
    int64_t out = 0;
    for (const json& c : r["to_computers"]) out += c["flow"].get<int64_t>();
    EXPECT_EQ(out, rack_in[r["rack"].get<int>()]) << r.dump();
    into_computers += out;
  }
  for (const json& r : g["roots"]) {
    if (r["flow_to"]["kind"] == "computer") ++into_computers;
  }
  EXPECT_EQ(into_computers, placed);
  const json& t = g["totals"];
  EXPECT_EQ(t["placed"].get<int64_t>(), placed);
  EXPECT_EQ(t["unscheduled"].get<int64_t>(), unscheduled);
  EXPECT_EQ(placed + unscheduled + t["roots_waiting"].get<int64_t>(),
            t["sink_demand"].get<int64_t>());
}

// At 8 s QFP preempts t1 for u1; the kill takes 0.5 s to be confirmed.
// Between, t1 is explained by the round that preempted it (although its
// node left the graph), u1 waits for the slot it was given, and the
// aggregated flow graph still counts t1 in job 1.
TEST(ExplainTest, QuincyPreemptionIsExplainedUntilTheKillIsConfirmed) {
  auto s = MakeScheduler("QFP", Topology::Uniform(2, 2));
  Driver d(*s);
  d.kill_delay = Sec(0.5);
  TwoJobs(d);
  ASSERT_TRUE(d.RunUntil(Sec(8.2)).ok());
  json k = MustExplain(*s, 1, 8.2);
  EXPECT_EQ(k["state"], "kill_requested");
  CheckQuincyArcs(k, 1000);
  EXPECT_EQ(k["chosen"]["to"]["kind"], "unscheduled");
  EXPECT_TRUE(Contains(k, "the last round preempted it")) << k["summary"];
  json u = MustExplain(*s, 21, 8.2);
  EXPECT_EQ(u["state"], "waiting");
  EXPECT_EQ(u["placed_on"], 0);
  EXPECT_TRUE(Contains(u, "task 1 of job 1 is being killed")) << u["summary"];

  json g;
  ASSERT_TRUE(s->policy().FlowGraph(s->state(), &g));
  CheckFlowGraph(g);
  ASSERT_EQ(g["jobs"].size(), 2u);
  EXPECT_EQ(g["jobs"][0]["job"], 1);
  EXPECT_EQ(g["jobs"][0]["tasks"], 5);  // t1 included: it was in the round
  EXPECT_EQ(g["totals"]["placed"], 4);
  EXPECT_EQ(g["computers"].size(), 4u);
  // Later rounds keep it consistent.
  ASSERT_TRUE(d.RunUntil(Sec(15)).ok());
  ASSERT_TRUE(s->policy().FlowGraph(s->state(), &g));
  CheckFlowGraph(g);
}

TEST(ExplainTest, QuincyDescribeAndLastRound) {
  auto s = MakeScheduler("QFP", Topology::Uniform(2, 2));
  Driver d(*s);
  TwoJobs(d);
  ASSERT_TRUE(d.RunUntil(Sec(12)).ok());
  json desc = s->Describe(Sec(12));
  EXPECT_EQ(desc["policy"], "QFP");
  EXPECT_EQ(desc["parameters"]["regime"], "QFP");
  EXPECT_EQ(desc["parameters"]["omega"], 0.5);
  EXPECT_EQ(desc["parameters"]["xi"], 2.0);
  EXPECT_EQ(desc["parameters"]["max_cost"], 1000.0);
  EXPECT_EQ(desc["parameters"]["solver"], std::string(kSchedulerSolver));
  ASSERT_EQ(desc["jobs"].size(), 2u);
  for (const json& j : desc["jobs"]) {
    EXPECT_EQ(j["fair_share"], 2) << j.dump();
    EXPECT_EQ(j["lower_bound"], 2);
    EXPECT_EQ(j["upper_bound"], 2);
    EXPECT_EQ(j["running"], 2);
  }
  const json& round = desc["last_round"];
  EXPECT_GT(round["rounds"].get<int>(), 0);
  EXPECT_EQ(round["solver"], std::string(kSchedulerSolver));
  EXPECT_GT(round["nodes"].get<int>(), 0);
  EXPECT_GT(round["arcs"].get<int>(), 0);
  EXPECT_EQ(round["solve_ms"], 0.0);  // no stats clock
  EXPECT_TRUE(round["at_s"].is_number());
}

// ---- HFS ----

// Racks {c0, c1}, {c2, c3}; W1 = 5 s, W2 = 10 s. Job 1's task takes c0 at
// 0 s; job 2 arrives at 1 s with tasks whose input is on c0 and is skipped
// at that heartbeat: at 3 s it has waited 2 s for a node-local slot and may
// go rack-local in 3 s. At 6 s a1 starts rack-local on c1.
TEST(ExplainTest, HfsTaskWaitsForANodeLocalSlotWithTheTimeLeft) {
  auto s = MakeScheduler("HFS", Topology::Uniform(2, 2),
                         {{"node_locality_wait", 5}, {"rack_locality_wait", 10}});
  Driver d(*s);
  d.AddJob(MakeJob(1, 0, {MakeTask(10, 20)}));
  d.AddJob(MakeJob(2, 1, {MakeTask(21, 24, DataOn(0, 0, 1)), MakeTask(22, 100, DataOn(0, 0, 1))}));
  ASSERT_TRUE(d.RunUntil(Sec(3)).ok());
  json e = MustExplain(*s, 21, 3);
  EXPECT_EQ(e["state"], "waiting");
  EXPECT_EQ(e["allowed_level"], "node_local");
  EXPECT_EQ(e["next_level"], "rack_local");
  EXPECT_NEAR(e["job_wait_s"].get<double>(), 2, kEps);
  EXPECT_NEAR(e["next_level_in_s"].get<double>(), 3, kEps);
  EXPECT_TRUE(e["wait_counting"].get<bool>());
  EXPECT_EQ(e["rank"], 1);
  EXPECT_TRUE(e["free_computers_it_may_take"].empty());
  EXPECT_TRUE(Contains(e, "waits for a node-local slot")) << e["summary"];
  EXPECT_TRUE(Contains(e, "rack-local slots in 3 s")) << e["summary"];
  EXPECT_EQ(e["pool"]["pool"], "job:2");

  ASSERT_TRUE(d.RunUntil(Sec(7)).ok());
  json r = MustExplain(*s, 21, 7);
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["computer"], 1);
  EXPECT_EQ(r["rack"], 0);
  EXPECT_EQ(r["placement"], "preferred_rack");
  EXPECT_EQ(r["locality"], "rack_local");
  json task22 = MustExplain(*s, 22, 7);  // a launch reset the wait; level 1 now
  EXPECT_EQ(task22["job_level"], "rack_local");
  EXPECT_EQ(task22["allowed_level"], "rack_local");
  json desc = s->Describe(Sec(7));
  EXPECT_EQ(desc["parameters"]["node_locality_wait_s"], 5.0);
  EXPECT_EQ(desc["parameters"]["fair_share_timeout_s"], nullptr);
  ASSERT_EQ(desc["jobs"].size(), 2u);
  EXPECT_EQ(desc["jobs"][1]["pool"], "job:2");
  EXPECT_TRUE(desc["jobs"][1]["fair_share"].is_number());
}

// ---- CFQ and its baselines ----

// One slot, held by job 1's long task. Jobs 2, 3, 4 arrive at 1 s with
// slot-times 30, 10 and 20 s: their virtual finish times are V(1) + L_j, so
// CFQ ranks them 3, 4, 2; FIFO ranks them in admission order.
TEST(ExplainTest, CfqRanksWaitingJobsByVirtualFinishTime) {
  for (const std::string policy : {"CFQ", "FIFO"}) {
    auto s = MakeScheduler(policy, Topology::Uniform(1, 1));
    Driver d(*s);
    d.AddJob(MakeJob(1, 0, {MakeTask(10, 100)}));
    const double slot[] = {30, 10, 20};
    for (JobId j = 2; j <= 4; ++j) {
      JobPlan p = MakeJob(j, 1, {MakeTask(10 * j, 5)});
      p.attributes.slot_time = Sec(slot[j - 2]);
      d.AddJob(p);
    }
    ASSERT_TRUE(d.RunUntil(Sec(2)).ok());
    std::map<JobId, int> rank;
    for (JobId j = 2; j <= 4; ++j) {
      json e = MustExplain(*s, 10 * j, 2);
      EXPECT_EQ(e["state"], "waiting");
      EXPECT_TRUE(Contains(e, "every slot is busy")) << e["summary"];
      rank[j] = e["rank"].get<int>();
      EXPECT_EQ(e["jobs_ahead"].size(), static_cast<size_t>(rank[j] - 1));
      if (policy == "CFQ") {
        EXPECT_NEAR(e["key"].get<double>(), e["virtual_finish"].get<double>(), kEps);
        EXPECT_NEAR(e["virtual_finish"].get<double>() - e["slot_time_s"].get<double>(), 1, 1e-6);
      }
    }
    std::map<JobId, int> want = policy == "CFQ" ? std::map<JobId, int>{{2, 3}, {3, 1}, {4, 2}}
                                                : std::map<JobId, int>{{2, 1}, {3, 2}, {4, 3}};
    EXPECT_EQ(rank, want) << policy;
    json r = MustExplain(*s, 10, 2);
    EXPECT_EQ(r["state"], "running");
    EXPECT_EQ(r["placement"], "no_preference");
  }
}

// ---- Queue-based ----

// One computer: t1 runs, t2..t4 wait in the cluster queue in order.
TEST(ExplainTest, QueueTasksKnowHowManyAreAheadOfThem) {
  auto s = MakeScheduler("G", Topology::Uniform(1, 1));
  Driver d(*s);
  d.AddJob(MakeJob(1, 0, {MakeTask(1, 100), MakeTask(2, 1), MakeTask(3, 1), MakeTask(4, 1)}));
  ASSERT_TRUE(d.RunUntil(Sec(1)).ok());
  for (TaskId t = 2; t <= 4; ++t) {
    json e = MustExplain(*s, t, 1);
    ASSERT_EQ(e["queues"].size(), 1u) << e.dump();
    EXPECT_EQ(e["queues"][0]["queue"], "cluster");
    EXPECT_EQ(e["queues"][0]["ahead"], t - 2);
    EXPECT_TRUE(Contains(e, "every computer is busy")) << e["summary"];
  }
  json r = MustExplain(*s, 1, 1);
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["placement"], "no_preference");
}

// GF on two computers: job 1 takes both at 0 s and submits a third task,
// with its input on c1, at 2 s; job 2 arrives at 3 s and the shares become
// (1, 1). Job 1 runs above its share and is blocked; job 2's task is first
// in the cluster queue, job 1's earlier task not counting (not ready).
TEST(ExplainTest, QueueTaskOfABlockedJobSaysSo) {
  auto s = MakeScheduler("GF", Topology::Uniform(1, 2));
  Driver d(*s);
  d.AddJob(MakeJob(1, 0, {MakeTask(1, 100), MakeTask(2, 100), MakeTask(3, 5, DataOn(1, 0, 1), 2)}));
  d.AddJob(MakeJob(2, 3, {MakeTask(21, 5)}));
  ASSERT_TRUE(d.RunUntil(Sec(3.5)).ok());
  json e = MustExplain(*s, 3, 3.5);
  EXPECT_EQ(e["state"], "waiting");
  EXPECT_TRUE(e["job_blocked"].get<bool>());
  EXPECT_EQ(e["job_share"], 1);
  EXPECT_EQ(e["job_running"], 2);
  EXPECT_TRUE(Contains(e, "is blocked, running 2 tasks against its fair share A_j = 1"))
      << e["summary"];
  ASSERT_EQ(e["queues"].size(), 3u);
  EXPECT_EQ(e["queues"][0]["queue"], "computer");
  EXPECT_EQ(e["queues"][0]["computer"], 1);
  json w = MustExplain(*s, 21, 3.5);
  EXPECT_FALSE(w["job_blocked"].get<bool>());
  EXPECT_EQ(w["queues"][0]["ahead"], 0);  // blocked jobs' tasks are not counted
}

// ---- Every policy ----

TEST(ExplainTest, EveryPolicyExplainsAWaitingAndARunningTask) {
  for (const std::string& policy : PolicyNames()) {
    auto s = MakeScheduler(policy, Topology::Uniform(1, 1));
    Driver d(*s);
    d.AddJob(MakeJob(1, 0, {MakeTask(1, 100, DataOn(0, 0, 1)), MakeTask(2, 100, DataOn(0, 0, 1))}));
    ASSERT_TRUE(d.RunUntil(Sec(1)).ok()) << policy;
    TaskId running = s->state().computer(0).tasks.at(0);
    TaskId waiting = running == 1 ? 2 : 1;
    json r = MustExplain(*s, running, 1);
    json w = MustExplain(*s, waiting, 1);
    for (const json* e : {&r, &w}) {
      for (const char* key :
           {"task", "job", "policy", "state", "computer", "rack", "waited_s", "ran_s"}) {
        EXPECT_TRUE(e->contains(key)) << policy << " " << key;
      }
      EXPECT_EQ((*e)["policy"], policy);
      EXPECT_FALSE((*e)["summary"].get<std::string>().empty()) << policy;
    }
    EXPECT_EQ(r["state"], "running") << policy;
    EXPECT_EQ(r["computer"], 0) << policy;
    EXPECT_EQ(w["state"], "waiting") << policy;
    EXPECT_EQ(w["computer"], nullptr) << policy;
    EXPECT_TRUE(Contains(w, "waits")) << policy << ": " << w["summary"];
    EXPECT_TRUE(Contains(r, "runs on computer 0")) << policy << ": " << r["summary"];
    // Something beyond the common fields and the summary.
    EXPECT_GT(w.size(), 10u) << policy << ": " << w.dump();
    json desc = s->Describe(Sec(1));
    EXPECT_EQ(desc["policy"], policy);
    EXPECT_TRUE(desc["parameters"].is_object()) << policy;
    ASSERT_EQ(desc["jobs"].size(), 1u) << policy;
    for (const char* key :
         {"job", "running", "waiting", "fair_share", "lower_bound", "upper_bound"}) {
      EXPECT_TRUE(desc["jobs"][0].contains(key)) << policy << " " << key;
    }
    EXPECT_TRUE(desc["last_round"].is_object()) << policy;
    const bool quincy = policy[0] == 'Q';
    EXPECT_EQ(!desc["jobs"][0]["upper_bound"].is_null(), quincy) << policy;
    json g;
    EXPECT_EQ(s->policy().FlowGraph(s->state(), &g), quincy) << policy;
    if (quincy) CheckQuincyArcs(w, 1000);
  }
}

// Explaining reads only: a run that explains every task every second makes
// the same decisions as one that never does.
TEST(ExplainTest, ExplainingChangesNoDecision) {
  for (const std::string policy : {"QFP", "Q", "HFS", "GFPH", "CFQ"}) {
    std::vector<std::pair<Timestamp, Decision>> runs[2];
    for (int explain = 0; explain < 2; ++explain) {
      auto s = MakeScheduler(policy, Topology::Uniform(2, 2));
      Driver d(*s);
      d.kill_delay = Sec(0.3);
      TwoJobs(d);
      for (double t = 0; t <= 30; t += 0.5) {
        ASSERT_TRUE(d.RunUntil(Sec(t)).ok());
        if (!explain) continue;
        for (TaskId id : {1, 2, 3, 4, 5, 21, 22}) (void)s->Explain(id, Sec(t));
        (void)s->Describe(Sec(t));
        json g;
        (void)s->policy().FlowGraph(s->state(), &g);
      }
      runs[explain] = d.decisions();
    }
    EXPECT_EQ(runs[0], runs[1]) << policy;
  }
}

}  // namespace
}  // namespace copse::scheduler

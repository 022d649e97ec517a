// The Scheduler mechanism: admission control, the task life cycle, event
// validation, re-adoption, computers going down, and every policy by name
// running a small workload to completion.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "scheduler/policy_factory.h"
#include "scheduler/testing/driver.h"
#include "scheduler/testing/scenario.h"

namespace copse::scheduler {
namespace {

using testing::Driver;
using testing::JobPlan;
using testing::TaskPlan;

using testing::Sec;

// A Scheduler for `policy` admitting `k` jobs at a time.
std::unique_ptr<Scheduler> MakeAdmitting(const std::string& policy, Topology t, int k = 10) {
  SchedulerOptions o;
  o.policy.policy = policy;
  o.max_running_jobs = k;
  auto s = Scheduler::Create(std::move(t), o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

JobSubmitted Job(JobId id, double at, bool root = false) {
  JobSubmitted e;
  e.job = id;
  e.root_task = root ? 1000 + id : kNoTask;
  e.attributes.submitted = Sec(at);
  e.attributes.root_in_cluster = root;
  return e;
}

std::vector<Decision> Of(const std::vector<Decision>& ds, Decision::Kind k) {
  std::vector<Decision> out;
  for (const Decision& d : ds) {
    if (d.kind == k) out.push_back(d);
  }
  return out;
}

TEST(SchedulerTest, AdmitsAtMostKJobsInSubmissionOrder) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 2), /*k=*/2);
  ASSERT_TRUE(s->Handle(Job(3, 0.3), Sec(1)).ok());
  ASSERT_TRUE(s->Handle(Job(1, 0.1), Sec(1)).ok());
  ASSERT_TRUE(s->Handle(Job(2, 0.2), Sec(1)).ok());
  auto d = s->Schedule(Sec(1));
  ASSERT_TRUE(d.ok());
  auto admits = Of(*d, Decision::Kind::kAdmitJob);
  // Job 3 was admitted on arrival (K not reached), then job 1; job 2 waits.
  ASSERT_EQ(admits.size(), 2u);
  EXPECT_EQ(admits[0].job, 3);
  EXPECT_EQ(admits[1].job, 1);
  EXPECT_EQ(s->QueuedJobs(), std::vector<JobId>{2});
  ASSERT_TRUE(s->Handle(JobFinished{3}, Sec(2)).ok());
  d = s->Schedule(Sec(2));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(Of(*d, Decision::Kind::kAdmitJob).size(), 1u);
  EXPECT_EQ(Of(*d, Decision::Kind::kAdmitJob)[0].job, 2);
  EXPECT_TRUE(s->QueuedJobs().empty());
}

TEST(SchedulerTest, SlotStaysBusyUntilConfirmations) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 1));
  ASSERT_TRUE(s->Handle(Job(1, 0), Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{10, 1, {}}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{11, 1, {}}, Sec(0)).ok());
  auto d = s->Schedule(Sec(0));
  ASSERT_TRUE(d.ok());
  auto starts = Of(*d, Decision::Kind::kStartTask);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].task, 10);
  EXPECT_EQ(s->state().task(10).state, TaskState::kStartRequested);
  // Start requested: the slot is taken even before the worker confirms.
  d = s->Schedule(Sec(1));
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->empty());
  ASSERT_TRUE(s->Handle(TaskStarted{10}, Sec(1)).ok());
  EXPECT_EQ(s->state().task(10).state, TaskState::kRunning);
  // A start failure puts the task back; the freed slot goes to the next task.
  ASSERT_TRUE(s->Handle(TaskCompleted{10}, Sec(3)).ok());
  d = s->Schedule(Sec(3));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0].task, 11);
  ASSERT_TRUE(s->Handle(TaskStartFailed{11}, Sec(4)).ok());
  EXPECT_EQ(s->state().task(11).state, TaskState::kWaiting);
  EXPECT_EQ(s->state().task(11).start_failures, 1);
  d = s->Schedule(Sec(4));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0].task, 11);
  // ν and θ accumulate over spans; θ from the start decision (at 0), as
  // the slot is held from then.
  EXPECT_EQ(s->state().task(11).WaitTime(Sec(5)), Sec(3));
  EXPECT_EQ(s->state().job(1).completed, 1);
  EXPECT_EQ(s->state().job(1).completed_run_time, Sec(3));
}

TEST(SchedulerTest, RejectsContradictoryEventsAndKeepsState) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 1));
  EXPECT_EQ(s->Handle(TaskStarted{5}, Sec(0)).code(), StatusCode::kNotFound);
  EXPECT_EQ(s->Handle(TaskSubmitted{5, 1, {}}, Sec(0)).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(s->Handle(Job(1, 0), Sec(0)).ok());
  EXPECT_EQ(s->Handle(Job(1, 0), Sec(0)).code(), StatusCode::kAlreadyExists);
  TaskLocality bad;
  bad.computers.push_back({7, {1, 1}});
  EXPECT_EQ(s->Handle(TaskSubmitted{5, 1, bad}, Sec(0)).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(s->Handle(TaskSubmitted{5, 1, {}}, Sec(0)).ok());
  EXPECT_EQ(s->Handle(TaskSubmitted{5, 1, {}}, Sec(0)).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s->Handle(TaskStarted{5}, Sec(0)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Handle(TaskCompleted{5}, Sec(0)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Handle(Timer{}, Sec(-1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->Handle(ComputerDown{9}, Sec(0)).code(), StatusCode::kNotFound);
  EXPECT_EQ(s->state().task(5).state, TaskState::kWaiting);
  JobSubmitted no_root = Job(2, 0, true);
  no_root.root_task = kNoTask;
  EXPECT_EQ(s->Handle(no_root, Sec(0)).code(), StatusCode::kInvalidArgument);
}

TEST(SchedulerTest, FinishedJobKillsRunningTasksAndForgetsThemWhenConfirmed) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 2));
  ASSERT_TRUE(s->Handle(Job(1, 0), Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{10, 1, {}}, Sec(0)).ok());
  ASSERT_TRUE(s->Schedule(Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskStarted{10}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(JobFinished{1}, Sec(1)).ok());
  auto d = s->Schedule(Sec(1));
  ASSERT_TRUE(d.ok());
  auto kills = Of(*d, Decision::Kind::kKillTask);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].task, 10);
  EXPECT_EQ(s->state().computer(kills[0].computer).used, 1);  // busy until confirmed
  ASSERT_TRUE(s->Handle(TaskKilled{10}, Sec(2)).ok());
  EXPECT_EQ(s->state().FindTask(10), nullptr);
  EXPECT_EQ(s->state().FindJob(1), nullptr);
  EXPECT_EQ(s->state().free_slots_total(), 2);
}

TEST(SchedulerTest, RootIsPlacedAndComputerDownRestartsItsJob) {
  auto s = MakeAdmitting("G", Topology::Uniform(2, 2));
  ASSERT_TRUE(s->Handle(Job(1, 0, /*root=*/true), Sec(0)).ok());
  auto d = s->Schedule(Sec(0));
  ASSERT_TRUE(d.ok());
  auto starts = Of(*d, Decision::Kind::kStartTask);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_TRUE(starts[0].root);
  EXPECT_EQ(starts[0].task, 1001);
  ComputerId rc = starts[0].computer;
  ASSERT_TRUE(s->Handle(TaskStarted{1001}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{10, 1, {}}, Sec(1)).ok());
  d = s->Schedule(Sec(1));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  ASSERT_TRUE(s->Handle(TaskStarted{10}, Sec(1)).ok());
  ASSERT_TRUE(s->Handle(ComputerDown{rc}, Sec(2)).ok());
  // The root waits again; its worker is killed (the job starts over).
  EXPECT_EQ(s->state().task(1001).state, TaskState::kWaiting);
  d = s->Schedule(Sec(2));
  ASSERT_TRUE(d.ok());
  bool killed = false, restarted = false;
  for (const Decision& x : *d) {
    killed |= x.kind == Decision::Kind::kKillTask && x.task == 10;
    restarted |= x.kind == Decision::Kind::kStartTask && x.task == 1001 && x.computer != rc;
  }
  EXPECT_TRUE(killed);
  if (!restarted) {  // it chose the computer whose orphan is being killed
    ASSERT_TRUE(s->Handle(TaskKilled{10}, Sec(3)).ok());
    d = s->Schedule(Sec(3));
    ASSERT_TRUE(d.ok());
    for (const Decision& x : *d) {
      restarted |= x.kind == Decision::Kind::kStartTask && x.task == 1001 && x.computer != rc;
    }
  }
  EXPECT_TRUE(restarted);
  EXPECT_FALSE(s->state().computer(rc).up);
}

TEST(SchedulerTest, RestartedMasterAdoptsRunningTasks) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 2));
  ASSERT_TRUE(s->Handle(Job(1, 0, /*root=*/true), Sec(0)).ok());
  // Before any Schedule(), the workers report what they run.
  ASSERT_TRUE(s->Handle(TaskAdopted{1001, 1, 1, Sec(-5), {}}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskAdopted{10, 1, 0, Sec(-3), {}}, Sec(0)).ok());
  EXPECT_EQ(s->state().task(1001).state, TaskState::kRunning);
  EXPECT_EQ(s->state().task(10).computer, 0);
  EXPECT_EQ(s->state().task(10).RunTime(Sec(1)), Sec(4));
  EXPECT_EQ(s->Handle(TaskAdopted{11, 1, 0, Sec(0), {}}, Sec(0)).code(),
            StatusCode::kResourceExhausted);
  auto d = s->Schedule(Sec(0));
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(Of(*d, Decision::Kind::kStartTask).empty());  // nothing to place twice
  ASSERT_TRUE(s->Handle(TaskCompleted{10}, Sec(1)).ok());
}

// A restarted master learns of a drain before its workers report what they
// run: a draining computer adopts its tasks (it holds them; it only takes no
// new ones), and the slot counts follow.
TEST(SchedulerTest, DrainingComputerAdoptsRunningTasksAndCountsSlots) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 2, 2));
  ASSERT_TRUE(s->Handle(ComputerDraining{0, true, false}, Sec(0)).ok());
  EXPECT_EQ(s->state().up_slots(), 2);
  EXPECT_EQ(s->state().free_slots_total(), 2);
  ASSERT_TRUE(s->Handle(Job(1, 0), Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskAdopted{10, 1, 0, Sec(-3), {}}, Sec(0)).ok());
  EXPECT_EQ(s->state().task(10).computer, 0);
  EXPECT_EQ(s->state().free_slots_total(), 2);
  EXPECT_EQ(s->state().WorkerSlots(), 3);
  ASSERT_TRUE(s->Handle(ComputerDown{0}, Sec(1)).ok());
  EXPECT_EQ(s->state().WorkerSlots(), 2);
  ASSERT_TRUE(s->Handle(ComputerUp{0}, Sec(2)).ok());
  EXPECT_TRUE(s->state().computer(0).draining);  // still draining
  EXPECT_EQ(s->state().free_slots_total(), 2);
  ASSERT_TRUE(s->Handle(ComputerDraining{0, false, false}, Sec(3)).ok());
  EXPECT_EQ(s->state().free_slots_total(), 4);
  EXPECT_EQ(s->state().up_slots(), 4);
  EXPECT_EQ(s->Handle(ComputerDraining{7, true, false}, Sec(3)).code(), StatusCode::kNotFound);
}

TEST(SchedulerTest, BadPolicyConfigsNameTheKey) {
  SchedulerOptions o;
  o.policy.policy = "QQ";
  auto s = Scheduler::Create(Topology::Uniform(1, 1), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("unknown policy"), std::string::npos);
  o.policy.policy = "QFP";
  o.policy.params["omgea"] = 1;
  s = Scheduler::Create(Topology::Uniform(1, 1), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("omgea"), std::string::npos);
  o.policy.params = {{"xi", -1}};
  s = Scheduler::Create(Topology::Uniform(1, 1), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("xi"), std::string::npos);
  o.policy.params = {};
  o.max_running_jobs = 0;
  EXPECT_FALSE(Scheduler::Create(Topology::Uniform(1, 1), o).ok());
  Topology t = Topology::Uniform(1, 1);
  t.computers[0].rack = 4;
  o.max_running_jobs = 1;
  EXPECT_FALSE(Scheduler::Create(t, o).ok());
}

// Records what the observer hears, as "kind task reason".
class Recorder final : public ChangeObserver {
 public:
  void OnChange(const ClusterState&, const Change& c, Timestamp) override {
    if (c.task == nullptr) return;
    std::string kind;
    switch (c.kind) {
      case Change::Kind::kTaskWaiting:
        kind = "waiting";
        break;
      case Change::Kind::kTaskPlaced:
        kind = "placed";
        break;
      case Change::Kind::kTaskRunning:
        kind = "running";
        break;
      case Change::Kind::kTaskKillRequested:
        kind = "kill";
        break;
      case Change::Kind::kTaskRemoved:
        kind = "removed";
        break;
      default:
        return;
    }
    std::string reason = c.kind == Change::Kind::kTaskRemoved
                             ? " " + std::to_string(static_cast<int>(c.reason))
                             : "";
    seen.push_back(kind + " " + std::to_string(c.task->id) + reason);
  }
  std::vector<std::string> seen;
};

TEST(SchedulerTest, RootFailureRestartsTheJobKeepingItsAdmission) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 3), /*k=*/1);
  ASSERT_TRUE(s->Handle(Job(1, 0, /*root=*/true), Sec(0)).ok());
  ASSERT_TRUE(s->Handle(Job(2, 1, /*root=*/true), Sec(0)).ok());
  auto d = s->Schedule(Sec(0));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(Of(*d, Decision::Kind::kStartTask).size(), 1u);  // job 1's root; job 2 waits (K)
  ASSERT_TRUE(s->Handle(TaskStarted{1001}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{1, 1, {}}, Sec(1)).ok());
  d = s->Schedule(Sec(1));
  ASSERT_TRUE(s->Handle(TaskStarted{1}, Sec(1)).ok());
  EXPECT_EQ(s->Handle(RootFailed{2}, Sec(2)).code(), StatusCode::kNotFound);  // not admitted
  ASSERT_TRUE(s->Handle(RootFailed{1}, Sec(2)).ok());
  d = s->Schedule(Sec(2));
  ASSERT_TRUE(d.ok());
  // Its running worker is killed; job 2 still waits (job 1 keeps its place).
  ASSERT_EQ(Of(*d, Decision::Kind::kKillTask).size(), 1u);
  EXPECT_EQ(Of(*d, Decision::Kind::kKillTask)[0].task, 1);
  EXPECT_EQ(s->QueuedJobs(), std::vector<JobId>{2});
  ASSERT_TRUE(s->Handle(TaskKilled{1}, Sec(3)).ok());
  EXPECT_EQ(s->state().FindTask(1), nullptr);  // forgotten, not waiting again
  // The root is placed again.
  d = s->Schedule(Sec(3));
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(s->state().task(1001).placed());
}

TEST(SchedulerTest, WithdrawnTasksAreForgottenOrKilled) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 1));
  Recorder rec;
  s->set_observer(&rec);
  ASSERT_TRUE(s->Handle(Job(1, 0), Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{1, 1, {}}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{2, 1, {}}, Sec(0)).ok());
  ASSERT_TRUE(s->Schedule(Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskStarted{1}, Sec(0)).ok());
  rec.seen.clear();
  // Task 2 waits: forgotten at once.
  ASSERT_TRUE(s->Handle(TaskWithdrawn{2}, Sec(1)).ok());
  EXPECT_EQ(rec.seen, std::vector<std::string>{"removed 2 3"});  // Reason::kKilled
  // Task 1 runs: killed, forgotten when the kill is confirmed.
  ASSERT_TRUE(s->Handle(TaskWithdrawn{1}, Sec(1)).ok());
  auto d = s->Schedule(Sec(1));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(Of(*d, Decision::Kind::kKillTask).size(), 1u);
  ASSERT_TRUE(s->Handle(TaskKilled{1}, Sec(2)).ok());
  EXPECT_EQ(s->state().FindTask(1), nullptr);
  EXPECT_EQ(s->state().free_slots_total(), 1);
  EXPECT_EQ(s->Handle(TaskWithdrawn{1}, Sec(2)).code(), StatusCode::kNotFound);
}

TEST(SchedulerTest, AKilledJobsRootIsKilledAndHoldsItsSlotUntilGone) {
  auto s = MakeAdmitting("G", Topology::Uniform(1, 2));
  ASSERT_TRUE(s->Handle(Job(1, 0, /*root=*/true), Sec(0)).ok());
  ASSERT_TRUE(s->Schedule(Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskStarted{1001}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskSubmitted{1, 1, {}}, Sec(0)).ok());
  ASSERT_TRUE(s->Schedule(Sec(0)).ok());
  ASSERT_TRUE(s->Handle(TaskStarted{1}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(JobFinished{1, /*root_exited=*/false}, Sec(1)).ok());
  auto d = s->Schedule(Sec(1));
  ASSERT_TRUE(d.ok());
  auto kills = Of(*d, Decision::Kind::kKillTask);
  ASSERT_EQ(kills.size(), 2u);
  EXPECT_TRUE(kills[0].root || kills[1].root);
  EXPECT_EQ(s->state().free_slots_total(), 0);
  // The root exits by itself before the kill lands: forgotten all the same.
  ASSERT_TRUE(s->Handle(TaskCompleted{1001}, Sec(2)).ok());
  ASSERT_TRUE(s->Handle(TaskKilled{1}, Sec(2)).ok());
  EXPECT_EQ(s->state().free_slots_total(), 2);
  EXPECT_EQ(s->state().FindJob(1), nullptr);
}

TEST(SchedulerTest, UnknownSolverIsRefused) {
  SchedulerOptions o;
  o.policy.policy = "QFP";
  o.flow_solver = "telepathy";
  auto s = Scheduler::Create(Topology::Uniform(1, 1), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("solver = \"telepathy\": expected one of"),
            std::string::npos);
}

// Every policy, by name, runs a mixed workload with roots and locality to
// completion, with every task completing exactly once and no slot
// over-committed.
class EveryPolicyTest : public ::testing::TestWithParam<std::string> {};

// Plays the workload; returns every decision with its time.
std::vector<std::pair<Timestamp, Decision>> PlayMixedWorkload(const std::string& policy) {
  Topology topo = Topology::Uniform(2, 3, 2);
  auto s = MakeAdmitting(policy, topo, /*k=*/3);
  Driver driver(*s);
  TaskId next = 1;
  for (JobId j = 1; j <= 5; ++j) {
    JobPlan p;
    p.id = j;
    p.arrival = Sec(j * 0.5);
    p.root = 1000 + j;
    p.attributes.expected_tasks = 6;
    for (int i = 0; i < 6; ++i) {
      TaskPlan t;
      t.id = next++;
      t.run = Sec(1 + (i + j) % 3);
      t.submit_after = Sec(0.1 * i);
      int c = static_cast<int>((i + j) % topo.num_computers());
      t.locality.worst = {500'000'000, 500'000'000};
      t.locality.computers.push_back({c, {0, 0}});
      t.locality.racks.push_back({topo.computers[c].rack, {400'000'000, 0}});
      p.tasks.push_back(t);
    }
    driver.AddJob(p);
  }
  driver.on_decision = [&](Timestamp, const Decision&) {
    for (ComputerId c = 0; c < s->state().num_computers(); ++c) {
      ASSERT_LE(s->state().computer(c).used, topo.computers[c].slots);
    }
  };
  Status st = driver.RunUntil(Sec(1000));
  EXPECT_TRUE(st.ok()) << st.ToString();
  for (JobId j = 1; j <= 5; ++j) EXPECT_TRUE(driver.finished(j).has_value()) << "job " << j;
  int completed = 0;
  for (const auto& span : driver.spans()) completed += span.completed ? 1 : 0;
  EXPECT_EQ(completed, 30);
  EXPECT_EQ(s->state().num_admitted(), 0);
  return driver.decisions();
}

// As a master starts: every computer down until its worker registers.
TEST_P(EveryPolicyTest, ComputersComingUpOneByOneGetWork) {
  Topology topo = Topology::Uniform(2, 2, 1);
  std::unique_ptr<Scheduler> s;
  {
    Topology copy = topo;  // the scheduler must not keep a reference to it
    s = MakeAdmitting(GetParam(), std::move(copy));
  }
  for (ComputerId c = 0; c < 4; ++c) ASSERT_TRUE(s->Handle(ComputerDown{c}, Sec(0)).ok());
  ASSERT_TRUE(s->Handle(Job(1, 0), Sec(0)).ok());
  for (TaskId t = 1; t <= 4; ++t) ASSERT_TRUE(s->Handle(TaskSubmitted{t, 1, {}}, Sec(0)).ok());
  auto d = s->Schedule(Sec(1));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(Of(*d, Decision::Kind::kStartTask).empty());  // nothing is up
  ASSERT_TRUE(s->Handle(ComputerUp{2}, Sec(2)).ok());
  // At once, or once hysteresis (GFH, GFPH: Δ_H = 5 s) lets the job go.
  std::vector<Decision> starts;
  for (double t : {3.0, 10.0}) {
    ASSERT_TRUE(s->Handle(Timer{}, Sec(t)).ok());
    d = s->Schedule(Sec(t));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    for (const Decision& x : Of(*d, Decision::Kind::kStartTask)) starts.push_back(x);
  }
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].computer, 2);
}

TEST_P(EveryPolicyTest, RunsWorkloadToCompletionDeterministically) {
  auto first = PlayMixedWorkload(GetParam());
  auto second = PlayMixedWorkload(GetParam());
  EXPECT_EQ(first, second);
}

// Rounds at `t` and again 10 s later (GFH and GFPH hold a job back for
// Δ_H = 5 s after it was blocked), each until the policy decides nothing
// more, with every start confirmed at once. Returns the decisions.
std::vector<Decision> ConfirmedRounds(Scheduler& s, double t) {
  std::vector<Decision> all;
  for (double at : {t, t + 10}) {
    EXPECT_TRUE(s.Handle(Timer{}, Sec(at)).ok());
    for (int round = 0; round < 10; ++round) {
      auto d = s.Schedule(Sec(at));
      EXPECT_TRUE(d.ok()) << d.status().ToString();
      if (!d.ok() || d->empty()) break;
      for (const Decision& x : *d) {
        all.push_back(x);
        if (x.kind == Decision::Kind::kStartTask) {
          EXPECT_TRUE(s.Handle(TaskStarted{x.task}, Sec(at)).ok());
        }
      }
    }
  }
  return all;
}

// Ends every worker task on `c` with `event` (TaskCompleted or TaskKilled).
template <typename Event>
void EndTasksOn(Scheduler& s, ComputerId c, double t) {
  std::vector<TaskId> here = s.state().computer(c).tasks;
  for (TaskId id : here) {
    if (!s.state().task(id).root) {
      ASSERT_TRUE(s.Handle(Event{id}, Sec(t)).ok());
    }
  }
}

int CountOn(const std::vector<Decision>& ds, Decision::Kind k, ComputerId c) {
  int n = 0;
  for (const Decision& d : Of(ds, k)) n += d.computer == c ? 1 : 0;
  return n;
}

// Two computers of two slots, full of one job's tasks; computer 0 is
// drained. Its tasks run on (none is killed, here or elsewhere), no task
// starts there while it drains, and it takes tasks again once undrained.
TEST_P(EveryPolicyTest, DrainedComputerKeepsItsTasksAndTakesNoNewOnes) {
  auto s = MakeAdmitting(GetParam(), Topology::Uniform(1, 2, 2));
  ASSERT_TRUE(s->Handle(Job(1, 0), Sec(0)).ok());
  for (TaskId t = 1; t <= 4; ++t) ASSERT_TRUE(s->Handle(TaskSubmitted{t, 1, {}}, Sec(0)).ok());
  auto d = ConfirmedRounds(*s, 0);
  ASSERT_EQ(CountOn(d, Decision::Kind::kStartTask, 0), 2);
  ASSERT_EQ(CountOn(d, Decision::Kind::kStartTask, 1), 2);

  ASSERT_TRUE(s->Handle(ComputerDraining{0, true, false}, Sec(20)).ok());
  EXPECT_TRUE(s->state().computer(0).draining);
  EXPECT_EQ(s->state().up_slots(), 2);
  EXPECT_EQ(s->state().WorkerSlots(), 4);  // its tasks still run there
  for (TaskId t = 5; t <= 7; ++t) ASSERT_TRUE(s->Handle(TaskSubmitted{t, 1, {}}, Sec(20)).ok());
  d = ConfirmedRounds(*s, 20);
  EXPECT_TRUE(d.empty()) << ToString(d.front());
  EXPECT_EQ(s->state().computer(0).tasks.size(), 2u);

  EndTasksOn<TaskCompleted>(*s, 0, 40);
  EXPECT_EQ(s->state().free_slots_total(), 0);  // its slots do not come back
  EXPECT_EQ(s->state().WorkerSlots(), 2);
  d = ConfirmedRounds(*s, 40);
  EXPECT_TRUE(d.empty()) << ToString(d.front());

  std::vector<TaskId> on1 = s->state().computer(1).tasks;
  ASSERT_TRUE(s->Handle(TaskCompleted{on1[0]}, Sec(60)).ok());
  d = ConfirmedRounds(*s, 60);
  EXPECT_EQ(CountOn(d, Decision::Kind::kStartTask, 1), 1);
  EXPECT_EQ(Of(d, Decision::Kind::kStartTask).size(), 1u);
  EXPECT_TRUE(Of(d, Decision::Kind::kKillTask).empty());

  ASSERT_TRUE(s->Handle(ComputerDraining{0, false, false}, Sec(80)).ok());
  EXPECT_EQ(s->state().up_slots(), 4);
  d = ConfirmedRounds(*s, 80);
  EXPECT_EQ(CountOn(d, Decision::Kind::kStartTask, 0), 2);
  EXPECT_TRUE(Of(d, Decision::Kind::kKillTask).empty());
}

// With `move_tasks` (`copse cluster drain --now`) the drained computer's
// worker tasks are killed and wait again; they run elsewhere, never there.
// A root stays where it runs.
TEST_P(EveryPolicyTest, DrainThatMovesTasksRequeuesThemElsewhere) {
  auto s = MakeAdmitting(GetParam(), Topology::Uniform(1, 3, 2));
  ASSERT_TRUE(s->Handle(Job(1, 0, /*root=*/true), Sec(0)).ok());
  auto d = ConfirmedRounds(*s, 0);
  ASSERT_EQ(Of(d, Decision::Kind::kStartTask).size(), 1u);
  const ComputerId root_at = Of(d, Decision::Kind::kStartTask)[0].computer;
  for (TaskId t = 1; t <= 5; ++t) ASSERT_TRUE(s->Handle(TaskSubmitted{t, 1, {}}, Sec(11)).ok());
  d = ConfirmedRounds(*s, 11);
  ASSERT_EQ(Of(d, Decision::Kind::kStartTask).size(), 5u);
  ASSERT_EQ(s->state().free_slots_total(), 0);

  ASSERT_TRUE(s->Handle(ComputerDraining{root_at, true, true}, Sec(30)).ok());
  d = ConfirmedRounds(*s, 30);
  std::vector<Decision> kills = Of(d, Decision::Kind::kKillTask);
  ASSERT_EQ(kills.size(), 1u);  // the worker beside the root
  EXPECT_EQ(kills[0].computer, root_at);
  EXPECT_FALSE(kills[0].root);
  EXPECT_TRUE(Of(d, Decision::Kind::kStartTask).empty());
  const TaskId moved = kills[0].task;
  ASSERT_TRUE(s->Handle(TaskKilled{moved}, Sec(45)).ok());
  EXPECT_EQ(s->state().task(moved).state, TaskState::kWaiting);
  d = ConfirmedRounds(*s, 45);
  EXPECT_TRUE(d.empty()) << ToString(d.front());  // every other slot is taken

  const ComputerId other = (root_at + 1) % 3;
  EndTasksOn<TaskCompleted>(*s, other, 60);
  d = ConfirmedRounds(*s, 60);
  std::vector<Decision> starts = Of(d, Decision::Kind::kStartTask);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].task, moved);
  EXPECT_EQ(starts[0].computer, other);
  EXPECT_TRUE(Of(d, Decision::Kind::kKillTask).empty());
  EXPECT_EQ(s->state().task(1001).computer, root_at);  // the root ran on
  EXPECT_EQ(s->state().task(1001).state, TaskState::kRunning);
}

INSTANTIATE_TEST_SUITE_P(Policies, EveryPolicyTest, ::testing::ValuesIn(PolicyNames()),
                         [](const auto& p) { return p.param; });

// A job alone on the cluster has nobody to yield to: every policy places its
// tasks and never kills one, however its tasks come and go. As in the
// master, a worker confirms a start a little after the decision, tasks
// finish in no particular order, and every event gets its rounds.
TEST(SchedulerTest, ALoneJobIsNeverPreempted) {
  for (const std::string policy : {"QFP", "QF", "QP", "Q", "GFP", "HFS"}) {
    SCOPED_TRACE(policy);
    auto s = MakeAdmitting(policy, Topology::Uniform(2, 3, 2), /*k=*/4);
    std::mt19937 rng(7);
    // (time in ms, task, true: a start confirmation, else a completion)
    std::multimap<int, std::pair<TaskId, bool>> events;
    int now = 0, kills = 0, starts = 0;
    auto rounds = [&] {
      for (int round = 0; round < 10; ++round) {
        auto d = s->Schedule(Sec(now / 1000.0));
        ASSERT_TRUE(d.ok()) << d.status().ToString();
        if (d->empty()) return;
        for (const Decision& x : *d) {
          if (x.kind == Decision::Kind::kKillTask) {
            ++kills;
            ADD_FAILURE() << ToString(x) << " at " << now << " ms";
          } else if (x.kind == Decision::Kind::kStartTask) {
            int confirmed = now + 1 + static_cast<int>(rng() % 3);
            events.insert({confirmed, {x.task, true}});
            if (!x.root) {
              ++starts;
              events.insert({confirmed + 5 + static_cast<int>(rng() % 20), {x.task, false}});
            }
          }
        }
      }
    };
    ASSERT_TRUE(s->Handle(Job(1, 0, /*root=*/true), Sec(0)).ok());
    rounds();
    for (TaskId t = 1; t <= 100; ++t) {
      ASSERT_TRUE(s->Handle(TaskSubmitted{t, 1, {}}, Sec(0)).ok());
    }
    rounds();
    while (!events.empty() && kills == 0) {
      auto [at, e] = *events.begin();
      events.erase(events.begin());
      now = at;
      if (e.second) {
        ASSERT_TRUE(s->Handle(TaskStarted{e.first}, Sec(now / 1000.0)).ok());
      } else {
        ASSERT_TRUE(s->Handle(TaskCompleted{e.first}, Sec(now / 1000.0)).ok());
      }
      rounds();
    }
    EXPECT_EQ(kills, 0);
    EXPECT_EQ(starts, 100);
  }
}

}  // namespace
}  // namespace copse::scheduler

// SchedulingService: the master's scheduling side (docs/design.md §5, §6). It
// owns the Scheduler built from the cluster config (the policy and the flow
// solver by name) and runs it through the one SchedulingLoop: after every
// salient event, and at the scheduler's wakeup. It maps computer names to the
// scheduler's ids, hands out task ids (persisted in blocks, never reused) and
// attempt numbers, turns decisions into launch and kill messages to workers,
// and routes every start, end, preemption, loss and withdrawal of a task to
// its job's root (TaskMessenger), buffering while the root is not connected.
//
// What became of a task is read from the scheduler's own state changes
// (ChangeObserver), so roots hear exactly what the scheduler did: a task
// placed again after a kill was preempted, one removed with its computer was
// lost, a root that waits again (its computer died, or it died) restarts its
// job (JobEvents::OnRootLost).
//
// A run that ends without completing has its files abandoned at the name
// service (TaskFiles) before its end is passed on.
//
// What only readers want (the rounds, the launch latencies, the ends of
// vertex runs for the metrics) is reported to a SchedulingObserver
// (master/scheduling_record.h), which keeps it; the service keeps none of it.
//
// Master restart: the service starts recovering. Workers re-register listing
// their running tasks, which are adopted, and their unacknowledged exits,
// which are delivered; decisions wait until every configured computer has
// registered or `recovery` has passed (EndRecovery), and roots' hellos are
// answered only then.
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/net/backoff.h"
#include "common/tasks.h"
#include "copse/status.h"
#include "dfs/meta_store.h"
#include "master/cluster_manager.h"
#include "master/cluster_service.h"
#include "master/job_scheduling.h"
#include "master/scheduling_record.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduling_loop.h"

namespace copse::master {

// How the service reaches workers and roots (in the master the connections
// the scheduling protocol keeps: master/scheduling_protocol.h).
class TaskMessenger {
 public:
  virtual ~TaskMessenger() = default;
  // Each returns false when the computer's worker has no open connection.
  virtual bool Launch(const std::string& computer, const LaunchRequest& r) = 0;
  virtual bool Kill(const std::string& computer, uint64_t task, uint32_t attempt,
                    const std::string& reason) = 0;
  virtual void AckExit(const std::string& computer, uint64_t task, uint32_t attempt) = 0;
  // Tells every worker the job is over (they keep its logs for a while).
  virtual void JobEnded(uint64_t job) = 0;
  // False when the job's root is not connected.
  virtual bool ToRoot(uint64_t job, const TaskEvent& e) = 0;
};

// The name service's part: files of a run that did not complete.
class TaskFiles {
 public:
  virtual ~TaskFiles() = default;
  virtual void AbandonRun(uint64_t task, uint32_t attempt) = 0;
};

// What a root is told about the tasks it believed live when it said hello.
struct TaskStateReport {
  uint64_t task = 0;
  enum class State { kWaiting, kRunning, kUnknown } state = State::kUnknown;
  uint32_t attempt = 0;
  std::string computer;
};

// How long a restarted master waits for its workers to register again: a
// live worker tries the master again within its reconnect backoff's cap
// (workers and roots use the default backoff), then registers within a
// worker timeout. Recovery ends sooner once every computer is back.
inline Duration RecoveryWindow(const ClusterConfig& config) {
  return config.worker_timeout + net::BackoffOptions{}.max;
}

class SchedulingService final : public JobScheduling,
                                public scheduler::DecisionSink,
                                public scheduler::ChangeObserver,
                                public MembershipListener,
                                public WorkerListener {
 public:
  struct Options {
    // The longest a restarted master waits for its workers.
    Duration recovery = RecoveryWindow(ClusterConfig{});
    Duration root_grace{5'000'000};  // a root that said its job is over exits within this
    bool restarted = false;          // the job table held running jobs: recover first
  };

  // Who the service talks to.
  struct Peers {
    TaskMessenger& messenger;  // workers and roots
    JobEvents& jobs;           // the job service
    TaskFiles& files;          // the name service
    // Hears of each round, launch latency and end of a vertex run (the
    // record the API, `copse bench engine` and the metrics read); optional.
    SchedulingObserver* observer = nullptr;
    // Called when recovery ends (to answer waiting hellos); optional.
    std::function<void()> on_recovered;
  };

  // REQUIRES: every argument (and each of `peers`) outlives the service.
  SchedulingService(asio::io_context& io, const ClusterConfig& config,
                    std::unique_ptr<scheduler::Scheduler> scheduler, dfs::MetaStore& store,
                    const Clock& clock, Peers peers, Options options);
  ~SchedulingService() override;

  // Loads the task id counter; every computer counts as down until its
  // worker registers.
  Status Start();
  void Stop();

  // ---- JobScheduling (the job service)
  Result<uint64_t> AddJob(uint64_t job, uint32_t incarnation, const scheduler::JobAttributes& a,
                          uint64_t root_task, std::vector<ProgramRef> programs = {}) override;
  // The root is killed after Options::root_grace when it said the job is over.
  Status EndJob(uint64_t job, bool root_said_so = false) override;
  void SetIncarnation(uint64_t job, uint32_t incarnation) override;
  bool RootAdopted(uint64_t job) const override;

  // ---- roots
  // The states of the tasks a (re)connecting root lists. Only after recovery.
  std::vector<TaskStateReport> RootHello(uint64_t job, const std::vector<uint64_t>& live);
  // The root is connected again: buffered news goes out.
  void RootConnected(uint64_t job);
  // A message came from the job's root. A running root not heard from for
  // [jobs] root_timeout (it sends progress every second) is killed, and its
  // job restarts as a root that died does.
  void RootHeard(uint64_t job);
  Result<std::vector<uint64_t>> Submit(uint64_t job, std::vector<VertexTaskRequest> tasks);
  Status Withdraw(uint64_t job, uint64_t task);
  bool recovering() const { return recovering_; }

  // ---- workers
  void OnWorkerRegistered(const std::string& computer, net::Connection& conn,
                          const WorkerTasks& tasks) override;
  void TaskStarted(const std::string& computer, uint64_t task, uint32_t attempt);
  void TaskExited(const std::string& computer, const TaskExitReport& exit);
  void OnComputerUp(const std::string& computer) override;
  void OnComputerDown(const std::string& computer) override;
  void OnComputerDraining(const std::string& computer, bool draining, bool move_tasks) override;

  // Ends recovery now (also on a timer).
  void EndRecovery();

  const scheduler::Scheduler& scheduler() const { return *sched_; }

  // ---- the HTTP API (master/api.h; on the loop's thread like the rest)
  struct TaskSummary {
    uint64_t id = 0;
    uint64_t job = 0;
    bool root = false;
    std::string label;
    uint32_t attempt = 0;  // launches so far
    std::string computer;  // where it is placed; "" while it waits
    std::string state;     // the scheduler's: waiting, start requested, running, kill requested
  };
  // Every task the scheduler holds of `job`, in task id order.
  std::vector<TaskSummary> TasksOf(uint64_t job) const;
  // Grows whenever a task of `job` is submitted or changes state (0 for a
  // job it does not hold): a reader tells tasks it has seen from new ones.
  uint64_t TasksVersion(uint64_t job) const;
  // The scheduler's description (Scheduler::Describe) with computer and
  // rack names beside their ids.
  nlohmann::json Describe() const;
  // Why the task waits or runs where it does (Scheduler::Explain); kNotFound
  // for a task the scheduler does not hold.
  Result<nlohmann::json> Explain(uint64_t task) const;
  // The current flow graph aggregated, or null for a policy without one.
  nlohmann::json FlowGraph() const;
  // Adds "computer_name" / "rack_name" beside every integer "computer" /
  // "rack" field of `doc`, recursively.
  void AddNames(nlohmann::json& doc) const;

  // scheduler::DecisionSink
  Status Apply(const scheduler::Decision& d, Timestamp at) override;
  // scheduler::ChangeObserver
  void OnChange(const scheduler::ClusterState& state, const scheduler::Change& change,
                Timestamp now) override;

 private:
  struct Task {
    uint64_t id = 0;
    uint64_t job = 0;
    bool root = false;
    std::string program, descriptor, label;
    Duration timeout{0};
    uint32_t attempt = 0;                // launches so far
    std::string computer;                // where the latest launch went
    bool placed = false;                 // placed since it last waited
    bool withdrawn = false;              // its root withdrew it
    std::optional<TaskExitReport> exit;  // how its latest run ended
  };
  struct Job {
    uint64_t root_task = 0;
    uint32_t incarnation = 0;
    std::deque<TaskEvent> pending;  // news its root has not heard
    bool over = false;
    bool root_said_so = false;         // its root ended it: let the root exit by itself
    uint64_t tasks_version = 0;        // TasksVersion
    Timestamp root_heard{0};           // the root's last message, or its start
    bool root_kill_sent = false;       // killed for being quiet
    std::vector<ProgramRef> programs;  // pinned at submission
  };

  void Handle(const scheduler::Event& e);
  void ScheduleSoon();
  void RunNow();
  void ArmWakeup();
  void ArmRootWatch();
  void WatchRoots();
  // Makes sure `n` more ids may be handed out: kResourceExhausted /
  // kIoError when the store cannot record them.
  Status ReserveTaskIds(size_t n);
  // REQUIRES: ReserveTaskIds covered it.
  uint64_t NewTaskId();
  void Tell(uint64_t job, TaskEvent e);
  void Adopt(const std::string& computer, const RunningTaskReport& r);
  int ComputerId(const std::string& name) const;
  std::string ComputerName(int id) const;
  scheduler::TaskLocality ToLocality(const NamedLocality& l, Status* error) const;

  asio::io_context& io_;
  const ClusterConfig& config_;
  std::unique_ptr<scheduler::Scheduler> sched_;
  std::unique_ptr<scheduler::SchedulingLoop> loop_;
  dfs::MetaStore& store_;
  const Clock& clock_;
  Options options_;
  TaskMessenger& messenger_;
  JobEvents& jobs_;
  TaskFiles& files_;
  SchedulingObserver* const observer_;
  std::map<std::string, int> computer_ids_;
  std::map<std::string, int> rack_ids_;
  std::map<uint64_t, Task> tasks_;
  std::map<uint64_t, Job> job_state_;
  std::set<std::string> registered_;  // computers whose worker registered since start
  uint64_t next_task_ = 1;
  uint64_t task_limit_ = 0;  // ids below this are reserved in the store
  bool recovering_ = false;
  bool run_posted_ = false;
  std::optional<Timestamp> first_event_;  // the oldest event not yet scheduled
  const std::function<void()> on_recovered_;
  asio::steady_timer wakeup_;
  asio::steady_timer recovery_timer_;
  asio::steady_timer root_watch_;
  std::map<uint64_t, std::unique_ptr<asio::steady_timer>> root_kills_;  // by root task
  bool stopped_ = false;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace copse::master

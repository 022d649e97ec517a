// TaskService: the scheduling protocol (proto/scheduling.capnp) on the
// worker's side of its master connection, adapted onto the TaskManager: the
// master's launches, kills, exit acknowledgements and job ends become calls;
// the manager's starts and exits become messages; every registration lists
// the tasks running here and the exits the master has not acknowledged.
// Thread-safety: everything runs on the worker's io_context thread.
#pragma once

#include "worker/task_manager.h"
#include "worker/worker_agent.h"

namespace copse::worker {

class TaskService final : public WorkerAgent::Part, public TaskReporter {
 public:
  // REQUIRES: agent outlives the service.
  explicit TaskService(WorkerAgent& agent) : agent_(agent) {}

  // The manager this service drives. REQUIRES: set before the agent starts;
  // it outlives the service.
  void set_manager(TaskManager* manager) { manager_ = manager; }

  // WorkerAgent::Part
  void FillRegistration(proto::RegisterRequest::Builder r) override;
  Status OnMasterFrame(const net::Frame& frame) override;
  // TaskReporter
  void TaskStarted(uint64_t task, uint32_t attempt, int pid) override;
  void TaskExited(const TaskExitReport& exit) override;

 private:
  WorkerAgent& agent_;
  TaskManager* manager_ = nullptr;
};

}  // namespace copse::worker

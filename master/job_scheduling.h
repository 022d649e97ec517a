// What the job service and the scheduling service ask of each other
// (docs/design.md §6). The job service owns the life of a job: it hands the
// job to scheduling when it is submitted or the master restarts, gives it a
// new incarnation when its root is lost and ends it (JobScheduling). The
// scheduling service tells it when the job is admitted, how each run goes and
// when its root is lost (JobEvents). Each service sees the other only
// through these interfaces, so each can be tested with a fake of the other.
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/tasks.h"
#include "copse/status.h"
#include "scheduler/events.h"

namespace copse::master {

// One run of a task, as the job service records it for status and logs.
struct RunNews {
  uint64_t job = 0;
  uint64_t task = 0;
  uint32_t attempt = 0;
  bool root = false;
  std::string label;
  std::string computer;
  enum class What { kLaunched, kStarted, kEnded } what = What::kLaunched;
  std::optional<TaskExitReport> exit;  // kEnded, when the worker reported it
  std::string ended_why;               // kEnded without a report (lost, withdrawn)
};

// What the job service hears. Calls happen while the scheduler handles an
// event: they must not call back into the scheduling service.
class JobEvents {
 public:
  virtual ~JobEvents() = default;
  virtual void OnAdmitted(uint64_t job) = 0;
  virtual void OnRun(const RunNews& news) = 0;
  // The job's root is gone (its computer died, or it died): the job restarts
  // from the beginning. The job service gives it a new incarnation.
  virtual void OnRootLost(uint64_t job, const std::string& why) = 0;
};

// What the job service asks of scheduling.
class JobScheduling {
 public:
  virtual ~JobScheduling() = default;
  // A job to admit, in submission order, whose root is `root_task` (0: a new
  // id), with the programs of the program store it was pinned to (every
  // launch of its vertices carries them). Returns the root's task id.
  virtual Result<uint64_t> AddJob(uint64_t job, uint32_t incarnation,
                                  const scheduler::JobAttributes& a, uint64_t root_task,
                                  std::vector<ProgramRef> programs) = 0;
  // The job is over: its tasks are killed, and its root — at once when the
  // job was killed; after a grace period when the root said the job is over
  // (`root_said_so`: it exits by itself as soon as the master answers).
  virtual Status EndJob(uint64_t job, bool root_said_so) = 0;
  // Its next root runs as this incarnation.
  virtual void SetIncarnation(uint64_t job, uint32_t incarnation) = 0;
  // A job with a live root, restarted by the job service (a recovered job
  // whose root did not come back): nothing to kill, the root waits again.
  virtual bool RootAdopted(uint64_t job) const = 0;
};

}  // namespace copse::master

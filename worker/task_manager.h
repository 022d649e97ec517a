// TaskManager: runs the tasks the master launches on this computer — a job's
// root task or a vertex — each as a child process (common/subprocess.h), and
// tells the master how each one starts and ends (docs/design.md §1, §6).
//
// A vertex runs a program the ProgramSource finds by name (one of the
// job's pinned programs of the program store, fetched and checked, or one
// of the apps directory: a strict name, never a path or a shell command).
// A program built against the vertex runtime runs as it is; one built for
// another contract version is refused (the run fails, not retried); one
// without the runtime's mark runs as a streaming vertex, under the
// adapter copse-stream from the worker's own directory, its path (and its
// combiner's) in the descriptor. A root runs copse-rootjob from the
// worker's own directory. Each task gets:
//   - its own working directory under <data dir>/tasks/<job>/<task>.<attempt>,
//     holding task.json (the master's descriptor completed with this worker's
//     fields), result.json (what the program reports) and task.log (its
//     stdout and stderr);
//   - its own session and process group, and a parent-death signal, so that
//     nothing it starts outlives its worker or a kill;
//   - the cluster secret on descriptor 3 (a pipe it reads once), never in its
//     argv or environment;
//   - the worker's own library directory first on LD_LIBRARY_PATH, so that a
//     program built against an SDK install runs with this install's.
// Limits (TaskLimits), each checked on a timer: wall-clock time (the job's,
// capped by the worker's), resident memory, log size, working-directory
// size. A task over a limit is killed and ends as failed, with the limit in
// its reason. A log over its limit keeps its start and its end (half the
// limit, at most 1 MiB) around a line saying how much was dropped.
//
// Kill: SIGTERM to the whole group, SIGKILL after the grace period. (The
// master abandons the files of a run that did not complete at the name
// service before it passes the exit on.)
// Exits are kept until the master acknowledges them, so a master that was
// away hears of them when the worker registers again. Logs and working
// directories stay for `retention` after the master says the job ended.
// Thread-safety: everything runs on the worker's io_context thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/subprocess.h"
#include "common/tasks.h"
#include "copse/status.h"
#include "worker/program_cache.h"

namespace copse::worker {

struct TaskLimits {
  Duration timeout{Duration::max()};  // per run; a job may ask for less
  uint64_t memory_bytes = 0;          // resident set; 0: none
  uint64_t log_bytes = 16u << 20;     // stdout + stderr kept per run
  uint64_t workdir_bytes = 0;         // working directory; 0: none
  Duration kill_grace{2'000'000};     // SIGTERM -> SIGKILL
  Duration retention{3'600'000'000};  // logs and working dirs after the job ended
  Duration poll{200'000};             // how often limits are checked
};

class WorkerMetrics;

struct TaskManagerOptions {
  std::string computer;
  std::filesystem::path config_path;  // handed to every task
  std::filesystem::path data_dir;     // tasks/ lives here
  std::filesystem::path apps_dir;     // vertex programs
  std::filesystem::path bin_dir;      // copse-rootjob, copse-stream
  std::filesystem::path lib_dir;      // the SDK's libraries, for programs built against them
  std::string secret;
  TaskLimits limits;
  WorkerMetrics* metrics = nullptr;  // counts launches, starts and ends (optional)
};

// How the manager reaches the master. Calls may happen while the master is
// unreachable; exits are kept and listed again at registration.
class TaskReporter {
 public:
  virtual ~TaskReporter() = default;
  virtual void TaskStarted(uint64_t task, uint32_t attempt, int pid) = 0;
  virtual void TaskExited(const TaskExitReport& exit) = 0;
};

class TaskManager {
 public:
  // REQUIRES: io, clock, reporter and programs outlive the manager.
  TaskManager(asio::io_context& io, TaskManagerOptions options, const Clock& clock,
              TaskReporter& reporter, ProgramSource& programs);
  ~TaskManager();
  TaskManager(const TaskManager&) = delete;
  TaskManager& operator=(const TaskManager&) = delete;

  // Starts a task; its start or its failure to start is reported. A repeated
  // launch of a run that runs or has ended is ignored.
  void Launch(const LaunchRequest& request);
  // Kills a run (a no-op for one that is not running here).
  void Kill(uint64_t task, uint32_t attempt, const std::string& reason);
  // The master recorded this exit: forget it.
  void Ack(uint64_t task, uint32_t attempt);
  void JobEnded(uint64_t job);
  // Kills every task now (the worker is stopping).
  void KillAll();

  std::vector<RunningTaskReport> Running() const;
  std::vector<TaskExitReport> Unacknowledged() const;
  int busy() const { return static_cast<int>(tasks_.size()); }
  // Where a run's log is, if it is still kept.
  std::optional<std::filesystem::path> LogPath(uint64_t job, uint64_t task, uint32_t attempt) const;

  // Removes task directories of jobs that ended more than `retention` ago
  // (and, at start-up, directories left by an earlier worker that old).
  void Sweep();

 private:
  struct Task;
  using Key = std::pair<uint64_t, uint32_t>;  // (task, attempt)

  // Finds the next program the run needs; then Begin.
  void ResolveNext(Key key);
  void OnResolved(Key key, Result<ResolvedProgram> r);
  // Starts the run with its programs found; a start that fails is reported.
  void Begin(Key key);
  Status Start(Task& t, const std::filesystem::path& program, const std::string& exec,
               const std::string& combiner_exec);
  // Reports a run that could not start and forgets it.
  void Failed(Key key, ExitKind kind, const std::string& reason, int exit_code = -1);
  void ReleasePrograms(Task& t);
  void OnOutput(Task& t, std::string_view bytes);
  uint64_t TailCap() const;
  void FinishLog(Task& t);
  void OnExit(Key key, const ExitStatus& status);
  void CheckLimits(Task& t);
  void KillNow(Task& t, const std::string& reason, bool requested);
  void ArmPoll();
  void Report(TaskExitReport exit);
  // Tells the metrics how many tasks (roots, vertices) the manager holds.
  void CountTasks();
  std::filesystem::path TaskDir(uint64_t job, uint64_t task, uint32_t attempt) const;

  asio::io_context& io_;
  TaskManagerOptions options_;
  const Clock& clock_;
  TaskReporter& reporter_;
  ProgramSource& programs_;
  std::map<Key, std::unique_ptr<Task>> tasks_;
  std::map<Key, TaskExitReport> unacked_;
  std::map<uint64_t, Timestamp> ended_jobs_;  // job -> when the master said it ended
  asio::steady_timer poll_;
  bool polling_ = false;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace copse::worker

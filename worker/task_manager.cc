#include "worker/task_manager.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/clock.h"
#include "common/json.h"
#include "common/process.h"
#include "common/program_name.h"
#include "common/text.h"
#include "copse/vertex.h"
#include "rootjob/vertex_io.h"
#include "worker/metrics.h"

namespace copse::worker {
namespace {

constexpr size_t kTailBytes = 4096;          // the log tail sent with an exit
constexpr uint64_t kMaxLogTail = 1u << 20;   // an overflowing log keeps at most this much end
constexpr size_t kMaxResultBytes = 1 << 20;  // result.json read at most
constexpr int kSecretFd = 3;
constexpr const char* kRootProgram = "copse-rootjob";
constexpr const char* kStreamProgram = "copse-stream";

// The combiner a stage's descriptor names for a streaming run, if any.
std::string CombinerOf(const std::string& descriptor) {
  nlohmann::json d = nlohmann::json::parse(descriptor, nullptr, /*allow_exceptions=*/false);
  if (!d.is_object()) return "";
  auto s = d.find("streaming");
  if (s == d.end() || !s->is_object()) return "";
  auto c = s->find("combiner");
  return c != s->end() && c->is_string() ? c->get<std::string>() : "";
}

std::string ReadUpTo(const std::filesystem::path& p, size_t max) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  std::string s(max, '\0');
  in.read(s.data(), static_cast<std::streamsize>(max));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

// Resident set of `pid` in bytes (VmRSS), 0 when unknown.
uint64_t ResidentBytes(int pid) {
  std::istringstream in(ReadProcFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return 0;
}

uint64_t DirectoryBytes(const std::filesystem::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) total += it->file_size(e2);
  }
  return total;
}

std::string Mib(uint64_t bytes) { return fmt::format("{:.1f} MiB", bytes / 1048576.0); }

}  // namespace

struct TaskManager::Task {
  LaunchRequest request;
  std::filesystem::path dir;
  std::unique_ptr<Subprocess> process;
  std::ofstream log;
  uint64_t total = 0;   // bytes of output so far
  uint64_t logged = 0;  // bytes written to the log file
  std::string recent;   // the last bytes of all output (at least the log's tail)
  Timestamp started{0};
  int64_t received_ns = 0;
  int64_t spawned_ns = 0;
  Duration timeout{Duration::max()};
  int polls = 0;
  // Its programs: the names it needs (the program, a combiner) and what
  // the program source found for each so far.
  std::vector<std::string> wanted;
  std::vector<ResolvedProgram> found;
  // Set when it is being killed.
  bool killing = false;
  bool requested = false;  // by the master
  std::string kill_reason;
  std::unique_ptr<asio::steady_timer> grace;
};

TaskManager::TaskManager(asio::io_context& io, TaskManagerOptions options, const Clock& clock,
                         TaskReporter& reporter, ProgramSource& programs)
    : io_(io),
      options_(std::move(options)),
      clock_(clock),
      reporter_(reporter),
      programs_(programs),
      poll_(io) {}

TaskManager::~TaskManager() { KillAll(); }

std::filesystem::path TaskManager::TaskDir(uint64_t job, uint64_t task, uint32_t attempt) const {
  return options_.data_dir / "tasks" / std::to_string(job) /
         (std::to_string(task) + "." + std::to_string(attempt));
}

void TaskManager::Launch(const LaunchRequest& r) {
  Key key{r.task, r.attempt};
  if (tasks_.count(key) != 0 || unacked_.count(key) != 0) return;  // a repeated launch
  auto t = std::make_unique<Task>();
  t->request = r;
  t->received_ns = MonotonicNs();
  t->started = clock_.Now();  // until its program runs: since the launch came
  t->dir = TaskDir(r.job, r.task, r.attempt);
  if (!r.root) {
    t->wanted.push_back(r.program);
    if (std::string c = CombinerOf(r.descriptor); !c.empty()) t->wanted.push_back(c);
  }
  tasks_[key] = std::move(t);
  if (options_.metrics) {
    options_.metrics->TaskLaunched(r.root);
    CountTasks();
  }
  ResolveNext(key);
  ArmPoll();
}

void TaskManager::ResolveNext(Key key) {
  Task& t = *tasks_.at(key);
  if (t.found.size() == t.wanted.size()) {
    Begin(key);
    return;
  }
  std::weak_ptr<int> alive = alive_;
  programs_.Resolve(t.wanted[t.found.size()], t.request.programs,
                    [this, alive, key](Result<ResolvedProgram> r) {
                      if (alive.expired()) {
                        return;
                      }
                      OnResolved(key, std::move(r));
                    });
}

void TaskManager::OnResolved(Key key, Result<ResolvedProgram> r) {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) {  // killed (or timed out) while its program was on its way
    if (r.ok()) programs_.Release(r->lease);
    return;
  }
  Task& t = *it->second;
  if (r.ok()) t.found.push_back(*r);
  if (!r.ok()) {
    // A missing, corrupt or refused program is the job's problem: the run
    // fails (its root decides); trouble reaching the DFS is this worker's.
    StatusCode c = r.status().code();
    bool job_fault = c == StatusCode::kNotFound || c == StatusCode::kInvalidArgument ||
                     c == StatusCode::kCorruption;
    Failed(key, job_fault ? ExitKind::kFailed : ExitKind::kStartFailed, r.status().message());
    return;
  }
  ResolveNext(key);
}

void TaskManager::Begin(Key key) {
  Task& t = *tasks_.at(key);
  const LaunchRequest& r = t.request;
  std::filesystem::path program = options_.bin_dir / kRootProgram;
  std::string exec, combiner_exec;
  if (!r.root) {
    const ResolvedProgram& main = t.found[0];
    if (main.contract == kVertexContract) {
      program = main.exec;
    } else if (main.contract != 0) {
      Failed(key, ExitKind::kFailed,
             fmt::format("program '{}' was built for vertex contract {}, but this worker ({}) "
                         "runs contract {}: build it again against this install's SDK",
                         r.program, main.contract, options_.computer, kVertexContract),
             kExitDoNotRetry);
      return;
    } else {
      // No mark of the runtime: a streaming program, run under the adapter.
      program = options_.bin_dir / kStreamProgram;
      exec = main.exec.string();
    }
    if (t.found.size() > 1) {
      if (t.found[1].contract != 0) {
        Failed(key, ExitKind::kFailed,
               fmt::format("combiner '{}' links the vertex runtime; a combiner must be a "
                           "streaming program (records on stdin, records on stdout)",
                           t.wanted[1]),
               kExitDoNotRetry);
        return;
      }
      combiner_exec = t.found[1].exec.string();
    }
  }
  Status s = Start(t, program, exec, combiner_exec);
  if (!s.ok()) {
    // A bad descriptor is the job's problem; trouble of this worker's is a
    // start failure.
    bool job_fault = s.code() == StatusCode::kNotFound || s.code() == StatusCode::kInvalidArgument;
    Failed(key, job_fault ? ExitKind::kFailed : ExitKind::kStartFailed, s.message());
    return;
  }
  spdlog::info("task {} attempt {} ({} of job {}) started, pid {}", r.task, r.attempt, r.label,
               r.job, t.process->pid());
  if (options_.metrics)
    options_.metrics->TaskStarted(Duration((t.spawned_ns - t.received_ns) / 1000));
  reporter_.TaskStarted(r.task, r.attempt, t.process->pid());
  ArmPoll();
}

void TaskManager::ReleasePrograms(Task& t) {
  for (const ResolvedProgram& p : t.found) programs_.Release(p.lease);
  t.found.clear();
}

Status TaskManager::Start(Task& t, const std::filesystem::path& program, const std::string& exec,
                          const std::string& combiner_exec) {
  const LaunchRequest& r = t.request;
  rootjob::VertexDescriptor run;
  run.task = r.task;
  run.attempt = r.attempt;
  run.job = r.job;
  run.incarnation = r.incarnation;
  run.computer = options_.computer;
  run.config = options_.config_path.string();
  run.secret_fd = kSecretFd;
  run.result_file = (t.dir / "result.json").string();
  run.launch_received_ns = t.received_ns;
  run.contract = kVertexContract;
  run.exec = exec;
  run.combiner_exec = combiner_exec;
  COPSE_ASSIGN_OR_RETURN(std::string task_json, rootjob::CompleteDescriptor(r.descriptor, run));
  std::error_code ec;
  std::filesystem::remove_all(t.dir, ec);
  std::filesystem::create_directories(t.dir, ec);
  if (ec) return IoError(fmt::format("cannot create {}: {}", t.dir.string(), ec.message()));
  {
    std::ofstream out(t.dir / "task.json");
    out << task_json << "\n";
    if (!out) return IoError(fmt::format("cannot write {}", (t.dir / "task.json").string()));
  }
  t.log.open(t.dir / "task.log", std::ios::binary | std::ios::trunc);
  if (!t.log) return IoError(fmt::format("cannot write {}", (t.dir / "task.log").string()));
  // The secret, on a pipe the task reads once.
  int secret[2];
  if (::pipe2(secret, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + strerror(errno));
  bool wrote = ::write(secret[1], options_.secret.data(), options_.secret.size()) ==
               static_cast<ssize_t>(options_.secret.size());
  ::close(secret[1]);
  if (!wrote) {
    ::close(secret[0]);
    return IoError("cannot hand the secret to the task");
  }
  SpawnOptions o;
  o.program = program;
  o.args = {(t.dir / "task.json").string()};
  o.cwd = t.dir;
  o.out = SpawnOptions::Output::kPipe;
  o.err_to_out = true;
  o.new_session = true;
  o.death_signal = SIGKILL;
  o.pass_fds = {{secret[0], kSecretFd}};
  {
    // Programs built against an SDK install find this install's libraries.
    // The streaming adapter's malloc backs its large buffers (records to
    // sort, buckets) with huge pages: first touches of 4 KiB pages were most
    // of its time on a virtual machine (docs/sdk.md "Measurements").
    std::vector<std::string> env;
    std::string path = options_.lib_dir.string();
    std::string tunables = exec.empty() ? "" : "glibc.malloc.hugetlb=1";
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view v(*e);
      if (v.rfind("LD_LIBRARY_PATH=", 0) == 0 && !path.empty()) {
        if (v.size() > 16) path += ":" + std::string(v.substr(16));
      } else if (v.rfind("GLIBC_TUNABLES=", 0) == 0 && !tunables.empty()) {
        tunables = std::string(v.substr(15)) + ":" + tunables;
      } else {
        env.emplace_back(v);
      }
    }
    if (!path.empty()) env.push_back("LD_LIBRARY_PATH=" + path);
    if (!tunables.empty()) env.push_back("GLIBC_TUNABLES=" + tunables);
    o.env = std::move(env);
  }
  auto p = Subprocess::Spawn(io_, std::move(o));
  t.spawned_ns = MonotonicNs();  // Spawn() returns once the program has been exec'd
  ::close(secret[0]);
  if (!p.ok()) return p.status();
  t.process = std::move(*p);
  t.started = clock_.Now();
  Duration asked = r.timeout > Duration{0} ? r.timeout : Duration::max();
  t.timeout = std::min(asked, options_.limits.timeout);
  Key key{r.task, r.attempt};
  std::weak_ptr<int> alive = alive_;
  Task* tp = &t;
  t.process->set_on_output(
      [this, alive, tp](std::string_view b) {
        if (!alive.expired()) OnOutput(*tp, b);
      },
      nullptr);
  t.process->set_on_exit([this, alive, key](const ExitStatus& s) {
    if (!alive.expired()) OnExit(key, s);
  });
  return Status::Ok();
}

void TaskManager::Failed(Key key, ExitKind kind, const std::string& reason, int exit_code) {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return;
  const LaunchRequest r = it->second->request;
  ReleasePrograms(*it->second);
  tasks_.erase(it);
  spdlog::warn("task {} attempt {} ({} of job {}) could not start: {}", r.task, r.attempt,
               EscapeForLog(r.label), r.job, EscapeForLog(reason));
  TaskExitReport e;
  e.task = r.task;
  e.attempt = r.attempt;
  e.job = r.job;
  e.root = r.root;
  e.kind = kind;
  e.reason = reason;
  e.exit_code = exit_code;
  Report(std::move(e));
}

// The log file gets output up to the limit; past it, only `recent` keeps
// the end, which replaces the log's second part when the run ends.
void TaskManager::OnOutput(Task& t, std::string_view b) {
  t.total += b.size();
  t.recent.append(b);
  const size_t keep_recent = static_cast<size_t>(std::max<uint64_t>(kTailBytes, TailCap()));
  if (t.recent.size() > 2 * keep_recent) t.recent.erase(0, t.recent.size() - keep_recent);
  uint64_t room = options_.limits.log_bytes > t.logged ? options_.limits.log_bytes - t.logged : 0;
  size_t write = static_cast<size_t>(std::min<uint64_t>(room, b.size()));
  if (write > 0) {
    t.log.write(b.data(), static_cast<std::streamsize>(write));
    t.log.flush();
    t.logged += write;
  }
}

uint64_t TaskManager::TailCap() const {
  return std::min<uint64_t>(options_.limits.log_bytes / 2, kMaxLogTail);
}

// An overflowing log ends as its start, a line saying how much was dropped,
// and its end: at most the limit (and the line).
void TaskManager::FinishLog(Task& t) {
  t.log.close();
  if (t.total <= options_.limits.log_bytes) return;
  const uint64_t tail = std::min<uint64_t>(TailCap(), t.recent.size());
  const uint64_t head = options_.limits.log_bytes - TailCap();
  std::error_code ec;
  std::filesystem::resize_file(t.dir / "task.log", head, ec);
  std::ofstream out(t.dir / "task.log", std::ios::binary | std::ios::app);
  out << fmt::format("\n[copse: the log limit of {} bytes was reached; {} bytes dropped]\n",
                     options_.limits.log_bytes, t.total - head - tail)
      << std::string_view(t.recent).substr(t.recent.size() - tail);
}

void TaskManager::OnExit(Key key, const ExitStatus& status) {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return;
  std::unique_ptr<Task> t = std::move(it->second);
  tasks_.erase(it);
  if (t->grace) t->grace->cancel();
  FinishLog(*t);
  ReleasePrograms(*t);
  TaskExitReport e;
  e.task = key.first;
  e.attempt = key.second;
  e.job = t->request.job;
  e.root = t->request.root;
  e.exit_code = status.signal == 0 && status.known ? status.code : -1;
  e.signal = status.signal;
  e.run = clock_.Now() - t->started;
  e.log_tail = WithoutNul(Utf8Suffix(t->recent, kTailBytes));
  e.result = ReadUpTo(t->dir / "result.json", kMaxResultBytes);
  if (!e.result.empty()) {
    if (JsonDepth(e.result, kMaxJsonDepth) > kMaxJsonDepth || !nlohmann::json::accept(e.result)) {
      e.result.clear();  // not a result document
    } else if (int64_t started = rootjob::ParseResult(e.result).started_ns; started > 0) {
      e.launch_us = (started - t->received_ns) / 1000;
      e.spawn_us = (t->spawned_ns - t->received_ns) / 1000;
    }
  }
  if (t->killing && t->requested) {
    e.kind = ExitKind::kKilled;
    e.reason = t->kill_reason;
  } else if (t->killing) {
    e.kind = ExitKind::kFailed;
    e.reason = t->kill_reason;
  } else if (status.ok()) {
    e.kind = ExitKind::kCompleted;
    e.reason = "exit code 0";
  } else {
    e.kind = ExitKind::kFailed;
    e.reason = status.ToString();
  }
  spdlog::info("task {} attempt {} ({} of job {}) ended: {}", e.task, e.attempt, t->request.label,
               e.job, e.reason);
  Report(std::move(e));
}

void TaskManager::Report(TaskExitReport exit) {
  Key key{exit.task, exit.attempt};
  unacked_[key] = exit;
  if (options_.metrics) {
    options_.metrics->TaskEnded(exit.root, exit.kind);
    CountTasks();
  }
  reporter_.TaskExited(exit);
}

void TaskManager::CountTasks() {
  int roots = 0;
  for (const auto& [key, t] : tasks_) roots += t->request.root ? 1 : 0;
  options_.metrics->SetRunning(roots, static_cast<int>(tasks_.size()) - roots);
}

void TaskManager::Ack(uint64_t task, uint32_t attempt) { unacked_.erase({task, attempt}); }

void TaskManager::Kill(uint64_t task, uint32_t attempt, const std::string& reason) {
  auto it = tasks_.find({task, attempt});
  if (it == tasks_.end()) return;
  KillNow(*it->second, reason, /*requested=*/true);
}

void TaskManager::KillNow(Task& t, const std::string& reason, bool requested) {
  if (t.killing) return;
  t.killing = true;
  t.requested = requested;
  t.kill_reason = reason;
  spdlog::info("killing task {} attempt {}: {}", t.request.task, t.request.attempt, reason);
  if (!t.process) {
    // Its program is still on its way: the run ends now, never started (the
    // program's late answer finds it gone and gives its lease back).
    TaskExitReport e;
    e.task = t.request.task;
    e.attempt = t.request.attempt;
    e.job = t.request.job;
    e.root = t.request.root;
    e.kind = requested ? ExitKind::kKilled : ExitKind::kFailed;
    e.reason = reason;
    ReleasePrograms(t);
    tasks_.erase({t.request.task, t.request.attempt});
    Report(std::move(e));
    return;
  }
  (void)t.process->Signal(SIGTERM);
  t.grace = std::make_unique<asio::steady_timer>(io_, options_.limits.kill_grace);
  std::weak_ptr<int> alive = alive_;
  Key key{t.request.task, t.request.attempt};
  t.grace->async_wait([this, alive, key](const asio::error_code& ec) {
    if (ec || alive.expired()) return;
    auto it = tasks_.find(key);
    if (it != tasks_.end() && it->second->process) (void)it->second->process->Signal(SIGKILL);
  });
}

void TaskManager::KillAll() {
  for (auto& [key, t] : tasks_) {
    if (t->process) (void)t->process->Signal(SIGKILL);
  }
}

void TaskManager::CheckLimits(Task& t) {
  if (t.killing) return;
  if (!t.process) {
    // Fetching its program counts in its time.
    Duration waited = clock_.Now() - t.started;
    Duration limit = std::min(t.request.timeout > Duration{0} ? t.request.timeout : Duration::max(),
                              options_.limits.timeout);
    if (limit != Duration::max() && waited > limit) {
      KillNow(t,
              fmt::format("timed out after {:.1f} s (limit {:.1f} s) while its program was "
                          "being fetched",
                          ToSeconds(waited), ToSeconds(limit)),
              false);
    }
    return;
  }
  const TaskLimits& lim = options_.limits;
  Duration ran = clock_.Now() - t.started;
  if (t.timeout != Duration::max() && ran > t.timeout) {
    KillNow(t,
            fmt::format("timed out after {:.1f} s (limit {:.1f} s)", ToSeconds(ran),
                        ToSeconds(t.timeout)),
            false);
    return;
  }
  if (lim.memory_bytes > 0) {
    uint64_t rss = ResidentBytes(t.process->pid());
    if (rss > lim.memory_bytes) {
      KillNow(t,
              fmt::format("memory limit exceeded: {} resident, the limit is {}", Mib(rss),
                          Mib(lim.memory_bytes)),
              false);
      return;
    }
  }
  if (lim.workdir_bytes > 0 && t.polls++ % 5 == 0) {
    uint64_t used = DirectoryBytes(t.dir);
    if (used > lim.workdir_bytes) {
      KillNow(t,
              fmt::format("working-directory limit exceeded: {} used, the limit is {}", Mib(used),
                          Mib(lim.workdir_bytes)),
              false);
    }
  }
}

void TaskManager::ArmPoll() {
  if (polling_ || tasks_.empty()) return;
  polling_ = true;
  poll_.expires_after(options_.limits.poll);
  std::weak_ptr<int> alive = alive_;
  poll_.async_wait([this, alive](const asio::error_code& ec) {
    if (ec || alive.expired()) return;
    polling_ = false;
    // A check may end a run whose program has not arrived (and forget it).
    std::vector<Key> keys;
    for (const auto& [key, t] : tasks_) keys.push_back(key);
    for (const Key& key : keys) {
      auto it = tasks_.find(key);
      if (it != tasks_.end()) CheckLimits(*it->second);
    }
    ArmPoll();
  });
}

void TaskManager::JobEnded(uint64_t job) {
  ended_jobs_.emplace(job, clock_.Now());
  Sweep();
}

void TaskManager::Sweep() {
  std::error_code ec;
  const std::filesystem::path root = options_.data_dir / "tasks";
  Timestamp now = clock_.Now();
  for (auto it = std::filesystem::directory_iterator(root, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    uint64_t job = 0;
    try {
      job = std::stoull(it->path().filename().string());
    } catch (...) {
      continue;
    }
    bool running = false;
    for (const auto& [key, t] : tasks_) running |= t->request.job == job;
    if (running) continue;
    auto ended = ended_jobs_.find(job);
    bool old = false;
    if (ended != ended_jobs_.end()) {
      old = now - ended->second >= options_.limits.retention;
    } else {
      // Left by an earlier worker process: by its age on disk.
      std::error_code e2;
      auto mtime = std::filesystem::last_write_time(it->path(), e2);
      old = !e2 && std::filesystem::file_time_type::clock::now() - mtime >=
                       std::chrono::duration_cast<std::filesystem::file_time_type::duration>(
                           options_.limits.retention);
    }
    if (!old) continue;
    std::error_code e3;
    std::filesystem::remove_all(it->path(), e3);
    ended_jobs_.erase(job);
  }
}

std::vector<RunningTaskReport> TaskManager::Running() const {
  std::vector<RunningTaskReport> out;
  Timestamp now = clock_.Now();
  for (const auto& [key, t] : tasks_) {
    const LaunchRequest& r = t->request;
    out.push_back({key.first, key.second, r.job, r.incarnation, r.root, now - t->started, r.label,
                   r.program, r.descriptor, r.timeout});
  }
  return out;
}

std::vector<TaskExitReport> TaskManager::Unacknowledged() const {
  std::vector<TaskExitReport> out;
  for (const auto& [key, e] : unacked_) out.push_back(e);
  return out;
}

std::optional<std::filesystem::path> TaskManager::LogPath(uint64_t job, uint64_t task,
                                                          uint32_t attempt) const {
  std::filesystem::path p = TaskDir(job, task, attempt) / "task.log";
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return std::nullopt;
  return p;
}

}  // namespace copse::worker

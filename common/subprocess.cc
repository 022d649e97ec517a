#include "common/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/steady_timer.hpp>
#include <cstring>
#include <mutex>

extern char** environ;

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace copse {
namespace {

std::mutex& ManagedMutex() {
  static std::mutex mu;
  return mu;
}
std::set<int>& Managed() {
  static std::set<int> pids;
  return pids;
}
void Manage(int pid, bool add) {
  std::lock_guard<std::mutex> lock(ManagedMutex());
  if (add) {
    Managed().insert(pid);
  } else {
    Managed().erase(pid);
  }
}

// What the child does between clone and exec, by step, for error messages.
enum Step : int { kNetns = 1, kSession, kDeathSignal, kStdio, kPassFds, kCwd, kExec };

const char* StepName(int step) {
  switch (step) {
    case kNetns:
      return "entering the network namespace";
    case kSession:
      return "starting a session";
    case kDeathSignal:
      return "setting the parent-death signal";
    case kStdio:
      return "redirecting standard streams";
    case kPassFds:
      return "passing descriptors";
    case kCwd:
      return "changing to the working directory";
    default:
      return "exec";
  }
}

// Everything the child needs, prepared before the clone: until exec the
// child shares this process's memory (CLONE_VM | CLONE_VFORK, as
// posix_spawn does: no page tables are copied, which made launches from a
// busy worker slow) and only makes system calls on a stack of its own. What
// went wrong, if anything, it writes into the plan.
struct ChildPlan {
  std::vector<std::string> argv_strings;  // what argv points into
  std::string cwd_string;                 // what cwd points to
  std::vector<char*> argv, envp;
  const char* cwd = nullptr;
  int in_fd = -1, out_fd = -1, err_fd = -1;  // -1: keep this process's
  std::vector<std::pair<int, int>> moves;    // (fd here, fd in the child)
  std::vector<int> keep;                     // child fds >= 3 left open, ascending
  int netns_fd = -1;
  int death_signal = 0;
  bool new_session = false;
  pid_t parent = 0;
  // Raw views of the vectors: the child calls no library code of ours.
  const std::pair<int, int>* moves_begin = nullptr;
  const std::pair<int, int>* moves_end = nullptr;
  const int* keep_begin = nullptr;
  const int* keep_end = nullptr;
  char* const* argv_raw = nullptr;
  char* const* envp_raw = nullptr;
  // Written by the child when a step fails (the parent reads them once the
  // child has exec'd or exited).
  volatile int fail_step = 0;
  volatile int fail_errno = 0;
};

// The child's code may not be instrumented: a sanitizer's bookkeeping would
// be done in the parent's memory, for a stack that is not the parent's.
#define COPSE_CHILD_CODE __attribute__((no_sanitize("address", "undefined"), noinline))

[[noreturn]] COPSE_CHILD_CODE void ChildFail(ChildPlan& p, int step) {
  p.fail_errno = errno;
  p.fail_step = step;
  ::_exit(127);
}

COPSE_CHILD_CODE int ChildMain(void* arg) {
  ChildPlan& p = *static_cast<ChildPlan*>(arg);
  // The parent's signal handlers must not run here (they would run on the
  // parent's memory): every caught signal goes back to its default while
  // all are blocked (as the parent left them), and SIGPIPE, which daemons
  // ignore, too.
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction sa {};
    if (::sigaction(sig, nullptr, &sa) != 0) continue;
    if (sig == SIGPIPE || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      ::sigaction(sig, &dfl, nullptr);
    }
  }
  if (p.netns_fd >= 0 && ::setns(p.netns_fd, CLONE_NEWNET) != 0) ChildFail(p, kNetns);
  if (p.new_session && ::setsid() < 0) ChildFail(p, kSession);
  if (p.death_signal != 0) {
    if (::prctl(PR_SET_PDEATHSIG, p.death_signal) != 0) ChildFail(p, kDeathSignal);
    if (::getppid() != p.parent) ::_exit(127);  // the parent is gone already
  }
  if ((p.in_fd >= 0 && ::dup2(p.in_fd, 0) < 0) || (p.out_fd >= 0 && ::dup2(p.out_fd, 1) < 0) ||
      (p.err_fd >= 0 && ::dup2(p.err_fd, 2) < 0)) {
    ChildFail(p, kStdio);
  }
  for (const std::pair<int, int>* m = p.moves_begin; m != p.moves_end; ++m) {
    if (::dup2(m->first, m->second) < 0) ChildFail(p, kPassFds);  // not close-on-exec
  }
  // Every other descriptor closes on exec.
  unsigned lo = 3;
  for (const int* fd = p.keep_begin; fd != p.keep_end; ++fd) {
    if (static_cast<unsigned>(*fd) > lo) ::close_range(lo, *fd - 1, CLOSE_RANGE_CLOEXEC);
    lo = static_cast<unsigned>(*fd) + 1;
  }
  ::close_range(lo, ~0U, CLOSE_RANGE_CLOEXEC);
  if (p.cwd != nullptr && ::chdir(p.cwd) != 0) ChildFail(p, kCwd);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(p.argv_raw[0], p.argv_raw, p.envp_raw);
  ChildFail(p, kExec);
}

// A stack for children, one per spawning thread, kept: it is only ever
// used by a child while its parent thread waits.
char* ChildStackTop() {
  constexpr size_t kSize = 64 * 1024;
  thread_local std::unique_ptr<char[]> stack(new char[kSize]);
  // The stack grows down; 16-byte aligned.
  return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(stack.get() + kSize) & ~uintptr_t{15});
}

Status SpawnError(const std::filesystem::path& program, const char* step, int err) {
  std::string msg = "cannot start " + program.string() + ": " + step + ": " + std::strerror(err);
  if (err == ENOENT) return NotFound(msg);
  if (err == EACCES || err == EPERM) return PermissionDenied(msg);
  return IoError(msg);
}

// Descriptors opened for one spawn; closed here when it is over.
struct Fds {
  std::vector<int> fds;
  Fds() = default;
  Fds(const Fds&) = delete;
  Fds& operator=(const Fds&) = delete;
  ~Fds() { CloseAll(); }
  void CloseAll() {
    for (int fd : fds) ::close(fd);
    fds.clear();
  }
  int Add(int fd) {
    if (fd >= 0) fds.push_back(fd);
    return fd;
  }
};

Result<int> OpenOutput(SpawnOptions::Output kind, const std::filesystem::path& file, Fds& fds) {
  if (kind == SpawnOptions::Output::kNull) {
    int fd = fds.Add(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    if (fd < 0) return IoError(std::string("cannot open /dev/null: ") + std::strerror(errno));
    return fd;
  }
  if (kind == SpawnOptions::Output::kFile) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    int fd = fds.Add(::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (fd < 0) return IoError("cannot open " + file.string() + ": " + std::strerror(errno));
    return fd;
  }
  return -1;
}

// The command line, environment and working directory. The environment
// given in `o` stays there: `o` must outlive the plan.
void PlanCommand(SpawnOptions& o, ChildPlan& plan) {
  plan.argv_strings.push_back(o.program.string());
  plan.argv_strings.insert(plan.argv_strings.end(), o.args.begin(), o.args.end());
  for (std::string& a : plan.argv_strings) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  if (o.env) {
    for (std::string& e : *o.env) plan.envp.push_back(e.data());
    plan.envp.push_back(nullptr);
  } else {
    for (char** e = environ; *e != nullptr; ++e) plan.envp.push_back(*e);
    plan.envp.push_back(nullptr);
  }
  plan.cwd_string = o.cwd.string();
  if (!plan.cwd_string.empty()) plan.cwd = plan.cwd_string.c_str();
}

// A pipe whose write end goes to the child; returns that end and puts the
// read end, non-blocking, into `*read_end`.
Result<int> OpenPipe(Fds& parent_side, Fds& child_side, int* read_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  ::fcntl(p[0], F_SETFL, O_NONBLOCK);  // only our end: the child's writes block as usual
  *read_end = parent_side.Add(p[0]);
  return child_side.Add(p[1]);
}

// The child's standard streams; the read ends of its output pipes, if any,
// go into `*out_read` and `*err_read`.
Status PlanStdio(const SpawnOptions& o, ChildPlan& plan, Fds& parent_side, Fds& child_side,
                 int* out_read, int* err_read) {
  if (o.stdin_null) {
    plan.in_fd = child_side.Add(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (plan.in_fd < 0) return IoError(std::string("cannot open /dev/null: ") + strerror(errno));
  }
  if (o.out == SpawnOptions::Output::kPipe) {
    COPSE_ASSIGN_OR_RETURN(plan.out_fd, OpenPipe(parent_side, child_side, out_read));
  } else {
    COPSE_ASSIGN_OR_RETURN(plan.out_fd, OpenOutput(o.out, o.out_file, child_side));
  }
  if (o.err_to_out) {
    plan.err_fd = plan.out_fd >= 0 ? plan.out_fd : 1;
  } else if (o.err == SpawnOptions::Output::kPipe) {
    COPSE_ASSIGN_OR_RETURN(plan.err_fd, OpenPipe(parent_side, child_side, err_read));
  } else {
    COPSE_ASSIGN_OR_RETURN(plan.err_fd, OpenOutput(o.err, o.err_file, child_side));
  }
  return Status::Ok();
}

// The descriptors passed at chosen numbers. They are first copied above
// every target number, so that placing one never overwrites another.
Status PlanPassedFds(const SpawnOptions& o, ChildPlan& plan, Fds& child_side) {
  int top = 2;
  for (const auto& [from, to] : o.pass_fds) top = std::max(top, to);
  for (const auto& [from, to] : o.pass_fds) {
    int high = child_side.Add(::fcntl(from, F_DUPFD_CLOEXEC, top + 1));
    if (high < 0) return IoError("cannot pass descriptor " + std::to_string(from));
    plan.moves.push_back({high, to});
    if (to >= 3) plan.keep.push_back(to);
  }
  std::sort(plan.keep.begin(), plan.keep.end());
  return Status::Ok();
}

// The process settings, and the raw views the child reads.
void FinishPlan(const SpawnOptions& o, ChildPlan& plan) {
  plan.netns_fd = o.netns_fd;
  plan.death_signal = o.death_signal;
  plan.new_session = o.new_session;
  plan.parent = ::getpid();
  plan.moves_begin = plan.moves.data();
  plan.moves_end = plan.moves.data() + plan.moves.size();
  plan.keep_begin = plan.keep.data();
  plan.keep_end = plan.keep.data() + plan.keep.size();
  plan.argv_raw = plan.argv.data();
  plan.envp_raw = plan.envp.data();
}

struct Child {
  pid_t pid;
  int pidfd;
};

// Starts the child on `plan` and closes the child's ends here. An error when
// the clone or a step of the child before its exec failed (the child is
// reaped then).
Result<Child> CloneChild(ChildPlan& plan, Fds& child_side, const std::filesystem::path& program) {
  // All signals blocked across the clone (the child unblocks them before
  // exec); this thread is suspended until the child execs or exits.
  sigset_t all, saved;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  int pidfd = -1;
  const pid_t pid = ::clone(ChildMain, ChildStackTop(),
                            CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &plan, &pidfd);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  child_side.CloseAll();  // the child's ends, here
  if (pid < 0) return SpawnError(program, "clone", clone_errno);
  if (plan.fail_step != 0) {
    siginfo_t info{};
    while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED) < 0 &&
           errno == EINTR) {
    }
    ::close(pidfd);
    return SpawnError(program, StepName(plan.fail_step), plan.fail_errno);
  }
  return Child{pid, pidfd};
}

}  // namespace

std::string ExitStatus::ToString() const {
  if (!known) {
    return wait_errno == 0
               ? std::string("exit status unknown")
               : "exit status unknown (waitid: " + std::string(std::strerror(wait_errno)) + ")";
  }
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) +
           (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
  }
  return "exit code " + std::to_string(code);
}

struct Subprocess::Pipe {
  Pipe(asio::io_context& io, int fd) : sd(io, fd) {}
  asio::posix::stream_descriptor sd;
  std::array<char, 64 * 1024> buf;
  bool err = false;  // stderr, not stdout
  bool open = true;
};

Result<std::unique_ptr<Subprocess>> Subprocess::Spawn(asio::io_context& io, SpawnOptions o) {
  if (!o.program.is_absolute()) {
    return InvalidArgument("cannot start " + o.program.string() + ": not an absolute path");
  }
  Fds parent_side, child_side;
  ChildPlan plan;
  PlanCommand(o, plan);
  int out_read = -1, err_read = -1;
  COPSE_RETURN_IF_ERROR(PlanStdio(o, plan, parent_side, child_side, &out_read, &err_read));
  COPSE_RETURN_IF_ERROR(PlanPassedFds(o, plan, child_side));
  FinishPlan(o, plan);
  COPSE_ASSIGN_OR_RETURN(Child child, CloneChild(plan, child_side, o.program));
  ::fcntl(child.pidfd, F_SETFD, FD_CLOEXEC);
  Manage(child.pid, true);
  std::unique_ptr<Subprocess> sp(new Subprocess(io, child.pid, child.pidfd, o.new_session));
  // The read ends now belong to the Subprocess.
  auto adopt = [&](int fd, bool err) {
    if (fd < 0) return std::unique_ptr<Pipe>();
    parent_side.fds.erase(std::find(parent_side.fds.begin(), parent_side.fds.end(), fd));
    auto p = std::make_unique<Pipe>(io, fd);
    p->err = err;
    return p;
  };
  sp->out_ = adopt(out_read, false);
  sp->err_ = adopt(err_read, true);
  if (sp->out_) sp->ReadPipe(*sp->out_);
  if (sp->err_) sp->ReadPipe(*sp->err_);
  sp->WatchExit();
  return sp;
}

Subprocess::Subprocess(asio::io_context& io, int pid, int pidfd, bool group)
    : io_(io), pid_(pid), group_(group), pidfd_(std::make_unique<Pipe>(io, pidfd)) {}

Subprocess::~Subprocess() {
  if (!status_ && !detached_) {
    (void)Signal(SIGKILL);
    // Asio made the pidfd non-blocking, and waitid() honours that.
    const int fd = pidfd_->sd.native_handle();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    siginfo_t info{};
    while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(fd), &info, WEXITED) < 0 &&
           errno == EINTR) {
    }
    Manage(pid_, false);
  }
}

void Subprocess::WatchExit() {
  std::weak_ptr<int> alive = alive_;
  pidfd_->sd.async_wait(asio::posix::stream_descriptor::wait_read,
                        [this, alive](const asio::error_code& ec) {
                          if (alive.expired() || ec || detached_) return;
                          Reaped();
                        });
}

void Subprocess::ReadPipe(Pipe& p) {
  std::weak_ptr<int> alive = alive_;
  p.sd.async_read_some(asio::buffer(p.buf),
                       [this, alive, &p](const asio::error_code& ec, size_t n) {
                         if (alive.expired() || !p.open) return;
                         if (n > 0) {
                           const OutputCallback& cb = p.err ? on_err_ : on_out_;
                           if (cb) cb(std::string_view(p.buf.data(), n));
                         }
                         if (ec) {  // end of file, or an error: nothing more comes
                           p.open = false;
                           p.sd.close();
                           if (status_ && (!out_ || !out_->open) && (!err_ || !err_->open))
                             Forget();
                           return;
                         }
                         ReadPipe(p);
                       });
}

void Subprocess::Reaped() {
  siginfo_t info{};
  int rc;
  while ((rc = ::waitid(static_cast<idtype_t>(P_PIDFD),
                        static_cast<id_t>(pidfd_->sd.native_handle()), &info, WEXITED)) < 0 &&
         errno == EINTR) {
  }
  if (rc < 0 && errno == EAGAIN) {
    // The pidfd reported the exit before the child became waitable (the
    // pidfd is non-blocking): look again shortly.
    retry_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::milliseconds(1));
    std::weak_ptr<int> alive = alive_;
    retry_timer_->async_wait([this, alive](const asio::error_code& ec) {
      if (alive.expired() || ec || detached_) return;
      Reaped();
    });
    return;
  }
  ExitStatus s;
  if (rc < 0) {
    s.known = false;  // reaped by someone else
    s.wait_errno = errno;
  } else if (info.si_code == CLD_EXITED) {
    s.code = info.si_status;
  } else {
    s.signal = info.si_status;
  }
  status_ = s;
  Manage(pid_, false);
  pidfd_->sd.close();
  bool pipes_open = (out_ && out_->open) || (err_ && err_->open);
  if (!pipes_open) {
    Forget();
    return;
  }
  // What it wrote is in the pipes; a process it left behind may keep them
  // open, so they get a moment to reach end of file.
  drain_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::milliseconds(200));
  std::weak_ptr<int> alive = alive_;
  drain_timer_->async_wait([this, alive](const asio::error_code& ec) {
    if (alive.expired() || ec) return;
    ClosePipes();
    Forget();
  });
}

void Subprocess::ClosePipes() {
  for (Pipe* p : {out_.get(), err_.get()}) {
    if (p != nullptr && p->open) {
      p->open = false;
      p->sd.close();
    }
  }
}

// Reports the exit, once.
void Subprocess::Forget() {
  if (reported_) return;
  reported_ = true;
  if (drain_timer_) drain_timer_->cancel();
  ExitCallback cb = std::move(on_exit_);
  on_exit_ = nullptr;
  if (cb) cb(*status_);
}

Status Subprocess::Signal(int sig) {
  if (status_ || detached_) return Status::Ok();
  if (::kill(group_ ? -pid_ : pid_, sig) != 0 && errno != ESRCH) {
    return IoError("cannot signal process " + std::to_string(pid_) + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

void Subprocess::Detach() {
  if (status_) return;
  detached_ = true;
  Manage(pid_, false);
  ClosePipes();
}

Result<ProcessResult> RunProcess(SpawnOptions options, std::chrono::milliseconds deadline,
                                 size_t max_capture) {
  if (options.out == SpawnOptions::Output::kInherit) options.out = SpawnOptions::Output::kPipe;
  if (options.err == SpawnOptions::Output::kInherit) options.err = SpawnOptions::Output::kPipe;
  asio::io_context io;
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> p, Subprocess::Spawn(io, std::move(options)));
  ProcessResult r;
  asio::steady_timer timer(io, deadline);
  auto append = [max_capture](std::string* to) {
    return [to, max_capture](std::string_view b) {
      to->append(b.substr(0, max_capture - std::min(max_capture, to->size())));
    };
  };
  p->set_on_output(append(&r.out), append(&r.err));
  p->set_on_exit([&](const ExitStatus& s) {
    r.status = s;
    timer.cancel();
  });
  timer.async_wait([&](const asio::error_code& ec) {
    if (ec) return;
    r.timed_out = true;
    (void)p->Signal(SIGKILL);
  });
  io.run();
  return r;
}

std::set<int> ManagedChildren() {
  std::lock_guard<std::mutex> lock(ManagedMutex());
  return Managed();
}

}  // namespace copse

// Subprocess: a child process on an Asio event loop. Spawning, signalling
// and reaping are written once, here (docs/design.md §2), for the worker's task
// manager, the launcher (`copse cluster up`, network namespaces) and the
// tests.
//
// Spawn() starts a program by absolute path with an explicit argv
// (never a shell), optionally in a new session (its own process group, so a
// signal reaches everything it started), with a parent-death signal (it does
// not outlive the thread that spawned it), in a working directory, inside a
// network namespace, with stdout and stderr to /dev/null, a file or a pipe
// read on the loop, and with chosen descriptors passed on. Every other
// descriptor is closed in the child. A failure before the program runs (no
// such file, not executable, a bad working directory) is returned by Spawn()
// with the step that failed, not reported as an exit status. Spawn() returns
// once the program has been exec'd: the child shares this process's memory
// until then (clone with CLONE_VM | CLONE_VFORK, as posix_spawn does), so
// starting a program costs the same from a small process and a big one.
//
// The child's exit is watched through a pidfd on the loop: on_exit runs once,
// after the child is reaped and what it wrote to its pipes has been
// delivered. A Subprocess destroyed while its child runs kills it (its group
// with a session of its own) and reaps it, unless Detach() let it go (a
// daemon that outlives the command that started it).
//
// RunProcess() runs a program to completion on a private loop, capturing its
// output, killing it at a deadline (the tools `copse` runs, the tests).
//
// Thread-safety: a Subprocess belongs to the thread running its io_context.
// Something else reaping its child (waitpid(-1, ...)) makes its exit status
// unknown; ManagedChildren() lists the pids Subprocesses own so that such a
// reaper (the tests' reaper of orphaned daemons) can leave them alone.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "copse/status.h"

namespace copse {

// How a child ended.
struct ExitStatus {
  int code = -1;       // its exit code, when it exited
  int signal = 0;      // the signal that killed it, else 0
  bool known = true;   // false: something else reaped it
  int wait_errno = 0;  // when not known: what waitid() said
  bool ok() const { return known && signal == 0 && code == 0; }
  // "exit code 3", "killed by signal 9 (SIGKILL)",
  // "exit status unknown (waitid: No child processes)".
  std::string ToString() const;
};

struct SpawnOptions {
  enum class Output {
    kInherit,  // this process's descriptor
    kNull,     // /dev/null
    kFile,     // appended to a file (created with mode 0644)
    kPipe,     // read on the loop, handed to the output callback
  };
  std::filesystem::path program;                // absolute path; argv[0]
  std::vector<std::string> args;                // argv[1...]
  std::optional<std::vector<std::string>> env;  // "NAME=value"; nullopt: this process's
  std::filesystem::path cwd;                    // empty: this process's
  bool stdin_null = true;                       // else this process's stdin
  Output out = Output::kInherit;
  Output err = Output::kInherit;
  std::filesystem::path out_file, err_file;  // for kFile
  bool err_to_out = false;                   // stderr goes where stdout goes (err is ignored)
  bool new_session = false;                  // setsid(): its own session and process group
  int death_signal = 0;  // sent to it when the spawning thread exits (PR_SET_PDEATHSIG)
  int netns_fd = -1;     // enters this network namespace before exec
  // Descriptors passed on: (this process's fd, the number it has in the child).
  std::vector<std::pair<int, int>> pass_fds;
};

class Subprocess {
 public:
  using ExitCallback = std::function<void(const ExitStatus&)>;
  // A piece of the child's output on a pipe.
  using OutputCallback = std::function<void(std::string_view bytes)>;

  // Starts the program. Errors name the program and what failed: kNotFound
  // (no such program or working directory), kPermissionDenied, kIoError.
  // REQUIRES: io outlives the Subprocess.
  static Result<std::unique_ptr<Subprocess>> Spawn(asio::io_context& io, SpawnOptions options);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  int pid() const { return pid_; }
  bool running() const { return !status_.has_value() && !detached_; }
  // Set before the loop runs: called on the loop thread.
  void set_on_exit(ExitCallback cb) { on_exit_ = std::move(cb); }
  void set_on_output(OutputCallback out, OutputCallback err) {
    on_out_ = std::move(out);
    on_err_ = std::move(err);
  }
  // Sends `sig` to the child, or to its whole process group when it has a
  // session of its own. Ok (and nothing sent) once it has been reaped.
  Status Signal(int sig);
  // How it ended, once reaped.
  const std::optional<ExitStatus>& exit_status() const { return status_; }
  // Lets the child run on: never killed or reaped by this object.
  void Detach();

 private:
  struct Pipe;
  Subprocess(asio::io_context& io, int pid, int pidfd, bool group);
  void WatchExit();
  void ReadPipe(Pipe& p);
  void Reaped();
  void ClosePipes();
  void Forget();

  asio::io_context& io_;
  int pid_;
  bool group_;
  std::unique_ptr<Pipe> pidfd_;
  std::unique_ptr<Pipe> out_, err_;
  std::optional<ExitStatus> status_;
  std::unique_ptr<asio::steady_timer> drain_timer_;  // pipes left open after the exit
  std::unique_ptr<asio::steady_timer> retry_timer_;  // readable pidfd, child not yet waitable
  bool reported_ = false;
  bool detached_ = false;
  ExitCallback on_exit_;
  OutputCallback on_out_, on_err_;
  // Pending Asio handlers hold a weak_ptr to this and do nothing once it expires.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

struct ProcessResult {
  ExitStatus status;
  std::string out;  // stdout (with stderr when err_to_out)
  std::string err;
  bool timed_out = false;  // killed at the deadline
};

// Runs `options` (stdout and stderr become pipes unless they name a file or
// /dev/null) to completion, capturing up to `max_capture` bytes of each, and
// kills it (its group with new_session) at `deadline`.
Result<ProcessResult> RunProcess(SpawnOptions options, std::chrono::milliseconds deadline,
                                 size_t max_capture = 16u << 20);

// The pids of the children Subprocesses in this process own and have not
// reaped yet.
std::set<int> ManagedChildren();

}  // namespace copse

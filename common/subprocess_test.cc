#include "common/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/process.h"

namespace copse {
namespace {

using namespace std::chrono_literals;

SpawnOptions Sh(const std::string& script) {
  SpawnOptions o;
  o.program = "/bin/sh";
  o.args = {"-c", script};
  return o;
}

std::filesystem::path TempDir() {
  char tmpl[] = "/tmp/copse-subprocess-XXXXXX";
  return ::mkdtemp(tmpl);
}

TEST(SubprocessTest, RunsAndCapturesOutputAndExitCode) {
  auto r = RunProcess(Sh("echo out; echo err >&2; exit 3"), 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->status.code, 3);
  EXPECT_FALSE(r->status.ok());
  EXPECT_EQ(r->status.ToString(), "exit code 3");
  EXPECT_FALSE(r->timed_out);
}

TEST(SubprocessTest, StderrCanJoinStdout) {
  SpawnOptions o = Sh("echo a; echo b >&2; echo c");
  o.err_to_out = true;
  auto r = RunProcess(o, 10s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "a\nb\nc\n");
  EXPECT_TRUE(r->status.ok());
}

TEST(SubprocessTest, MissingProgramIsAnErrorNotAnExitStatus) {
  SpawnOptions o;
  o.program = "/nonexistent/copse-no-such-program";
  auto r = RunProcess(o, 10s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("copse-no-such-program"), std::string::npos);
  EXPECT_NE(r.status().message().find("exec"), std::string::npos);
  o.program = "relative/path";
  EXPECT_EQ(RunProcess(o, 10s).status().code(), StatusCode::kInvalidArgument);
}

TEST(SubprocessTest, BadWorkingDirectoryNamesTheStep) {
  SpawnOptions o = Sh("true");
  o.cwd = "/nonexistent/dir";
  auto r = RunProcess(o, 10s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("working directory"), std::string::npos);
}

TEST(SubprocessTest, WorkingDirectoryEnvironmentAndPassedDescriptor) {
  std::filesystem::path dir = TempDir();
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ASSERT_EQ(::write(p[1], "secret", 6), 6);
  ::close(p[1]);
  SpawnOptions o = Sh("pwd; echo $COPSE_X; cat <&7; ls /proc/self/fd | wc -l");
  o.cwd = dir;
  o.env = std::vector<std::string>{"COPSE_X=42", "PATH=/usr/bin:/bin"};
  o.pass_fds = {{p[0], 7}};
  auto r = RunProcess(o, 10s);
  ::close(p[0]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::istringstream lines(r->out);
  std::string cwd, x, secret_and_count;
  std::getline(lines, cwd);
  std::getline(lines, x);
  EXPECT_EQ(cwd, dir.string());
  EXPECT_EQ(x, "42");
  // "secret" has no newline; then the count of open descriptors of `ls`:
  // 0, 1, 2, 7 and the one it lists with (none of ours leaked).
  std::getline(lines, secret_and_count);
  EXPECT_EQ(secret_and_count, "secret5");
  std::filesystem::remove_all(dir);
}

TEST(SubprocessTest, OutputToFileIsAppended) {
  std::filesystem::path dir = TempDir();
  SpawnOptions o = Sh("echo one");
  o.out = SpawnOptions::Output::kFile;
  o.out_file = dir / "logs" / "out.txt";
  o.err_to_out = true;
  ASSERT_TRUE(RunProcess(o, 10s).ok());
  o.args = {"-c", "echo two >&2"};
  ASSERT_TRUE(RunProcess(o, 10s).ok());
  std::ifstream in(o.out_file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "one\ntwo\n");
  std::filesystem::remove_all(dir);
}

TEST(SubprocessTest, DeadlineKillsTheProcess) {
  auto start = std::chrono::steady_clock::now();
  auto r = RunProcess(Sh("echo started; exec sleep 30"), 300ms);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->status.signal, SIGKILL);
  EXPECT_EQ(r->status.ToString(), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(r->out, "started\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(SubprocessTest, SignalReachesTheWholeSessionAndExitIsReportedOnTheLoop) {
  asio::io_context io;
  SpawnOptions o = Sh("sleep 30 & echo $!; wait");
  o.out = SpawnOptions::Output::kPipe;
  o.new_session = true;
  auto p = Subprocess::Spawn(io, o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::string out;
  std::optional<ExitStatus> status;
  (*p)->set_on_output([&](std::string_view b) { out.append(b); }, nullptr);
  (*p)->set_on_exit([&](const ExitStatus& s) { status = s; });
  EXPECT_TRUE(ManagedChildren().count((*p)->pid()));
  // Wait for the grandchild's pid, then signal the group.
  while (out.find('\n') == std::string::npos) io.run_one();
  int grandchild = std::stoi(out);
  EXPECT_TRUE(ProcessAlive(grandchild));
  ASSERT_TRUE((*p)->Signal(SIGTERM).ok());
  while (!status) io.run_one();
  EXPECT_EQ(status->signal, SIGTERM);
  EXPECT_FALSE((*p)->running());
  EXPECT_FALSE(ManagedChildren().count((*p)->pid()));
  // The grandchild got it too (it is ours to reap only as a subreaper; it is
  // dead or a zombie of init).
  for (int i = 0; i < 200 && ProcessAlive(grandchild); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(ProcessAlive(grandchild));
  EXPECT_TRUE((*p)->Signal(SIGKILL).ok());  // reaped: nothing to do
}

TEST(SubprocessTest, DestroyingARunningSubprocessKillsAndReapsIt) {
  asio::io_context io;
  auto p = Subprocess::Spawn(io, Sh("exec sleep 30"));
  ASSERT_TRUE(p.ok());
  int pid = (*p)->pid();
  EXPECT_TRUE(ProcessAlive(pid));
  p->reset();
  EXPECT_FALSE(ProcessAlive(pid));
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(pid)));  // reaped
}

TEST(SubprocessTest, DetachedChildOutlivesTheObject) {
  asio::io_context io;
  auto p = Subprocess::Spawn(io, Sh("exec sleep 30"));
  ASSERT_TRUE(p.ok());
  int pid = (*p)->pid();
  (*p)->Detach();
  p->reset();
  EXPECT_TRUE(ProcessAlive(pid));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST(SubprocessTest, ParentDeathSignalWhenTheSpawningThreadEnds) {
  int pid = -1;
  std::thread t([&] {
    asio::io_context io;
    SpawnOptions o = Sh("exec sleep 30");
    o.death_signal = SIGKILL;
    auto p = Subprocess::Spawn(io, o);
    ASSERT_TRUE(p.ok());
    pid = (*p)->pid();
    (*p)->Detach();  // not killed by the destructor: by the death signal
  });
  t.join();
  ASSERT_GT(pid, 0);
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = !ProcessAlive(pid);
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone);
  ::waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace copse

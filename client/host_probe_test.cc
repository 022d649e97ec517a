// The pieces `copse cluster` uses on other hosts, without ssh: quoting for
// the remote shell (checked by a real shell), the probe script (run here by
// sh) and its parser (with hostile answers), and the preflight's verdicts.
#include "client/host_probe.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client/remote_cluster.h"
#include "client/ssh.h"
#include "common/sha256.h"
#include "common/subprocess.h"

namespace copse::client {
namespace {

Result<ProcessResult> Sh(std::vector<std::string> args) {
  SpawnOptions o;
  o.program = "/bin/sh";
  o.args = std::move(args);
  return RunProcess(std::move(o), std::chrono::seconds(30));
}

TEST(ShellQuoteTest, EveryWordReachesTheProgramAsItWas) {
  const std::vector<std::string> words = {
      "",           "plain",     "two words", "it's",        "'",  "''\\'",
      "$(touch x)", "`touch x`", "a;b|c&d",   "line\nbreak", "*",  "~root",
      "$HOME",      "\\",        "\"q\"",     "-n",          "--", "\t\x01\x7f\xc3\xa9"};
  auto r = Sh({"-c", "printf '%s\\0' " + ShellCommand(words)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->status.ok()) << r->err;
  std::vector<std::string> got;
  size_t start = 0;
  for (size_t i = 0; i < r->out.size(); ++i) {
    if (r->out[i] == '\0') {
      got.push_back(r->out.substr(start, i - start));
      start = i + 1;
    }
  }
  EXPECT_EQ(got, words);
}

TEST(ShellQuoteTest, SshGetsOneQuotedCommandAfterItsOptions) {
  DeployConfig d;
  d.ssh_user = "ops";
  d.ssh_port = 2222;
  d.ssh_options = {"-i", "/keys/id ed"};
  EXPECT_EQ(SshDestination(d, "node1"), "ops@node1");
  EXPECT_EQ(SshOptions(d, std::chrono::seconds(7)),
            (std::vector<std::string>{"-o", "BatchMode=yes", "-o", "ConnectTimeout=7", "-p", "2222",
                                      "-i", "/keys/id ed"}));
  d.ssh_user.clear();
  EXPECT_EQ(SshDestination(d, "10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(RsyncQuote("/keys/it's key"), "'/keys/it''s key'");
}

// The script as a host runs it, here: what it says about this machine.
TEST(ProbeTest, TheScriptDescribesThisMachine) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("copse-probe-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const uint16_t port = ntohs(a.sin_port);

  const int64_t before = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  std::ofstream(dir / "secret") << "s3cret";
  auto r =
      Sh({"-c", ProbeScript(), "copse-probe", (dir / "install").string(), (dir / "secret").string(),
          (dir / "not" / "yet" / "there").string(), "/proc/no-such-dir"});
  ::close(fd);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->status.ok()) << r->err;
  auto p = ParseProbe(r->out);
  ASSERT_TRUE(p.ok()) << p.status().ToString() << "\n" << r->out;
  EXPECT_EQ(p->os, LocalOs());
  EXPECT_EQ(p->arch, LocalArch());
  EXPECT_GE(p->clock_ns, before);
  EXPECT_LT(p->clock_ns - before, int64_t{60'000'000'000});
  EXPECT_TRUE(p->installed_build.empty());
  EXPECT_EQ(p->secret_digest, Sha256Hex("s3cret"));
  ASSERT_EQ(p->dirs.size(), 3u);
  EXPECT_EQ(p->dirs[0].path, dir / "install");
  EXPECT_TRUE(p->dirs[0].writable);  // created under an existing writable directory
  EXPECT_GT(p->dirs[0].free_bytes, 0u);
  EXPECT_TRUE(p->dirs[1].writable);
  EXPECT_FALSE(p->dirs[2].writable);  // /proc is not writable
  EXPECT_TRUE(p->listening.count(port)) << r->out;
  std::filesystem::remove_all(dir);
}

TEST(ProbeTest, HostileAnswersAreErrorsNamingTheLine) {
  const std::string clock = "clock 1700000000000000000\nprocs listed\n";
  for (const std::string& bad :
       {std::string("os debian;rm -rf /\n"), std::string("arch x86_64\x1b[2J\n"),
        std::string("clock 12a\n"), std::string("clock 99999999999999999999999\n"),
        std::string("build zz\n"), std::string("dir 2 10 /x\n"), std::string("dir 1 -5 /x\n"),
        std::string("dir 1\n"), std::string("listen 1F90A\n"), std::string("listen xyz\n"),
        std::string("proc 12 /bin/copse-worker\n"), std::string("proc -1 /x\036a\n"),
        std::string("proc 1234567890 /x\036a\n"), std::string("proc 1 /x\036a\n")}) {
    auto p = ParseProbe(clock + bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.status().message().find("line 3"), std::string::npos) << p.status().ToString();
  }
  auto unlisted = ParseProbe("clock 1\n");
  ASSERT_FALSE(unlisted.ok());
  EXPECT_NE(unlisted.status().message().find("GNU find"), std::string::npos);
  auto none = ParseProbe("hello\nworld\n");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no clock"), std::string::npos);
  auto newer = ParseProbe(clock + "gpu 4\n\n");
  EXPECT_TRUE(newer.ok()) << newer.status().ToString();
}

HostProbe Probe(std::string extra = "") {
  auto p = ParseProbe(
      "os debian 12\narch x86_64\nclock 1000000000000\nbuild abc123\nrsync yes\n"
      "dir 1 1048576 /opt/copse\nlisten 1F90\nlisten 1F41\nprocs listed\n" +
      extra);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

TEST(ProbeTest, OurDaemonsAreThoseOfThisInstallAndConfig) {
  HostProbe p = Probe(
      "proc 10 /opt/copse/bin/copse-master\036/opt/copse/bin/copse-master\037--config\037/opt/"
      "copse/etc/cluster.toml\037--quiet\037\n"
      "proc 11 /opt/copse/bin/copse-worker (deleted)\036copse-worker\037--config\037/opt/copse/"
      "etc/cluster.toml\037--computer\037r0-c00\037\n"
      "proc 12 /opt/copse/bin/copse-worker\036copse-worker\037--config\037/elsewhere.toml\037--"
      "computer\037r0-c01\n"
      "proc 13 /usr/local/bin/copse-worker\036copse-worker\037--config\037/opt/copse/etc/"
      "cluster.toml\037--computer\037r0-c02\n");
  ASSERT_EQ(p.processes.size(), 4u);
  EXPECT_TRUE(p.processes[1].exe_replaced);
  EXPECT_EQ(p.processes[1].exe, "/opt/copse/bin/copse-worker");
  std::vector<RunningDaemon> ours = OurDaemons(p, "/opt/copse");
  ASSERT_EQ(ours.size(), 2u);
  EXPECT_EQ(ours[0].role, "master");
  EXPECT_EQ(ours[0].pid, 10);
  EXPECT_FALSE(ours[0].replaced);
  EXPECT_EQ(ours[1].role, "worker");
  EXPECT_EQ(ours[1].computer, "r0-c00");
  EXPECT_TRUE(ours[1].replaced);
}

ClusterConfig TwoHostConfig() {
  auto c = ParseClusterConfig(R"(
[cluster]
name = "t"
data_root = "/var/lib/copse"
[master]
host = "10.0.0.1"
port = 8000
[http]
enabled = false
[[racks]]
name = "r0"
slots = 1
  [[racks.computers]]
  name = "a"
  host = "10.0.0.1"
  control_port = 8001
  data_port = 8002
  [[racks.computers]]
  name = "b"
  host = "10.0.0.2"
  control_port = 8001
  data_port = 8002
  [[racks.computers]]
  name = "c"
  host = "10.0.0.2"
  control_port = 8003
  data_port = 8004
)",
                              "/opt/copse/etc/cluster.toml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

TEST(PreflightTest, HostsAreGroupedWithTheirDaemonsAndPorts) {
  std::vector<HostPlan> hosts = PlanHosts(TwoHostConfig());
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_TRUE(hosts[0].master);
  EXPECT_EQ(hosts[0].computers, std::vector<std::string>{"a"});
  EXPECT_EQ(hosts[0].ports.size(), 3u);
  EXPECT_FALSE(hosts[1].master);
  EXPECT_EQ(hosts[1].computers, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(hosts[1].ports.size(), 4u);
  EXPECT_EQ(hosts[1].dirs.front(), "/opt/copse");
}

TEST(PreflightTest, EveryFailureIsListedWithItsFix) {
  ClusterConfig config = TwoHostConfig();
  std::vector<HostPlan> hosts = PlanHosts(config);
  LocalFacts local{"debian 12", "x86_64", "abc123", "", 999000000000, 1000000000000};

  PreflightRow ok = EvaluatePreflight(config, hosts[0], nullptr, "Connection refused", local);
  ASSERT_EQ(ok.failures.size(), 1u);
  EXPECT_NE(ok.failures[0].find("BatchMode"), std::string::npos);
  EXPECT_FALSE(ok.reachable);

  // Port 8000 (0x1F40) is free; 8001 (0x1F41), computer a's control_port, is taken.
  HostProbe p = Probe();
  PreflightRow row = EvaluatePreflight(config, hosts[0], &p, "", local);
  ASSERT_EQ(row.failures.size(), 1u) << row.failures[0];
  EXPECT_NE(row.failures[0].find("8001 (computer a's control_port)"), std::string::npos);
  EXPECT_EQ(row.copse, "this build");
  EXPECT_EQ(row.clock, "+0.00s");  // read while the probe was under way

  // Many at once: another system, a clock 5 s ahead, no rsync, a read-only
  // directory; all listed.
  auto bad = ParseProbe(
      "os ubuntu 22.04\narch aarch64\nclock 1005000000000\nbuild 999\nrsync no\nprocs listed\n"
      "dir 0 10 /opt/copse\n");
  ASSERT_TRUE(bad.ok());
  PreflightRow many = EvaluatePreflight(config, hosts[1], &*bad, "", local);
  EXPECT_EQ(many.failures.size(), 4u);
  EXPECT_EQ(many.clock, "+5.00s");   // read after the answer came: at least 5 s ahead
  EXPECT_EQ(many.notes.size(), 1u);  // build 999 would be replaced
}

TEST(PreflightTest, ARunningDaemonHoldsItsOwnPortsButAnOldBuildFails) {
  ClusterConfig config = TwoHostConfig();
  std::vector<HostPlan> hosts = PlanHosts(config);
  LocalFacts local{"debian 12", "x86_64", "abc123", "", 999000000000, 1000000000000};
  const std::string worker_a =
      "proc 20 /opt/copse/bin/copse-worker\036w\037--config\037/opt/copse/etc/cluster.toml\037--"
      "computer\037a\n";
  HostProbe p = Probe(worker_a);
  PreflightRow row = EvaluatePreflight(config, hosts[0], &p, "", local);
  EXPECT_TRUE(row.failures.empty()) << row.failures[0];
  EXPECT_EQ(row.copse, "this build, 1 running");

  LocalFacts newer = local;
  newer.build = "def456";
  PreflightRow old = EvaluatePreflight(config, hosts[0], &p, "", newer);
  ASSERT_EQ(old.failures.size(), 1u);
  EXPECT_NE(old.failures[0].find("restart --rolling --install"), std::string::npos);
  // Daemons that run with another secret than the one to be shipped.
  HostProbe other_secret = Probe(worker_a + "secret " + std::string(64, 'e') + "\n");
  local.secret_digest = std::string(64, 'f');
  PreflightRow split = EvaluatePreflight(config, hosts[0], &other_secret, "", local);
  ASSERT_EQ(split.failures.size(), 1u);
  EXPECT_EQ(split.failures[0].rfind("secret:", 0), 0u) << split.failures[0];
  // Which is what a rolling restart onto the new build expects.
  PreflightRow rolling = EvaluatePreflight(config, hosts[0], &p, "", newer, /*upgrade=*/true);
  EXPECT_TRUE(rolling.failures.empty()) << rolling.failures[0];
  EXPECT_EQ(rolling.notes.size(), 2u);  // the build replaced, the daemons restarted
}

// Whether `pid` runs: exists and is not a zombie (an orphan's is reaped by
// whatever adopted it, which in a container may be never).
bool Runs(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const size_t end = stat.rfind(')');
  return end != std::string::npos && end + 2 < stat.size() && stat[end + 2] != 'Z';
}

// The start and stop commands, run here by sh against a fake daemon: the
// pid printed is the daemon's, it runs detached with its output in its data
// directory, and the stop ends it with SIGTERM (and says nothing was killed).
TEST(DaemonCommandsTest, StartPrintsThePidAndStopEndsIt) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("copse-start-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "bin");
  // A stand-in for copse-worker that runs until SIGTERM: it says how it was
  // started, then becomes a copy of sleep in the install's bin/.
  std::filesystem::copy_file("/bin/sleep", dir / "bin" / "copse-sleep");
  std::ofstream(dir / "bin" / "copse-worker")
      << "#!/bin/sh\necho started \"$@\"\nexec \"$(dirname \"$0\")/copse-sleep\" 600\n";
  std::filesystem::permissions(dir / "bin" / "copse-worker", std::filesystem::perms::owner_all);
  auto config = ParseClusterConfig(
      "[cluster]\nname = \"t\"\ndata_root = \"" + (dir / "data").string() +
          "\"\n[master]\nhost = \"127.0.0.1\"\nport = 8000\n[http]\nenabled = false\n"
          "[deploy]\ninstall_dir = \"" +
          dir.string() +
          "\"\n[[racks]]\nname = \"r0\"\n"
          "  [[racks.computers]]\n  name = \"a\"\n  control_port = 8001\n  data_port = 8002\n",
      dir / "etc" / "cluster.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  std::vector<std::string> start = DaemonStartArgv(*config, "worker", "a");
  ASSERT_EQ(start[0], "sh");
  auto r = Sh({start.begin() + 1, start.end()});
  ASSERT_TRUE(r.ok() && r->status.ok()) << (r.ok() ? r->err : r.status().ToString());
  ASSERT_EQ(r->out.rfind("started a ", 0), 0u) << r->out;  // "started COMPUTER PID"
  const int pid = std::stoi(r->out.substr(10));
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(Runs(pid));
  // It says it started before it is stopped (a bounded wait: it runs on its own).
  const std::filesystem::path output = dir / "data" / "a" / "worker.stderr";
  for (int i = 0;
       i < 200 && (!std::filesystem::exists(output) || std::filesystem::is_empty(output)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  RunningDaemon d{"worker", "a", pid, false};
  std::vector<std::string> stop = DaemonStopArgv(*config, {d}, std::chrono::seconds(5));
  auto s = Sh({stop.begin() + 1, stop.end()});
  ASSERT_TRUE(s.ok() && s->status.ok());
  EXPECT_EQ(s->out, "");  // ended by SIGTERM, not killed
  // A pid that no longer runs the install's executable is not signalled.
  auto again = Sh({stop.begin() + 1, stop.end()});
  ASSERT_TRUE(again.ok() && again->status.ok());
  RunningDaemon stranger{"worker", "a", static_cast<int>(::getpid()), false};
  std::vector<std::string> not_ours = DaemonStopArgv(*config, {stranger}, std::chrono::seconds(1));
  auto spared = Sh({not_ours.begin() + 1, not_ours.end()});
  ASSERT_TRUE(spared.ok() && spared->status.ok());  // and this test still runs
  EXPECT_FALSE(Runs(pid));
  std::ifstream out(output);
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "started --config " + (dir / "etc" / "cluster.toml").string() +
                      " --quiet --computer a");
  std::filesystem::remove_all(dir);
}

TEST(DaemonCommandsTest, WithSystemdTheUnitsStartAndStopThem) {
  ClusterConfig config = TwoHostConfig();
  config.deploy.systemd = true;
  std::vector<std::string> start = DaemonStartArgv(config, "worker", "b");
  ASSERT_EQ(start.size(), 7u);  // sh -c SCRIPT $0 TAG UNIT FILE
  EXPECT_EQ(start[4], "b");
  EXPECT_EQ(start[5], "copse-t-worker@b.service");
  EXPECT_EQ(start[6], "/opt/copse/etc/systemd/copse-t-worker@.service");
  EXPECT_EQ(DaemonStartArgv(config, "master", "")[5], "copse-t-master.service");
  EXPECT_EQ(DaemonStopArgv(config, {{"worker", "b", 12, false}, {"master", "", 10, false}},
                           std::chrono::seconds(10)),
            (std::vector<std::string>{"systemctl", "stop", "copse-t-worker@b.service",
                                      "copse-t-master.service"}));
}

}  // namespace
}  // namespace copse::client

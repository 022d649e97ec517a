// Integration tests: a real master and workers on loopback, started and
// stopped through the `copse` tool, with faults injected by killing processes.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "client/loopback_cluster.h"
#include "common/config.h"
#include "common/net/auth.h"
#include "common/subprocess.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override { config_ = WriteClusterConfig(dir_.path(), LocalClusterSpec{}); }
  void TearDown() override {
    RunCopse("copse", {"--config", config_.string(), "cluster", "down"});
    ReapChildren();
  }

  CommandResult Copse(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_.string()});
    return RunCopse("copse", args);
  }

  // The status as JSON, or null when the master does not answer.
  json Status() {
    CommandResult r = Copse({"cluster", "status", "--json"});
    if (r.exit_code != 0) return nullptr;
    return json::parse(r.out);
  }

  std::string StateOf(const json& st, const std::string& computer) {
    if (st.is_null()) return "";
    for (const json& c : st["computers"])
      if (c["name"] == computer) return c["state"];
    return "";
  }

  json PidFile() {
    std::ifstream in(dir_.path() / "data" / "cluster.pids.json");
    return json::parse(in);
  }

  int PidOf(const std::string& role, const std::string& computer = "") {
    json file = PidFile();
    for (const json& p : file["processes"])
      if (p["role"] == role && p["computer"] == computer) return p["pid"];
    return 0;
  }

  void Up() {
    CommandResult r = Copse({"cluster", "up"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  TempDir dir_;
  std::filesystem::path config_;
};

TEST_F(ClusterTest, UpShowsSixLiveComputersInTwoRacks) {
  CommandResult up = Copse({"cluster", "up"});
  ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
  EXPECT_NE(up.out.find("6 of 6 computers live"), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("master.log"), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("cluster down"), std::string::npos) << up.out;
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "data" / "cluster.secret"));
  json st = Status();
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["live"], 6);
  std::map<std::string, int> per_rack;
  for (const json& c : st["computers"]) {
    EXPECT_EQ(c["state"], "live");
    EXPECT_EQ(c["slots"], 1);
    per_rack[c["rack"]]++;
  }
  EXPECT_EQ(per_rack, (std::map<std::string, int>{{"r0", 3}, {"r1", 3}}));
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "data" / "master" / "master.log"));
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "data" / "c12" / "worker.log"));
  // A second `up` finds everything running and starts nothing new.
  int master = PidOf("master");
  Up();
  EXPECT_EQ(PidOf("master"), master);
}

TEST_F(ClusterTest, KilledWorkerDiesAndComesBack) {
  Up();
  int victim = PidOf("worker", "c01");
  ASSERT_GT(victim, 0);
  // The master declares c01 dead once it has heard nothing from it for the
  // 1 s timeout. Its last heartbeat arrived no earlier than (this query's
  // start - the age the query reports - 1 ms of rounding), so timing the
  // death from there cannot fail because a heartbeat came late or the polls
  // were slow (under ASan on a loaded machine both happen), only because
  // the master declared it dead too early.
  auto asked = std::chrono::steady_clock::now();
  json before = Status();
  int64_t age = -1;
  for (const json& c : before["computers"]) {
    if (c["name"] == "c01") age = c["last_heartbeat_ms_ago"];
  }
  ASSERT_GE(age, 0) << before.dump();
  auto heard_no_earlier = asked - milliseconds(age + 1);
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  // Dead within the 1 s timeout plus a margin for checks and slow sanitizer builds.
  ASSERT_TRUE(WaitFor([&] { return StateOf(Status(), "c01") == "dead"; }, seconds(10)));
  EXPECT_GE(std::chrono::steady_clock::now() - heard_no_earlier, milliseconds(1000));
  EXPECT_EQ(StateOf(Status(), "c00"), "live");
  Up();  // restarts only the missing worker
  EXPECT_NE(PidOf("worker", "c01"), victim);
  json st = Status();
  EXPECT_EQ(st["live"], 6);
}

// A worker that was silent past the timeout (stopped, not killed) is dead to
// the master; when it runs again its next heartbeat is answered with "register
// again" (a live worker's heartbeats get no answer) and it is live again in
// the same process.
TEST_F(ClusterTest, AWorkerSilentPastTheTimeoutRegistersAgainWhenItRunsAgain) {
  Up();
  int sleeper = PidOf("worker", "c02");
  ASSERT_GT(sleeper, 0);
  ASSERT_EQ(::kill(sleeper, SIGSTOP), 0);
  bool dead = WaitFor([&] { return StateOf(Status(), "c02") == "dead"; }, seconds(20));
  ASSERT_EQ(::kill(sleeper, SIGCONT), 0);
  ASSERT_TRUE(dead) << "the master did not notice the silent worker";
  EXPECT_TRUE(WaitFor([&] { return StateOf(Status(), "c02") == "live"; }, seconds(20)));
  EXPECT_EQ(PidOf("worker", "c02"), sleeper);
  EXPECT_TRUE(ProcessAlive(sleeper));
  EXPECT_EQ(Status()["live"], 6);
}

TEST_F(ClusterTest, RestartedMasterGetsItsWorkersBackByItself) {
  Up();
  std::vector<int> workers;
  for (const char* c : {"c00", "c01", "c02", "c10", "c11", "c12"})
    workers.push_back(PidOf("worker", c));
  int master = PidOf("master");
  ASSERT_EQ(::kill(master, SIGTERM), 0);
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(master); }, seconds(10)));
  EXPECT_TRUE(Status().is_null());
  Up();  // starts the master again, on the same port
  EXPECT_NE(PidOf("master"), master);
  ASSERT_TRUE(WaitFor([&] { return Status()["live"] == 6; }, seconds(15)));
  // The same worker processes re-registered: nobody restarted them.
  std::vector<int> after;
  for (const char* c : {"c00", "c01", "c02", "c10", "c11", "c12"})
    after.push_back(PidOf("worker", c));
  EXPECT_EQ(after, workers);
  for (int pid : workers) EXPECT_TRUE(ProcessAlive(pid));
}

TEST_F(ClusterTest, AMasterThatDropsTheConnectionGetsTheSameHintAsOneThatIsDown) {
  // A master killed a moment ago can still complete a connect from its
  // backlog and then drop it: the client says what it says for a refusal.
  auto config = LoadClusterConfig(config_);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  std::filesystem::create_directories(config->secret_file.parent_path());
  ASSERT_TRUE(net::EnsureSecret(config->secret_file, nullptr).ok());
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(config->master.port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << errno;
  ASSERT_EQ(::listen(fd, 4), 0);
  std::thread dropper([fd] {
    int c = ::accept(fd, nullptr, nullptr);
    if (c >= 0) ::close(c);
  });
  CommandResult status = Copse({"cluster", "status"});
  ::shutdown(fd, SHUT_RDWR);  // wakes the accept if the client never came
  dropper.join();
  ::close(fd);
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.err.find("cannot reach the master of cluster 'test'"), std::string::npos)
      << status.err;
  EXPECT_NE(status.err.find("is the cluster up? try `copse cluster up --config"), std::string::npos)
      << status.err;
}

TEST_F(ClusterTest, UpSaysThePortIsTakenWhenAnotherClustersDaemonHoldsIt) {
  // Another cluster (its own secret) serves blocks on the port our master
  // is to listen on: it refuses our handshake while our master fails to
  // bind. `cluster up` must report the master's "Address already in use",
  // which is what makes a loopback cluster try again with other ports
  // (PortWasTaken), not the other daemon's refusal.
  Up();
  auto config = LoadClusterConfig(config_);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const uint16_t taken = config->computers.at(0).data_port;
  TempDir other_dir;
  std::filesystem::path other = WriteClusterConfig(other_dir.path(), LocalClusterSpec{});
  std::string text;
  {
    std::ifstream in(other);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string key = "[master]\nhost = \"127.0.0.1\"\nport = ";
  size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << text;
  at += key.size();
  text.replace(at, text.find('\n', at) - at, std::to_string(taken));
  std::ofstream(other) << text;
  CommandResult up = RunCopse("copse", {"--config", other.string(), "cluster", "up"});
  CommandResult down = RunCopse("copse", {"--config", other.string(), "cluster", "down"});
  EXPECT_EQ(down.exit_code, 0) << down.err;
  EXPECT_EQ(up.exit_code, 1);
  EXPECT_TRUE(client::PortWasTaken(up.out + up.err)) << up.out << up.err;
  EXPECT_NE(up.err.find("master (pid"), std::string::npos) << up.err;
  EXPECT_EQ(Status()["live"], 6) << "the first cluster is untouched";
}

TEST_F(ClusterTest, UpAgainstOurOwnMasterThatRefusesUsSaysSoWithoutWaitingOut) {
  // The master `cluster up` started holds its port and refuses us (the
  // secret file changed since it read it): that refusal is final at once,
  // not after the whole --timeout.
  Up();
  auto config = LoadClusterConfig(config_);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  std::ofstream(config->secret_file, std::ios::trunc) << "0123456789abcdef0123456789abcdef\n";
  const auto start = std::chrono::steady_clock::now();
  CommandResult up = Copse({"cluster", "up", "--timeout", "60"});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(up.exit_code, 1);
  EXPECT_NE(up.err.find("the master did not answer"), std::string::npos) << up.err;
  EXPECT_NE(up.err.find("does not hold this cluster's shared secret"), std::string::npos) << up.err;
  EXPECT_LT(took, seconds(30)) << "it waited for the deadline";
}

TEST_F(ClusterTest, DownLeavesNoProcessBehind) {
  Up();
  std::vector<int> pids;
  json file = PidFile();
  for (const json& p : file["processes"]) pids.push_back(p["pid"]);
  ASSERT_EQ(pids.size(), 7u);
  CommandResult down = Copse({"cluster", "down"});
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.out.find("stopped 7 process(es)"), std::string::npos) << down.out;
  EXPECT_EQ(down.out.find("SIGKILL"), std::string::npos) << "daemons should stop on SIGTERM";
  ReapChildren();
  for (int pid : pids) EXPECT_FALSE(ProcessAlive(pid)) << pid;
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "data" / "c00" / "worker.log"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "data" / "cluster.pids.json"));
  CommandResult status = Copse({"cluster", "status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.err.find("is the cluster up?"), std::string::npos) << status.err;
  EXPECT_EQ(status.err.find("--netns"), std::string::npos) << status.err;
}

// `cluster logs` shows a daemon's last lines, also once the cluster is down.
TEST_F(ClusterTest, LogsShowTheLastLinesOfADaemonsLog) {
  Up();
  CommandResult master = Copse({"cluster", "logs", "master", "-n", "3"});
  ASSERT_EQ(master.exit_code, 0) << master.err;
  EXPECT_FALSE(master.out.empty());
  EXPECT_LE(std::count(master.out.begin(), master.out.end(), '\n'), 3) << master.out;
  ASSERT_EQ(Copse({"cluster", "down"}).exit_code, 0);
  // A log longer than one read from its end: the last three lines exactly.
  const std::filesystem::path log = dir_.path() / "data" / "c01" / "worker.log";
  {
    std::ofstream out(log, std::ios::app);
    for (int i = 0; i < 200'000; ++i) out << "line " << i << "\n";
  }
  CommandResult tail = Copse({"cluster", "logs", "c01", "--lines", "3"});
  ASSERT_EQ(tail.exit_code, 0) << tail.err;
  EXPECT_EQ(tail.out, "line 199997\nline 199998\nline 199999\n");
  // The same lines a reader from the start finds.
  std::vector<std::string> all;
  std::ifstream in(dir_.path() / "data" / "c00" / "worker.log");
  for (std::string line; std::getline(in, line);) all.push_back(line);
  ASSERT_GE(all.size(), 2u);
  CommandResult c00 = Copse({"cluster", "logs", "c00", "-n", "2"});
  ASSERT_EQ(c00.exit_code, 0) << c00.err;
  EXPECT_EQ(c00.out, all[all.size() - 2] + "\n" + all.back() + "\n");
  // Whom it does not know, and no lines at all, are usage errors.
  CommandResult nobody = Copse({"cluster", "logs", "c99"});
  EXPECT_EQ(nobody.exit_code, 2);
  EXPECT_NE(nobody.err.find("no computer 'c99'"), std::string::npos) << nobody.err;
  EXPECT_EQ(Copse({"cluster", "logs", "c00", "-n", "0"}).exit_code, 2);
}

TEST_F(ClusterTest, SecondWorkerForALiveComputerIsRefused) {
  Up();
  CommandResult dup = RunCopse(
      "copse-worker", {"--config", config_.string(), "--computer", "c00", "--log-level", "warn"},
      seconds(30));
  // Its control port is taken, or the master refuses it: either way it exits
  // with an error naming the problem, and the real c00 stays live.
  EXPECT_NE(dup.exit_code, 0);
  EXPECT_TRUE(dup.err.find("in use") != std::string::npos ||
              dup.err.find("already served by a live worker") != std::string::npos)
      << dup.err;
  EXPECT_EQ(StateOf(Status(), "c00"), "live");
}

TEST_F(ClusterTest, MasterRefusesComputersItsConfigDoesNotName) {
  Up();
  // A second config naming one more computer, sharing the master and secret.
  std::string text;
  {
    std::ifstream in(config_);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::vector<uint16_t> ports = FreePorts(2);
  text +=
      "\n[[racks]]\nname = \"r9\"\n  [[racks.computers]]\n  name = \"stranger\"\n"
      "  control_port = " +
      std::to_string(ports[0]) + "\n  data_port = " + std::to_string(ports[1]) + "\n";
  std::filesystem::path other = dir_.path() / "other.toml";
  std::ofstream(other) << text;
  CommandResult r =
      RunCopse("copse-worker", {"--config", other.string(), "--computer", "stranger"}, seconds(30));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("computer 'stranger' is not in this cluster's config"), std::string::npos)
      << r.err;
}

TEST_F(ClusterTest, WrongSecretIsRefusedOnEveryPort) {
  Up();
  std::filesystem::path bad_secret = dir_.path() / "other.secret";
  std::ofstream(bad_secret) << "0123456789abcdef0123456789abcdef\n";
  std::string text;
  {
    std::ifstream in(config_);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  text.replace(text.find("[cluster]\n"), 10,
               "[cluster]\nsecret_file = \"" + bad_secret.string() + "\"\n");
  // One more computer, so that its worker's ports are free.
  std::vector<uint16_t> ports = FreePorts(2);
  text +=
      "\n[[racks]]\nname = \"r9\"\n  [[racks.computers]]\n  name = \"stranger\"\n"
      "  control_port = " +
      std::to_string(ports[0]) + "\n  data_port = " + std::to_string(ports[1]) + "\n";
  std::filesystem::path other = dir_.path() / "wrong-secret.toml";
  std::ofstream(other) << text;
  CommandResult status = RunCopse("copse", {"--config", other.string(), "cluster", "status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.err.find("does not hold this cluster's shared secret"), std::string::npos)
      << status.err;
  // A worker holding the wrong secret never gets in; the master logs why.
  CommandResult worker =
      RunCopse("copse-worker", {"--config", other.string(), "--computer", "stranger"}, seconds(3));
  EXPECT_EQ(worker.exit_code, -1) << "it keeps retrying until killed";
  std::ifstream log(dir_.path() / "data" / "master" / "master.log");
  std::string master_log((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(master_log.find("wrong cluster secret"), std::string::npos);
  EXPECT_EQ(Status()["live"], 6);
}

TEST(ClusterCliTest, BadConfigIsReportedWithFileAndKey) {
  TempDir dir;
  std::filesystem::path config = WriteClusterConfig(dir.path(), LocalClusterSpec{});
  std::string text;
  {
    std::ifstream in(config);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  text.replace(text.find("slots = 1"), 9, "slots = 0");
  std::ofstream(config) << text;
  CommandResult r = RunCopse("copse", {"--config", config.string(), "cluster", "up"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(config.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("racks[0].computers[0].slots"), std::string::npos) << r.err;
  CommandResult m = RunCopse("copse-master", {"--config", config.string()});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_NE(m.err.find("racks[0].computers[0].slots"), std::string::npos) << m.err;
}

// A config with a computer on another host is not started here: `cluster
// up` says which and where (no packet is sent to that address).
// A config with a computer on another host is started over ssh from an
// install; the build tree's copse says so before it reaches for any host
// (none is contacted: the address is TEST-NET-1). tests/hosts_test.cc runs
// the whole thing on emulated hosts.
TEST(ClusterCliTest, UpOnOtherHostsNeedsAnInstallAndContactsNoHostWithoutOne) {
  TempDir dir;
  std::filesystem::path config = WriteClusterConfig(dir.path(), LocalClusterSpec{});
  std::string text;
  {
    std::ifstream in(config);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string first = "  name = \"c00\"\n";
  ASSERT_NE(text.find(first), std::string::npos) << text;
  text.replace(text.find(first), first.size(), first + "  host = \"192.0.2.7\"\n");  // TEST-NET-1
  std::ofstream(config) << text;
  CommandResult r = RunCopse("copse", {"--config", config.string(), "cluster", "up"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("not from an install"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cmake --install"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("preflight"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "data" / "cluster.pids.json"));
}

// `cluster units` writes unit files systemd accepts: checked with
// `systemd-analyze verify`, with the build's own bin/ as the install (verify
// checks that ExecStart's program exists and is executable).
TEST(ClusterCliTest, UnitsAreWrittenForTheInstallAndSystemdAcceptsThem) {
  const std::filesystem::path install = BinDir().parent_path();
  const std::string path = install.string();
  if (path.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-_.") !=
      std::string::npos) {
    GTEST_SKIP() << "the build directory " << path << " is no valid deploy.install_dir";
  }
  TempDir dir;
  LocalClusterSpec spec;
  spec.extra_tables = "[deploy]\ninstall_dir = \"" + path + "\"\n";
  std::filesystem::path config = WriteClusterConfig(dir.path(), spec);
  CommandResult r = RunCopse("copse", {"--config", config.string(), "cluster", "units", "--out",
                                       (dir.path() / "units").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::filesystem::path master = dir.path() / "units" / "copse-test-master.service";
  const std::filesystem::path worker = dir.path() / "units" / "copse-test-worker@.service";
  EXPECT_NE(r.out.find(master.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("systemctl enable --now copse-test-worker@COMPUTER.service"),
            std::string::npos)
      << r.out;
  ASSERT_TRUE(std::filesystem::exists(master));
  ASSERT_TRUE(std::filesystem::exists(worker));
  // Where no directory can be made, it says so.
  CommandResult bad =
      RunCopse("copse", {"--config", config.string(), "cluster", "units", "--out",
                         (dir.path() / "units" / "copse-test-master.service" / "x").string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("copse cluster units: "), std::string::npos) << bad.err;

  if (!std::filesystem::exists("/usr/bin/systemd-analyze")) {
    GTEST_SKIP() << "systemd-analyze is not installed: the units were not verified";
  }
  // verify takes an instance of the template.
  const std::filesystem::path instance = dir.path() / "units" / "copse-test-worker@c00.service";
  std::filesystem::copy_file(worker, instance);
  SpawnOptions o;
  o.program = "/usr/bin/systemd-analyze";
  o.args = {"verify", "--man=no", master.string(), instance.string()};
  auto v = RunProcess(std::move(o), std::chrono::seconds(60));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(v->status.known && v->status.code == 0) << v->out << v->err;
  // Any remark is a defect in the unit, even those verify does not fail on.
  EXPECT_EQ(v->out + v->err, "");
}

// A port found free can be taken by another process before the daemon binds
// it (tests run side by side): the cluster is written and brought up again
// on fresh ports, and after client::kClusterUpTries such failures the error
// says what happened. The taken port here is the HTTP API's, held by the test.
TEST(ClusterCliTest, ClusterUpTriesAgainOnFreshPortsWhenAPortWasTaken) {
  int held = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(held, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(held, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(held, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(held, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  auto start = [&](int taken_tries, int* writes) {
    TempDir dir;
    client::LoopbackSpec spec;
    spec.racks = {2};
    spec.max_running_jobs = 1;
    spec.log_level = "info";
    auto write = [&]() -> Result<std::filesystem::path> {
      client::LoopbackSpec s = spec;
      if (++*writes <= taken_tries)
        s.extra_tables = "[http]\nport = " + std::to_string(port) + "\n";
      return client::WriteLoopbackConfig(dir.path(), s);
    };
    auto c = client::LoopbackCluster::StartWithFreshPorts(write, BinDir(), false, seconds(30));
    ReapChildren();
    return c.ok() ? Status::Ok() : c.status();
  };
  int writes = 0;
  Status once = start(1, &writes);
  EXPECT_TRUE(once.ok()) << once.ToString();
  EXPECT_EQ(writes, 2);
  writes = 0;
  Status always = start(client::kClusterUpTries, &writes);
  EXPECT_FALSE(always.ok());
  EXPECT_TRUE(client::PortWasTaken(always.message())) << always.ToString();
  EXPECT_EQ(writes, client::kClusterUpTries);
  ::close(held);
}

TEST(ClusterCliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunCopse("copse", {"cluster", "sideways"}).exit_code, 2);
  EXPECT_EQ(RunCopse("copse", {"nosuchcommand"}).exit_code, 2);
  EXPECT_EQ(RunCopse("copse", {"--help"}).exit_code, 0);
  EXPECT_EQ(RunCopse("copse", {"--config", "/nonexistent.toml", "cluster", "status"}).exit_code, 1);
  // A bench suite is a name, never a path.
  CommandResult b = RunCopse("copse", {"bench", "../../bin/sh"});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("name a suite"), std::string::npos) << b.err;
  EXPECT_EQ(RunCopse("copse", {"bench"}).exit_code, 2);
  CommandResult missing = RunCopse("copse", {"bench", "nosuchsuite"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("copse-bench-nosuchsuite"), std::string::npos) << missing.err;
  // An unknown solver name is rejected before any graph is built.
  CommandResult solver =
      RunCopse("copse", {"bench", "flow", "--scale", "t", "--incremental", "bogus"});
  EXPECT_EQ(solver.exit_code, 2);
  EXPECT_NE(solver.err.find("unknown algorithm 'bogus'"), std::string::npos) << solver.err;
  CommandResult lemon = RunCopse("copse", {"bench", "flow", "--scale", "t", "--lemon", "simplex"});
  EXPECT_EQ(lemon.exit_code, 2);
  EXPECT_NE(lemon.err.find("unknown --lemon solver 'simplex'"), std::string::npos) << lemon.err;
}

}  // namespace
}  // namespace copse::testing

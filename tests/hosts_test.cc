// Integration test of `copse cluster` on hosts of their own (docs/deploy.md):
// every computer of a 2 x 2 config, and the master, is an emulated host —
// its own network namespace and address on the netns cluster's switches
// (client/netns.h), its own sshd listening on that address, and its own
// install and data directories, bind-mounted only inside that host's mount
// namespace, so no file is shared by accident with another host or with this
// one. This process is the operator: from the core namespace it runs an
// install's `copse` with a config whose [deploy] names a key made for the
// test. Needs root, network namespaces, sshd, ssh and rsync: skipped (with
// the reason) otherwise. Everything it makes (namespaces, sshd and every
// process in the namespaces, keys, directories) is removed at the end, also
// when it fails. All traffic stays inside namespaces this test creates.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "client/netns.h"
#include "common/config.h"
#include "tests/harness/cluster_fixture.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

struct Host {
  std::string name;            // "master" or the computer's
  std::string netns;           // its namespace
  std::string address;         // where its sshd and daemons listen
  std::filesystem::path root;  // its private files: install/ and data/
};

std::string WordsText(size_t words, uint64_t seed) {
  static const char* kVocab[] = {"rack",  "copse", "quincy", "dryad", "flow", "vertex",
                                 "block", "slot",  "job",    "graph", "edge", "cost"};
  std::mt19937_64 rng(seed);
  std::string out;
  for (size_t i = 0; i < words; ++i) {
    out += kVocab[rng() % 12];
    out += i % 11 == 10 ? '\n' : ' ';
  }
  return out + "\n";
}

class HostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string missing = MissingNetnsCapability();
    for (const char* tool : {"sshd", "ssh", "ssh-keygen", "rsync", "unshare", "mount"}) {
      if (missing.empty() && !ToolExists(tool))
        missing =
            std::string("needs `") + tool + "` (Debian: openssh-server, openssh-client, rsync)";
    }
    if (!missing.empty()) GTEST_SKIP() << missing;
    const auto started = std::chrono::steady_clock::now();
    original_netns_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(original_netns_, 0);
    const std::filesystem::path t = dir_.path();

    // The install every host gets: this build tree's, installed.
    CommandResult install =
        Exec("/usr/bin/cmake", {"--install", BinDir().parent_path().string(), "--prefix",
                                (t / "prefix").string(), "--component", "runtime"});
    ASSERT_EQ(install.exit_code, 0) << install.out << install.err;

    // The emulated network: 2 racks of 2, shaped generously (the install is
    // a few hundred MB per host).
    LocalClusterSpec spec;
    spec.computers_per_rack = 2;
    std::filesystem::create_directories(t / "net");
    net_config_ = WriteClusterConfig(t / "net", spec);
    std::ofstream(net_config_, std::ios::app)
        << "\n[network]\ncomputer_link_gbps = 10\nrack_uplink_gbps = 10\n";
    auto user = LoadClusterConfig(net_config_);
    ASSERT_TRUE(user.ok()) << user.status().ToString();
    prefix_ = client::NetnsPrefix(*user);
    auto net = client::NetnsCluster::Setup(*user, false);  // this thread: the core namespace
    ASSERT_TRUE(net.ok()) << net.status().ToString();
    net_ = std::make_unique<client::NetnsCluster>(std::move(*net));

    // Keys: the hosts' (one for all) and the operator's.
    std::filesystem::create_directories(t / "ssh");
    for (const char* key : {"host_key", "operator_key"}) {
      CommandResult k = Exec("/usr/bin/ssh-keygen",
                             {"-q", "-t", "ed25519", "-N", "", "-f", (t / "ssh" / key).string()});
      ASSERT_EQ(k.exit_code, 0) << k.err;
    }
    std::filesystem::copy_file(t / "ssh" / "operator_key.pub", t / "ssh" / "authorized_keys");
    if (!std::filesystem::exists("/run/sshd")) {  // sshd's privilege separation directory
      std::filesystem::create_directories("/run/sshd");
      made_run_sshd_ = true;
    }

    hosts_.push_back(
        {"master", net_->state().core, net_->config().master.host, t / "hosts" / "master"});
    for (const ComputerConfig& c : net_->config().computers)
      hosts_.push_back(
          {c.name, net_->state().computer_netns.at(c.name), c.host, t / "hosts" / c.name});
    std::filesystem::create_directories(t / "mnt" / "install");
    std::filesystem::create_directories(t / "mnt" / "data");
    for (const Host& h : hosts_) ASSERT_NO_FATAL_FAILURE(StartSshd(h));
    for (const Host& h : hosts_) {
      EXPECT_TRUE(WaitFor([&] { return Ssh(h, {"true"}).exit_code == 0; }, seconds(20)))
          << "sshd of " << h.name << " at " << h.address << ": " << Ssh(h, {"true"}).err;
    }
    config_ = WriteHostsConfig(/*ssh_port=*/22);
    std::cerr << "[hosts] set-up: "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()
              << " s\n";
  }

  void TearDown() override {
    if (!net_) return;
    if (upped_) Ops({"cluster", "down"}, seconds(120));
    if (original_netns_ >= 0) {
      ::setns(original_netns_, CLONE_NEWNET);
      ::close(original_netns_);
    }
    // Every process in the hosts' namespaces was started by this test:
    // sshd, its sessions, the daemons.
    for (const std::string& ns : net_->state().namespaces) {
      std::istringstream pids(Shell("ip netns pids " + ns).second);
      for (int pid; pids >> pid;)
        if (pid != ::getpid()) ::kill(pid, SIGKILL);
    }
    for (int pid : sshd_pids_) ::kill(pid, SIGKILL);
    ReapChildren();
    auto user = LoadClusterConfig(net_config_);
    if (user.ok()) {
      std::vector<std::string> notes;
      (void)client::TeardownNetns(*user, &notes);
    }
    for (const std::string& ns : NamespacesWithPrefix(prefix_)) Shell("ip netns del " + ns);
    if (made_run_sshd_) std::filesystem::remove_all("/run/sshd");
  }

  // sshd in the host's network namespace and in a mount namespace of its
  // own, where the shared mount points show the host's private directories.
  void StartSshd(const Host& h) {
    const std::filesystem::path t = dir_.path();
    std::filesystem::create_directories(h.root / "install");
    std::filesystem::create_directories(h.root / "data");
    const std::filesystem::path conf = t / "ssh" / ("sshd_" + h.name + ".conf");
    std::ofstream(conf) << "ListenAddress " << h.address << "\nPort 22\n"
                        << "HostKey " << (t / "ssh" / "host_key").string() << "\n"
                        << "AuthorizedKeysFile " << (t / "ssh" / "authorized_keys").string()
                        << "\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                        << "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                        << "PidFile none\n";
    // The host's login shell starts without this machine's ~/.bashrc (a
    // developer's may take half a second, paid by every ssh session): the
    // test times the deploy, not the operator's shell set-up.
    const std::filesystem::path empty = t / "ssh" / "empty_bashrc";
    std::ofstream{empty};
    const passwd* root = ::getpwnam("root");
    const std::string bashrc = root != nullptr ? std::string(root->pw_dir) + "/.bashrc" : "";
    const std::string script =
        "mount --bind \"$1\" \"$2\" && mount --bind \"$3\" \"$4\" && "
        "{ [ ! -f \"$6\" ] || mount --bind \"$7\" \"$6\"; } && exec /usr/sbin/sshd -D -e -f \"$5\"";
    auto pid = net_->Spawn(h.name == "master" ? "" : h.name, "/usr/bin/unshare",
                           {"--mount", "--propagation", "private", "/bin/sh", "-c", script,
                            "sshd-host", (h.root / "install").string(),
                            (t / "mnt" / "install").string(), (h.root / "data").string(),
                            (t / "mnt" / "data").string(), conf.string(), bashrc, empty.string()},
                           t / "ssh" / ("sshd_" + h.name + ".log"));
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    sshd_pids_.push_back(*pid);
  }

  std::vector<std::string> SshArgs() const {
    return {"-i", (dir_.path() / "ssh" / "operator_key").string(),
            "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR"};
  }

  // Runs `argv` on a host as the test (not through copse).
  CommandResult Ssh(const Host& h, const std::vector<std::string>& argv) {
    std::vector<std::string> args = SshArgs();
    args.insert(args.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "root@" + h.address});
    args.insert(args.end(), argv.begin(), argv.end());
    return Exec("/usr/bin/ssh", args, seconds(30));
  }

  std::filesystem::path WriteHostsConfig(int ssh_port) {
    const std::filesystem::path t = dir_.path();
    std::filesystem::create_directories(t / "ops");
    const std::filesystem::path path =
        t / "ops" / ("cluster-" + std::to_string(ssh_port) + ".toml");
    std::ofstream out(path);
    out << "[cluster]\nname = \"hosts\"\ndata_root = \"" << (t / "mnt" / "data").string()
        << "\"\nsecret_file = \"secret\"\nreplication = 2\nheartbeat_interval_ms = 100\n"
        << "worker_timeout_ms = 1500\nmax_running_jobs = 2\n\n[master]\nhost = \""
        << hosts_[0].address << "\"\nport = 7400\n\n[http]\nhost = \"" << hosts_[0].address
        << "\"\nport = 7480\ntoken_file = \"http-token\"\n\n[deploy]\nssh_user = \"root\"\n"
        << "ssh_port = " << ssh_port << "\ninstall_dir = \"" << (t / "mnt" / "install").string()
        << "\"\nssh_options = [";
    for (const std::string& a : SshArgs()) out << "\"" << a << "\", ";
    out << "]\n";
    for (int r = 0; r < 2; ++r) {
      out << "\n[[racks]]\nname = \"r" << r << "\"\nslots = 2\n";
      for (const Host& h : hosts_) {
        if (h.name == "master" || h.name[1] != static_cast<char>('0' + r)) continue;
        out << "  [[racks.computers]]\n  name = \"" << h.name << "\"\n  host = \"" << h.address
            << "\"\n  control_port = 7410\n  data_port = 7411\n";
      }
    }
    return path;
  }

  // The install's `copse`, run by the operator with the hosts' config.
  CommandResult Ops(std::vector<std::string> args, seconds deadline = seconds(180),
                    const std::filesystem::path& config = {}) {
    args.insert(args.begin(), {"--config", (config.empty() ? config_ : config).string()});
    return Exec(dir_.path() / "prefix" / "bin" / "copse", args, deadline);
  }

  json HostsStatus() {
    CommandResult st = Ops({"cluster", "status", "--hosts", "--json"});
    EXPECT_TRUE(st.exit_code == 0 || st.exit_code == 1) << st.out << st.err;
    try {
      return json::parse(st.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << ": " << st.out << st.err;
      return json::object();
    }
  }

  const Host& HostNamed(const std::string& name) const {
    for (const Host& h : hosts_)
      if (h.name == name) return h;
    throw std::runtime_error("no host " + name);
  }

  TempDir dir_;
  std::filesystem::path net_config_, config_;
  std::string prefix_;
  std::unique_ptr<client::NetnsCluster> net_;
  std::vector<Host> hosts_;
  std::vector<int> sshd_pids_;
  int original_netns_ = -1;
  bool made_run_sshd_ = false;
  bool upped_ = false;
};

TEST_F(HostsTest, UpOverSshRunsJobsSurvivesAKilledWorkerDrainsRollsAndDownLeavesNothing) {
  const std::filesystem::path t = dir_.path();
  // How long each step took, in the test's output, for when it gets slow.
  auto last = std::chrono::steady_clock::now();
  std::string output;  // what the copse commands of a step said about themselves
  auto step = [&](const char* what) {
    auto now = std::chrono::steady_clock::now();
    std::cerr << "[hosts] " << what << ": " << std::chrono::duration<double>(now - last).count()
              << " s\n"
              << output;
    output.clear();
    last = now;
  };
  // Preflight first: with no sshd on the port, every host fails, each with
  // its fix, and nothing is shipped anywhere.
  CommandResult refused = Ops({"cluster", "up"}, seconds(120), WriteHostsConfig(2222));
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_EQ(std::count(refused.out.begin(), refused.out.end(), '\n') >= 6, true) << refused.out;
  for (const Host& h : hosts_) {
    EXPECT_NE(refused.out.find("FAIL " + h.address + ": ssh:"), std::string::npos) << refused.out;
    EXPECT_TRUE(std::filesystem::is_empty(h.root / "install")) << h.name;
  }
  EXPECT_NE(refused.err.find("nothing was changed on any host"), std::string::npos);

  step("preflight failure");
  upped_ = true;
  CommandResult up = Ops({"cluster", "up", "--timeout", "90"}, seconds(600));
  ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
  output += up.out;
  EXPECT_NE(up.out.find("started master on " + hosts_[0].address), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("the install to 5 of 5 hosts"), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("4 of 4 computers live"), std::string::npos) << up.out;
  // Each host holds its own install, config and secrets; the operator's
  // view of the install directory is untouched.
  for (const Host& h : hosts_) {
    EXPECT_TRUE(std::filesystem::exists(h.root / "install" / "bin" / "copse-worker")) << h.name;
    EXPECT_TRUE(std::filesystem::exists(h.root / "install" / "etc" / "cluster.toml")) << h.name;
    struct stat st {};
    ASSERT_EQ(::stat((h.root / "install" / "etc" / "secret").c_str(), &st), 0) << h.name;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << h.name;
  }
  EXPECT_TRUE(std::filesystem::is_empty(t / "mnt" / "install"));
  EXPECT_TRUE(std::filesystem::exists(HostNamed("c00").root / "data" / "c00" / "worker.log"));
  EXPECT_FALSE(std::filesystem::exists(HostNamed("c01").root / "data" / "c00"));

  step("up");
  // Idempotent: a second `up` starts nothing and ships no binaries.
  CommandResult again = Ops({"cluster", "up"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  output += again.out;
  EXPECT_NE(again.out.find("nothing started"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("the install to 0 of 5 hosts"), std::string::npos) << again.out;

  step("up again");
  json hosts = HostsStatus();
  ASSERT_EQ(hosts["hosts"].size(), 5u) << hosts.dump(2);
  std::map<std::string, int> worker_pid;
  for (const json& h : hosts["hosts"]) {
    EXPECT_TRUE(h["reachable"].get<bool>()) << h;
    ASSERT_EQ(h["running"].size(), h["should_run"].size()) << h;
    for (const json& d : h["running"])
      if (d["role"] == "worker") worker_pid[d["computer"]] = d["pid"];
  }
  ASSERT_EQ(worker_pid.size(), 4u);

  step("status --hosts");
  // A WordCount job, with the right output.
  const std::filesystem::path corpus = t / "ops" / "corpus.txt";
  std::ofstream(corpus) << WordsText(60'000, 3);
  const std::string want = CoreutilsWordCount(corpus);
  CommandResult put = Ops({"fs", "put", corpus.string(), "/corpus", "--partitions", "4"});
  ASSERT_EQ(put.exit_code, 0) << put.out << put.err;
  CommandResult wc = Ops(
      {"run", "wordcount", "--input", "/corpus", "--output", "/wc", "--partitions", "2", "--wait"});
  ASSERT_EQ(wc.exit_code, 0) << wc.out << wc.err;
  EXPECT_EQ(Ops({"fs", "cat", "/wc"}).out, want);

  step("put and WordCount");
  // One host's worker killed with kill -9 over ssh while a job runs: the
  // job is still right.
  CommandResult submitted =
      Ops({"run", "wordcount", "--input", "/corpus", "--output", "/wc2", "--partitions", "2"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  std::string job = submitted.out.substr(0, submitted.out.find('\n'));
  CommandResult killed = Ssh(HostNamed("c10"), {"kill", "-9", std::to_string(worker_pid["c10"])});
  ASSERT_EQ(killed.exit_code, 0) << killed.err;
  CommandResult waited = Ops({"job", "wait", job}, seconds(240));
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  EXPECT_EQ(Ops({"fs", "cat", "/wc2"}).out, want);

  step("WordCount with a worker killed");
  // `up` again starts only what is missing.
  CommandResult heal = Ops({"cluster", "up", "--timeout", "60"}, seconds(300));
  ASSERT_EQ(heal.exit_code, 0) << heal.out << heal.err;
  EXPECT_NE(heal.out.find("started on " + HostNamed("c10").address + ": c10"), std::string::npos)
      << heal.out;
  EXPECT_NE(heal.out.find("master already runs"), std::string::npos) << heal.out;

  step("up heals");

  // Drain: afterwards the computer holds no replica that exists nowhere
  // else, so killing its worker loses nothing.
  CommandResult drain = Ops({"cluster", "drain", "c01", "--timeout", "120"}, seconds(180));
  ASSERT_EQ(drain.exit_code, 0) << drain.out << drain.err;
  int c01 = 0;
  const json drained = HostsStatus();
  for (const json& h : drained["hosts"])
    for (const json& d : h["running"])
      if (d["computer"] == "c01") c01 = d["pid"];
  ASSERT_GT(c01, 0);
  ASSERT_EQ(Ssh(HostNamed("c01"), {"kill", "-9", std::to_string(c01)}).exit_code, 0);
  EXPECT_EQ(Ops({"fs", "cat", "/wc"}).out, want);
  CommandResult corpus_back = Ops({"fs", "cat", "/corpus"});
  EXPECT_EQ(corpus_back.exit_code, 0) << corpus_back.err;
  EXPECT_EQ(corpus_back.out.size(), std::filesystem::file_size(corpus));
  ASSERT_EQ(Ops({"cluster", "up", "--timeout", "60"}, seconds(300)).exit_code, 0);
  CommandResult undrain = Ops({"cluster", "undrain", "c01"});
  EXPECT_EQ(undrain.exit_code, 0) << undrain.out << undrain.err;
  step("drain");

  // A rolling restart onto a new build (one more file in the install) with
  // a job running: every daemon gets a new process, every host the new
  // build, and the job its right output.
  std::ofstream(t / "prefix" / "lib" / "copse" / "release-note.txt") << "a new build\n";
  CommandResult running =
      Ops({"run", "wordcount", "--input", "/corpus", "--output", "/wc3", "--partitions", "2"});
  ASSERT_EQ(running.exit_code, 0) << running.out << running.err;
  const std::string rolling_job = running.out.substr(0, running.out.find('\n'));
  std::map<std::string, int> before;
  const json was = HostsStatus();
  for (const json& h : was["hosts"])
    for (const json& d : h["running"])
      before[d["role"] == "master" ? "master" : d["computer"]] = d["pid"];
  CommandResult rolling = Ops({"cluster", "restart", "--rolling", "--install"}, seconds(600));
  ASSERT_EQ(rolling.exit_code, 0) << rolling.out << rolling.err;
  output += rolling.out;
  EXPECT_NE(rolling.out.find("the install to 5 of 5 hosts"), std::string::npos) << rolling.out;
  CommandResult rolled = Ops({"job", "wait", rolling_job}, seconds(240));
  EXPECT_EQ(rolled.exit_code, 0) << rolled.out << rolled.err;
  EXPECT_EQ(Ops({"fs", "cat", "/wc3"}).out, want);
  json now = HostsStatus();
  for (const json& h : now["hosts"]) {
    EXPECT_EQ(h["build"], now["hosts"][0]["build"]) << h;
    for (const json& d : h["running"]) {
      const std::string who = d["role"] == "master" ? "master" : d["computer"];
      EXPECT_NE(d["pid"], before[who]) << who << " was not restarted";
      EXPECT_FALSE(d["replaced"].get<bool>()) << who << " still runs the old build";
    }
  }
  EXPECT_TRUE(std::filesystem::exists(HostNamed("c11").root / "install" / "lib" / "copse" /
                                      "release-note.txt"));
  step("rolling restart");
  // A daemon's log, fetched from its host.
  CommandResult logs = Ops({"cluster", "logs", "c11", "--lines", "5"});
  ASSERT_EQ(logs.exit_code, 0) << logs.out << logs.err;
  EXPECT_FALSE(logs.out.empty());

  // Down: a row per host, and no Copse process left on any.
  CommandResult down = Ops({"cluster", "down"}, seconds(120));
  ASSERT_EQ(down.exit_code, 0) << down.out << down.err;
  output += down.out;
  upped_ = false;
  EXPECT_NE(down.out.find("stopped 5 daemon(s)"), std::string::npos) << down.out;
  step("down");
  json after = HostsStatus();
  for (const json& h : after["hosts"]) EXPECT_TRUE(h["running"].empty()) << h;
  for (const std::string& ns : net_->state().namespaces) {
    std::istringstream pids(Shell("ip netns pids " + ns).second);
    for (int pid; pids >> pid;) {
      std::error_code ec;
      std::string exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
      EXPECT_EQ(exe.find("copse-"), std::string::npos) << ns << ": pid " << pid << " runs " << exe;
    }
  }
}

}  // namespace
}  // namespace copse::testing

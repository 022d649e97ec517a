#include "tests/harness/harness.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "client/loopback_cluster.h"
#include "common/net/free_ports.h"
#include "common/process.h"
#include "common/subprocess.h"

namespace copse::testing {
namespace {

// The watchdog: a process forked before main that outlives this one. The test
// process sends it the path of every temporary directory it creates; when the
// test process ends in any way (a crash or a sanitizer abort included), the
// pipe reaches EOF and the watchdog kills every process whose command line
// names one of those directories, then removes them. So no daemon outlives
// its test, whatever happens to the test.
void WatchdogMain(int read_fd) {
  std::vector<std::string> dirs;
  std::string pending;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(read_fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n <= 0) continue;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      dirs.push_back(pending.substr(0, nl));
    }
  }
  for (int round = 0; round < 3; ++round) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::string name = entry.path().filename();
      if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
      const std::string cmdline = ReadProcFile(entry.path() / "cmdline");
      for (const std::string& d : dirs) {
        if (cmdline.find(d + "/") != std::string::npos) ::kill(std::stoi(name), SIGKILL);
      }
    }
  }
  std::error_code ec;
  for (const std::string& d : dirs) std::filesystem::remove_all(d, ec);
}

int StartWatchdog() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[1]);
    ::setsid();  // not in the test's process group: ctest's timeout kill spares it
    WatchdogMain(fds[0]);
    ::_exit(0);
  }
  ::close(fds[0]);
  return fds[1];
}

// Runs before main: orphaned daemons become our children so we can reap them,
// and the watchdog starts while this process has a single thread.
const int kWatchdogFd = [] {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  return StartWatchdog();
}();

}  // namespace

TempDir::TempDir() {
  char tmpl[] = "/tmp/copse-test-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
  std::string line = path_.string() + "\n";
  if (kWatchdogFd >= 0 && ::write(kWatchdogFd, line.data(), line.size()) < 0) {
    throw std::runtime_error("cannot reach the test watchdog");
  }
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (!ec) return;
  // A worker's program cache keeps its entries read-only: writable first.
  for (std::filesystem::recursive_directory_iterator it(path_, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2) && !it->is_symlink(e2)) {
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add, e2);
    }
  }
  std::filesystem::remove_all(path_, ec);
}

std::vector<uint16_t> FreePorts(int n) {
  auto ports = net::FreePorts(n);
  if (!ports.ok()) throw std::runtime_error(ports.status().ToString());
  return std::move(ports).value();
}

std::filesystem::path WriteClusterConfig(const std::filesystem::path& dir,
                                         const LocalClusterSpec& spec) {
  client::LoopbackSpec l;
  l.name = "test";
  l.racks.assign(static_cast<size_t>(spec.racks), spec.computers_per_rack);
  l.slots = spec.slots;
  l.max_running_jobs = spec.max_running_jobs;
  l.heartbeat_interval_ms = spec.heartbeat_interval_ms;
  l.worker_timeout_ms = spec.worker_timeout_ms;
  l.extra_cluster_keys = spec.extra_cluster_keys;
  l.extra_tables = spec.extra_tables;
  l.worker_metrics = spec.worker_metrics;
  auto path = client::WriteLoopbackConfig(dir, l);
  if (!path.ok()) throw std::runtime_error(path.status().ToString());
  return *path;
}

std::filesystem::path BinDir() {
  const char* dir = std::getenv("COPSE_BIN_DIR");
#ifdef COPSE_TEST_BIN_DIR
  if (!dir) dir = COPSE_TEST_BIN_DIR;
#endif
  if (!dir) throw std::runtime_error("COPSE_BIN_DIR is not set");
  return dir;
}

CommandResult RunCopse(const std::string& program, const std::vector<std::string>& args,
                       std::chrono::seconds deadline) {
  return Exec(BinDir() / program, args, deadline);
}

CommandResult Exec(const std::filesystem::path& program, const std::vector<std::string>& args,
                   std::chrono::seconds deadline, const std::filesystem::path& cwd) {
  SpawnOptions o;
  o.program = program;
  o.args = args;
  o.cwd = cwd;
  auto r = RunProcess(std::move(o), deadline);
  if (!r.ok()) throw std::runtime_error(r.status().ToString());
  CommandResult result;
  result.out = std::move(r->out);
  result.err = std::move(r->err);
  result.exit_code =
      !r->timed_out && r->status.known && r->status.signal == 0 ? r->status.code : -1;
  return result;
}

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds bound) {
  auto end = std::chrono::steady_clock::now() + bound;
  while (true) {
    ReapChildren();
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void ReapChildren() {
  // Children that Subprocesses own are theirs to reap; the rest are daemons
  // re-parented to this process (the subreaper).
  const std::set<int> managed = ManagedChildren();
  const std::string self = std::to_string(::getpid());
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    int pid = std::stoi(name);
    if (managed.count(pid) != 0) continue;
    const std::string stat = ReadProcFile(entry.path() / "stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z') continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid == self) ::waitpid(pid, nullptr, WNOHANG);
  }
}

bool ProcessAlive(int pid) {
  ReapChildren();
  return copse::ProcessAlive(pid);
}

CommandResult UpLocalCluster(const std::filesystem::path& dir, const LocalClusterSpec& spec,
                             std::filesystem::path* config_path) {
  CommandResult r;
  for (int attempt = 0; attempt < client::kClusterUpTries; ++attempt) {
    *config_path = WriteClusterConfig(dir, spec);
    r = RunCopse("copse", {"--config", config_path->string(), "cluster", "up"});
    if (r.exit_code == 0 || !client::PortWasTaken(r.out + r.err)) break;
    RunCopse("copse", {"--config", config_path->string(), "cluster", "down"});
  }
  return r;
}

bool ToolExists(const std::string& name) {
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
    if (::access((std::string(dir) + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::pair<int, std::string> Shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string MissingNetnsCapability() {
  if (::geteuid() != 0) return "needs root (network namespaces, bridges, tc)";
  if (!ToolExists("ip")) return "needs the iproute2 tool `ip`";
  if (!ToolExists("tc")) return "needs the iproute2 tool `tc`";
  if (Shell("unshare -n true").first != 0) return "`unshare -n` fails: no network namespaces here";
  // What `up --netns` uses, tried in a throw-away namespace: bridges, veth
  // pairs, tbf, and named namespaces under /run/netns.
  auto [rc, out] = Shell(
      "unshare -n sh -c 'ip link add b0 type bridge && ip link add v0 type veth peer name v1 && "
      "ip link set v0 master b0 && tc qdisc add dev v0 root tbf rate 1mbit burst 32k latency "
      "50ms'");
  if (rc != 0) return "no bridge, veth or tbf support here: " + out;
  std::string probe = "copse-probe-" + std::to_string(::getpid());
  auto [add_rc, add_out] = Shell("ip netns add " + probe);
  Shell("ip netns del " + probe);
  if (add_rc != 0) return "`ip netns add` fails here: " + add_out;
  return "";
}

std::vector<std::string> NamespacesWithPrefix(const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/run/netns", ec)) {
    std::string name = e.path().filename().string();
    if (!prefix.empty() && name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

}  // namespace copse::testing

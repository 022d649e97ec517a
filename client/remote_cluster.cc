#include "client/remote_cluster.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "client/cluster_view.h"
#include "client/host_probe.h"
#include "client/shipped_config.h"
#include "client/ssh.h"
#include "client/systemd_units.h"
#include "client/terminal.h"
#include "common/json.h"
#include "common/process.h"
#include "common/sha256.h"

namespace copse::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr seconds kProbeDeadline{30};
constexpr seconds kCommandDeadline{30};
constexpr std::chrono::minutes kShipDeadline{15};
constexpr seconds kStopGrace{10};
// Hosts reached at once.
constexpr size_t kParallelHosts = 32;

// Runs fn(i) for i in [0, n), up to kParallelHosts at a time.
template <typename F>
void ForEachHost(size_t n, F fn) {
  for (size_t first = 0; first < n; first += kParallelHosts) {
    std::vector<std::thread> threads;
    for (size_t i = first; i < std::min(n, first + kParallelHosts); ++i)
      threads.emplace_back([&fn, i] { fn(i); });
    for (std::thread& t : threads) t.join();
  }
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::filesystem::path RemoteConfigPath(const ClusterConfig& c) {
  return c.deploy.install_dir / "etc" / "cluster.toml";
}

// What a daemon is called in messages and start output: "master" or its computer.
std::string Tag(const std::string& role, const std::string& computer) {
  return computer.empty() ? role : computer;
}

std::filesystem::path DataDir(const ClusterConfig& remote, const std::string& role,
                              const std::string& computer) {
  return role == "master" ? remote.master.data_dir : remote.FindComputer(computer)->data_dir;
}

std::filesystem::path DaemonExe(const ClusterConfig& remote, const std::string& role) {
  return remote.deploy.install_dir / "bin" / ("copse-" + role);
}

Result<std::string> ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(fmt::format("{}: cannot read", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The config text the hosts get: the operator's, with the addresses its
// host names resolved to here (client/shipped_config.h).
Result<std::string> ShippedText(const ClusterConfig& config) {
  COPSE_ASSIGN_OR_RETURN(std::string text, ReadText(config.source));
  return ShippedConfigText(text, config);
}

// The config as the hosts read it: the shipped text at INSTALL_DIR/etc.
Result<ClusterConfig> RemoteView(const ClusterConfig& config) {
  COPSE_ASSIGN_OR_RETURN(std::string text, ShippedText(config));
  return ParseClusterConfig(text, RemoteConfigPath(config));
}

// The install this `copse` runs from: <prefix>/bin/copse.
Result<std::filesystem::path> InstallPrefix() {
  const std::filesystem::path bin = ExecutableDir();
  const std::filesystem::path prefix = bin.parent_path();
  std::error_code ec;
  if (bin.filename() != "bin" || !std::filesystem::exists(bin / "copse-master", ec) ||
      !std::filesystem::exists(bin / "copse-worker", ec) ||
      !std::filesystem::is_directory(prefix / "lib" / "copse" / "apps", ec)) {
    return FailedPrecondition(fmt::format(
        "this copse runs from {}, not from an install, and a cluster on other hosts gets the "
        "install `copse` runs from: `cmake --install build/release --prefix DIR`, then run "
        "DIR/bin/copse (docs/deploy.md)",
        bin.string()));
  }
  return prefix;
}

// The build id of an install: a digest of every file (and link) under its
// bin/ and lib/, with their paths.
Result<std::string> BuildId(const std::filesystem::path& prefix) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const char* top : {"bin", "lib"}) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(prefix / top, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      const std::filesystem::path rel = it->path().lexically_relative(prefix);
      if (it->is_symlink()) {
        entries.emplace_back(rel.string(),
                             "-> " + std::filesystem::read_symlink(it->path()).string());
      } else if (it->is_regular_file()) {
        COPSE_ASSIGN_OR_RETURN(std::string digest, Sha256OfFile(it->path()));
        entries.emplace_back(rel.string(), digest);
      }
    }
    if (ec) return IoError(fmt::format("{}: {}", (prefix / top).string(), ec.message()));
  }
  std::sort(entries.begin(), entries.end());
  Sha256 all;
  for (const auto& [path, digest] : entries) all.Update(path + "\t" + digest + "\n");
  return all.HexDigest();
}

struct Probed {
  std::optional<HostProbe> probe;
  std::string error;  // why there is no probe
  int64_t sent_ns = 0, answered_ns = 0;
};

Probed ProbeHost(const ClusterConfig& remote, const HostPlan& h) {
  std::vector<std::string> argv = {"sh",
                                   "-c",
                                   ProbeScript(),
                                   "copse-probe",
                                   remote.deploy.install_dir.string(),
                                   remote.secret_file.string()};
  for (const auto& d : h.dirs)
    if (d != remote.deploy.install_dir) argv.push_back(d.string());
  Probed p;
  p.sent_ns = NowNs();
  auto r = RunRemote(remote.deploy, h.name, argv, kProbeDeadline);
  p.answered_ns = NowNs();
  if (!r.ok()) {
    p.error = r.status().ToString();
  } else if (r->exit_code != 0) {
    p.error = SshError(*r);
  } else if (auto parsed = ParseProbe(r->out); !parsed.ok()) {
    p.error = "the host's answer is not the probe's output: " + parsed.status().message();
  } else {
    p.probe = std::move(*parsed);
  }
  return p;
}

std::vector<Probed> ProbeAll(const ClusterConfig& remote, const std::vector<HostPlan>& hosts) {
  std::vector<Probed> out(hosts.size());
  ForEachHost(hosts.size(), [&](size_t i) { out[i] = ProbeHost(remote, hosts[i]); });
  return out;
}

std::vector<std::string> HostNames(const std::vector<HostPlan>& hosts) {
  std::vector<std::string> names;
  for (const HostPlan& h : hosts) names.push_back(h.name);
  return names;
}

std::string Daemons(const HostPlan& h) {
  std::vector<std::string> names;
  if (h.master) names.push_back("master");
  names.insert(names.end(), h.computers.begin(), h.computers.end());
  return fmt::format("{}", fmt::join(names, ","));
}

// Prints the preflight table and every failure; true when none failed.
bool PrintPreflight(const std::vector<PreflightRow>& rows) {
  std::cout << fmt::format("{:<24} {:<4} {:<18} {:>7} {:>12}  {}\n", "HOST", "SSH", "SYSTEM",
                           "CLOCK", "SPACE", "COPSE");
  int failures = 0;
  for (const PreflightRow& r : rows) {
    std::cout << fmt::format("{:<24} {:<4} {:<18} {:>7} {:>12}  {}\n", Shown(r.host),
                             r.reachable ? "ok" : "FAIL", Shown(r.system), r.clock, r.space,
                             Shown(r.copse));
    failures += static_cast<int>(r.failures.size());
  }
  for (const PreflightRow& r : rows) {
    for (const std::string& f : r.failures)
      std::cout << "  FAIL " << Shown(r.host) << ": " << Shown(f) << "\n";
    for (const std::string& n : r.notes)
      std::cout << "  note " << Shown(r.host) << ": " << Shown(n) << "\n";
  }
  return failures == 0;
}

Status WriteText(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return IoError(fmt::format("{}: cannot write", path.string()));
  return Status::Ok();
}

Status RemoteOk(const Result<RemoteResult>& r, const std::string& what) {
  if (!r.ok()) return r.status().WithContext(what);
  if (r->exit_code != 0) return Status(StatusCode::kUnavailable, what + ": " + SshError(*r));
  return Status::Ok();
}

// Gives `h` the install (when `binaries`), then the files of `stage`: a
// tree standing for the hosts' "/" that holds, at their paths there, the
// config, the build id, the secrets and the unit files, listed (relative to
// it) in `list`. Directories on the way are created, never changed.
Status Ship(const ClusterConfig& remote, const HostPlan& h, const std::filesystem::path& prefix,
            const std::filesystem::path& stage, const std::filesystem::path& list, bool binaries) {
  const DeployConfig& d = remote.deploy;
  if (binaries) {
    COPSE_RETURN_IF_ERROR(RemoteOk(
        RsyncTo(d, h.name,
                {(prefix / "bin").string(), (prefix / "lib").string(), (prefix / "share").string()},
                d.install_dir, {"--mkpath"}, kShipDeadline),
        "rsync of the install"));
  }
  return RemoteOk(RsyncTo(d, h.name, {stage.string() + "/"}, "/",
                          {"--files-from=" + list.string(), "--no-implied-dirs"}, kShipDeadline),
                  "rsync of the config and the secret");
}

// Writes `text` at `path`, created with `mode` (rsync keeps it).
Status StageFile(const std::filesystem::path& path, const std::string& text, mode_t mode) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  bool ok = fd >= 0 && ::fchmod(fd, mode) == 0 &&
            ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  if (!ok) return IoError(fmt::format("{}: cannot write", path.string()));
  return Status::Ok();
}

}  // namespace

std::vector<std::string> DaemonStartArgv(const ClusterConfig& remote, const std::string& role,
                                         const std::string& computer) {
  if (remote.deploy.systemd) {
    // The unit files the install holds (Ship), linked into systemd's
    // search path; systemd reports the pid.
    static const std::string script = R"sh(tag=$1; unit=$2; file=$3
systemctl link "$file" >/dev/null || exit 1
systemctl daemon-reload || exit 1
systemctl start "$unit" || exit 1
echo "started $tag $(systemctl show -p MainPID --value "$unit")"
)sh";
    const std::string unit = UnitName(remote, role == "master" ? "master" : computer);
    std::string file = unit;
    if (const size_t at = file.find('@'); at != std::string::npos)
      file = file.substr(0, at + 1) + ".service";  // the worker's template
    return {"sh",
            "-c",
            script,
            "copse-start",
            Tag(role, computer),
            unit,
            (remote.deploy.install_dir / "etc" / "systemd" / file).string()};
  }
  static const std::string script = R"sh(tag=$1; d=$2; name=$3; shift 3
mkdir -p "$d" || exit 1
cd / || exit 1
setsid "$@" </dev/null >>"$d/$name.stderr" 2>&1 &
echo "started $tag $!"
)sh";
  const std::filesystem::path data = DataDir(remote, role, computer);
  std::vector<std::string> argv = {"sh",
                                   "-c",
                                   script,
                                   "copse-start",
                                   Tag(role, computer),
                                   data.string(),
                                   role,
                                   DaemonExe(remote, role).string(),
                                   "--config",
                                   RemoteConfigPath(remote).string(),
                                   "--quiet"};
  if (!computer.empty()) argv.insert(argv.end(), {"--computer", computer});
  return argv;
}

std::vector<std::string> DaemonStopArgv(const ClusterConfig& remote,
                                        const std::vector<RunningDaemon>& daemons,
                                        std::chrono::seconds grace) {
  if (remote.deploy.systemd) {
    // systemd sends SIGTERM, then SIGKILL after the unit's TimeoutStopSec,
    // and does not restart what it was told to stop.
    std::vector<std::string> argv = {"systemctl", "stop"};
    for (const RunningDaemon& d : daemons)
      argv.push_back(UnitName(remote, d.role == "master" ? "master" : d.computer));
    return argv;
  }
  // A pid is signalled only while it runs an executable of the install (a
  // zombie or a reused pid does not): checked before each signal.
  static const std::string script = R"sh(grace=$1; install=$2; shift 2
ours() {
  left=
  for p in "$@"; do
    case "$(readlink "/proc/$p/exe" 2>/dev/null)" in "$install"/bin/copse-*) left="$left $p" ;; esac
  done
}
ours "$@"
if [ -n "$left" ]; then kill -s TERM $left 2>/dev/null; fi
i=0
while :; do
  ours $left
  if [ -z "$left" ]; then exit 0; fi
  if [ "$i" -ge "$grace" ]; then break; fi
  sleep 0.1; i=$((i + 1))
done
kill -s KILL $left 2>/dev/null
echo "killed$left"
killed=$left
i=0
while [ "$i" -lt 50 ]; do
  ours $killed
  if [ -z "$left" ]; then exit 0; fi
  sleep 0.1; i=$((i + 1))
done
)sh";
  std::vector<std::string> argv = {"sh",
                                   "-c",
                                   script,
                                   "copse-stop",
                                   std::to_string(grace.count() * 10),
                                   remote.deploy.install_dir.string()};
  for (const RunningDaemon& d : daemons) argv.push_back(std::to_string(d.pid));
  return argv;
}

namespace {

// Reads "started TAG PID" lines, as the start commands print them.
std::map<std::string, int> StartedPids(const std::string& out) {
  std::map<std::string, int> pids;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("started ")) continue;
    line = line.substr(8);
    const size_t space = line.rfind(' ');
    if (space == std::string::npos || space + 1 >= line.size() || line.size() - space > 10)
      continue;
    const std::string pid = line.substr(space + 1);
    if (!std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        pid == "0")
      continue;
    pids[line.substr(0, space)] = std::stoi(pid);
  }
  return pids;
}

// Runs `first` (stop commands, or none), then starts each of `daemons`
// (role, computer) on `h`, in one ssh call. Returns each one's pid by its
// computer ("master" for the master); an error names those that did not start.
Result<std::map<std::string, int>> StartDaemons(
    const ClusterConfig& remote, const HostPlan& h,
    const std::vector<std::pair<std::string, std::string>>& daemons,
    std::vector<std::vector<std::string>> first = {}, std::string* first_out = nullptr,
    std::map<std::string, int>* got = nullptr) {
  std::vector<std::vector<std::string>> commands = std::move(first);
  for (const auto& [role, computer] : daemons)
    commands.push_back(DaemonStartArgv(remote, role, computer));
  // A systemd stop may take the unit's TimeoutStopSec (30 s) before the start.
  auto r = RunRemoteCommands(remote.deploy, h.name, commands,
                             kStopGrace + std::chrono::seconds(40) + kCommandDeadline);
  if (!r.ok()) return r.status();
  if (first_out != nullptr) *first_out = r->out;
  std::map<std::string, int> pids = StartedPids(r->out);
  if (got != nullptr) *got = pids;  // also when some did not start
  std::vector<std::string> missing;
  for (const auto& [role, computer] : daemons)
    if (!pids.count(Tag(role, computer))) missing.push_back(Tag(role, computer));
  if (!missing.empty()) {
    return Status(StatusCode::kUnavailable, fmt::format("{}: could not start {}: {}", HostLabel(h),
                                                        fmt::join(missing, ", "), SshError(*r)));
  }
  return pids;
}

// The last `lines` lines of a daemon's files on its host (`files`: "log",
// "stderr"), as `tail` prints them.
Result<std::string> RemoteFileTail(const ClusterConfig& remote, const HostPlan& h,
                                   const std::string& role, const std::string& computer,
                                   const std::vector<std::string>& files, int lines) {
  std::vector<std::string> argv = {"tail", "-n", std::to_string(lines)};
  for (const std::string& f : files)
    argv.push_back((DataDir(remote, role, computer) / (role + "." + f)).string());
  auto r = RunRemote(remote.deploy, h.name, argv, kCommandDeadline);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0 && r->out.empty())
    return Status(StatusCode::kUnavailable, HostLabel(h) + ": " + SshError(*r));
  return r->out;
}

// The last lines of a daemon's output and log on its host, indented.
std::string RemoteTail(const ClusterConfig& remote, const HostPlan& h, const std::string& role,
                       const std::string& computer, int lines) {
  auto text = RemoteFileTail(remote, h, role, computer, {"stderr", "log"}, lines);
  if (!text.ok()) return "    (" + text.status().ToString() + ")\n";
  std::string out;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) out += "    " + ForStdout(line) + "\n";
  return out;
}

const HostPlan* HostOf(const std::vector<HostPlan>& hosts, const std::string& computer) {
  for (const HostPlan& h : hosts) {
    if (computer.empty()
            ? h.master
            : std::find(h.computers.begin(), h.computers.end(), computer) != h.computers.end())
      return &h;
  }
  return nullptr;
}

struct Stopped {
  std::vector<std::string> stopped;  // "worker r0-c00 (pid 12)"
  std::vector<std::string> killed;   // the same, for those SIGKILL ended
  std::string error;
};

std::string DaemonName(const RunningDaemon& d) {
  return d.role == "master" ? fmt::format("master (pid {})", d.pid)
                            : fmt::format("worker {} (pid {})", d.computer, d.pid);
}

// Stops `targets`, daemons found running on `h`: SIGTERM, then, on the
// host itself, SIGKILL for those still there after the grace.
Stopped StopOnHost(const ClusterConfig& remote, const HostPlan& h,
                   const std::vector<RunningDaemon>& targets) {
  Stopped s;
  if (targets.empty()) return s;
  auto r = RunRemote(remote.deploy, h.name, DaemonStopArgv(remote, targets, kStopGrace),
                     kStopGrace + std::chrono::seconds(40) + kCommandDeadline);
  if (Status st = RemoteOk(r, "stop"); !st.ok()) {
    s.error = st.ToString();
    return s;
  }
  std::istringstream killed(r->out.starts_with("killed") ? r->out.substr(6) : "");
  std::set<int> pids;
  for (int pid; killed >> pid;) pids.insert(pid);
  for (const RunningDaemon& d : targets) {
    s.stopped.push_back(DaemonName(d));
    if (pids.count(d.pid)) s.killed.push_back(DaemonName(d));
  }
  return s;
}

// This cluster's daemons of `role` running on `h` (and `computer`, unless
// empty), found by a probe.
Result<std::vector<RunningDaemon>> RunningOn(const ClusterConfig& remote, const HostPlan& h,
                                             const std::string& role,
                                             const std::string& computer = "") {
  Probed p = ProbeHost(remote, h);
  if (!p.probe) return Status(StatusCode::kUnavailable, HostLabel(h) + ": " + p.error);
  std::vector<RunningDaemon> out;
  for (RunningDaemon& d : OurDaemons(*p.probe, remote.deploy.install_dir))
    if (d.role == role && (computer.empty() || d.computer == computer)) out.push_back(std::move(d));
  return out;
}

// Stops this cluster's daemons of `role` on every host.
void StopRole(const ClusterConfig& remote, const std::vector<HostPlan>& hosts,
              const std::string& role, std::vector<Stopped>& out) {
  ForEachHost(hosts.size(), [&](size_t i) {
    auto targets = RunningOn(remote, hosts[i], role);
    if (!targets.ok()) {
      out[i].error = targets.status().message();
      return;
    }
    out[i] = StopOnHost(remote, hosts[i], *targets);
  });
}

// Preflight (1) and shipping (2): what `up` and `restart --rolling
// --install` share. Prints as it goes; false when it failed (said why).
struct Deployment {
  const ClusterConfig& config;
  const ClusterConfig& remote;
  const std::vector<HostPlan>& hosts;
  std::filesystem::path prefix;
  std::string build;
  std::string command;  // "cluster up", for messages
  std::vector<Probed> probes;

  // Every host at once; nothing changes anywhere unless all pass.
  bool Preflight(bool upgrade) {
    const auto start = std::chrono::steady_clock::now();
    probes = ProbeAll(remote, hosts);
    std::cout << fmt::format("preflight: {} hosts probed in {:.1f}s\n", hosts.size(),
                             Seconds(std::chrono::steady_clock::now() - start));
    std::vector<PreflightRow> rows;
    auto secret = ReadText(config.secret_file);
    const LocalFacts base{LocalOs(), LocalArch(), build, secret.ok() ? Sha256Hex(*secret) : ""};
    for (size_t i = 0; i < hosts.size(); ++i) {
      LocalFacts local = base;
      local.sent_ns = probes[i].sent_ns;
      local.answered_ns = probes[i].answered_ns;
      rows.push_back(EvaluatePreflight(remote, hosts[i],
                                       probes[i].probe ? &*probes[i].probe : nullptr,
                                       probes[i].error, local, upgrade));
    }
    if (PrintPreflight(rows)) return true;
    std::cerr << "copse " << command
              << ": preflight failed; nothing was changed on any host. Fix the failures above "
                 "and run it again (docs/deploy.md, \"Preflight failures and their fixes\")\n";
    return false;
  }

  // The install where another build (or none) is, the config and the
  // secrets everywhere. REQUIRES: Preflight() passed.
  bool Ship() {
    // The files every host gets, at their paths there, in a private
    // directory removed however this ends (it holds a copy of the secret).
    char made[] = "/tmp/copse-stage-XXXXXX";
    if (::mkdtemp(made) == nullptr) {
      ReportFailure(command, IoError("cannot make a private directory under /tmp"));
      return false;
    }
    struct Removed {
      std::filesystem::path dir;
      ~Removed() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      }
    } removed{made};
    const std::filesystem::path stage = removed.dir / "files";
    const std::filesystem::path list_file = removed.dir / "list";
    std::vector<std::filesystem::path> files;
    auto add = [&](const std::filesystem::path& there, const Result<std::string>& text,
                   mode_t mode) {
      if (!text.ok()) return text.status();
      files.push_back(there.relative_path());
      return StageFile(stage / there.relative_path(), *text, mode);
    };
    const mode_t kPublic = 0644, kPrivate = 0600;
    std::vector<Status> staged = {
        add(RemoteConfigPath(remote), ShippedText(config), kPublic),
        add(remote.deploy.install_dir / "share" / "copse" / "build-id", build + "\n", kPublic),
        add(remote.secret_file, ReadText(config.secret_file), kPrivate)};
    if (remote.http.enabled && !remote.http.token_file.empty())
      staged.push_back(add(remote.http.token_file, ReadText(config.http.token_file), kPrivate));
    if (remote.deploy.systemd) {
      for (const UnitFile& u : SystemdUnits(remote))
        staged.push_back(
            add(remote.deploy.install_dir / "etc" / "systemd" / u.name, u.text, kPublic));
    }
    std::string list;
    for (const auto& f : files) list += f.string() + "\n";
    staged.push_back(WriteText(list_file, list));
    for (const Status& s : staged) {
      if (!s.ok()) {
        ReportFailure(command, s);
        return false;
      }
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<Status> shipped(hosts.size());
    int installs = 0;
    for (const Probed& p : probes) installs += p.probe->installed_build != build;
    ForEachHost(hosts.size(), [&](size_t i) {
      shipped[i] = copse::client::Ship(remote, hosts[i], prefix, stage, list_file,
                                       probes[i].probe->installed_build != build);
    });
    bool ok = true;
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!shipped[i].ok()) {
        std::cerr << "copse " << command << ": " << Shown(HostLabel(hosts[i])) << ": "
                  << Shown(shipped[i].ToString()) << "\n";
        ok = false;
      }
    }
    if (ok) {
      std::cout << fmt::format(
          "shipped: the install to {} of {} hosts (the others had it), the "
          "config and the secret to all, in {:.1f}s\n",
          installs, hosts.size(), Seconds(std::chrono::steady_clock::now() - start));
    }
    return ok;
  }
};

// Starts the master on its host unless it runs there, then waits until it
// answers (`config` is this machine's view, `remote` the hosts'); the
// deadline for the rest of `up`, `timeout` from when the master started. On
// failure, says why with the end of its log.
std::optional<std::chrono::steady_clock::time_point> StartMasterOn(const ClusterConfig& config,
                                                                   const ClusterConfig& remote,
                                                                   const HostPlan& host,
                                                                   bool running, seconds timeout) {
  if (!running) {
    auto pids = StartDaemons(remote, host, {{"master", ""}});
    if (!pids.ok()) {
      (void)ReportFailure("cluster up", pids.status());
      return std::nullopt;
    }
    std::cout << fmt::format("started master on {} (pid {})\n", Shown(HostLabel(host)),
                             pids->at("master"));
  } else {
    std::cout << fmt::format("master already runs on {}\n", Shown(HostLabel(host)));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Result<ClusterStatus> st = PollStatus(config, deadline, milliseconds(200),
                                        [](const Result<ClusterStatus>& s) { return s.ok(); });
  if (st.ok()) return deadline;
  std::cerr << "copse cluster up: the master on " << Shown(HostLabel(host))
            << " did not answer: " << Shown(st.status().ToString()) << "; the end of its log:\n"
            << RemoteTail(remote, host, "master", "", 10);
  return std::nullopt;
}

// Starts every worker `runs` says is missing, one call per host, all hosts
// at once; prints what started where. The computers whose host could not
// start them (each host's error printed).
std::set<std::string> StartWorkersOn(
    const ClusterConfig& remote, const std::vector<HostPlan>& hosts,
    const std::function<bool(size_t, const std::string&, const std::string&)>& runs) {
  std::vector<std::vector<std::string>> started(hosts.size());
  std::vector<std::string> errors(hosts.size());
  std::vector<std::vector<std::string>> not_started(hosts.size());
  ForEachHost(hosts.size(), [&](size_t i) {
    std::vector<std::pair<std::string, std::string>> missing_here;
    for (const std::string& c : hosts[i].computers) {
      if (runs(i, "worker", c)) continue;
      missing_here.emplace_back("worker", c);
      not_started[i].push_back(c);
    }
    if (missing_here.empty()) return;
    std::map<std::string, int> got;
    auto pids = StartDaemons(remote, hosts[i], missing_here, {}, nullptr, &got);
    if (!pids.ok()) errors[i] = pids.status().ToString();
    for (const auto& [role, computer] : missing_here) {
      auto it = got.find(Tag(role, computer));
      if (it == got.end()) continue;
      started[i].push_back(fmt::format("{} (pid {})", computer, it->second));
      std::erase(not_started[i], computer);
    }
  });
  std::set<std::string> unstarted;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (!started[i].empty()) {
      std::cout << fmt::format("started on {}: {}\n", Shown(HostLabel(hosts[i])),
                               fmt::join(started[i], ", "));
    }
    if (!errors[i].empty()) {
      std::cerr << "copse cluster up: " << Shown(HostLabel(hosts[i])) << ": " << Shown(errors[i])
                << "\n";
      unstarted.insert(not_started[i].begin(), not_started[i].end());
    }
  }
  return unstarted;
}

void PrintDashboardAddress(const ClusterConfig& config, const HostPlan& master_host) {
  if (config.http.enabled && config.http.loopback()) {
    std::cout << fmt::format(
        "dashboard and API: http://{}:{}/ on the master's host; from here: ssh -L "
        "{}:{}:{} {} (docs/api.md)\n",
        config.http.host, config.http.port, config.http.port, config.http.host, config.http.port,
        SshDestination(config.deploy, master_host.name));
  } else if (config.http.enabled) {
    std::cout << "dashboard and API: http://" << config.http.host << ":" << config.http.port
              << "/ (docs/api.md)\n";
  }
}

// For each computer of `hosts` that is not live: its host and the end of its
// output and log there (none for those whose host could not start them: the
// host's error was printed).
void ReportNotRegistered(const ClusterConfig& remote, const std::vector<HostPlan>& hosts,
                         const ClusterStatus& st, const std::set<std::string>& unstarted,
                         seconds timeout) {
  for (const ComputerStatus& c : st.computers) {
    if (c.state == "live" || unstarted.count(c.name)) continue;
    const HostPlan* h = HostOf(hosts, c.name);
    if (h == nullptr) continue;  // not in this config: the master has another
    std::cerr << fmt::format(
                     "copse cluster up: computer {} on {} did not register within {}s; "
                     "the end of its output and log there:\n",
                     c.name, Shown(HostLabel(*h)), timeout.count())
              << RemoteTail(remote, *h, "worker", c.name, 10);
  }
  if (!unstarted.empty()) {
    std::cerr << fmt::format("copse cluster up: not started: {}\n", fmt::join(unstarted, ", "));
  }
}

}  // namespace

int RemoteUp(const ClusterConfig& config, const UpOptions& options) {
  auto fail = [](const Status& s) { return ReportFailure("cluster up", s); };
  if (options.netns) {
    return ReportFailure("cluster up", InvalidArgument("--netns emulates hosts on this machine; "
                                                       "this config's hosts are other machines"));
  }
  auto prefix = InstallPrefix();
  if (!prefix.ok()) return fail(prefix.status());
  auto remote = RemoteView(config);
  if (!remote.ok()) return fail(remote.status());
  if (Status s = EnsureSecrets(config); !s.ok()) return fail(s);
  auto build = BuildId(*prefix);
  if (!build.ok()) return fail(build.status());
  const std::vector<HostPlan> hosts = PlanHosts(*remote);
  SshConnections shared(remote->deploy, HostNames(hosts));
  std::cout << fmt::format("cluster {}: {} hosts over ssh; install {} (build {})\n", config.name,
                           hosts.size(), prefix->string(), build->substr(0, 12));
  Deployment deployment{config, *remote, hosts, *prefix, *build, "cluster up", {}};
  if (!deployment.Preflight(/*upgrade=*/false)) return 1;
  const std::vector<Probed>& probes = deployment.probes;
  std::vector<std::vector<RunningDaemon>> running(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i)
    running[i] = OurDaemons(*probes[i].probe, remote->deploy.install_dir);
  auto runs = [&](size_t i, const std::string& role, const std::string& computer) {
    return Runs(running[i], role, computer);
  };
  size_t missing = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    missing += hosts[i].master && !runs(i, "master", "");
    for (const std::string& c : hosts[i].computers) missing += !runs(i, "worker", c);
  }
  if (!deployment.Ship()) return 1;
  if (missing == 0) {
    std::cout << fmt::format("cluster {} already runs: every daemon is up; nothing started\n",
                             config.name);
  }

  // 3. Start the master, then every missing worker, host by host at once.
  const HostPlan* master_host = HostOf(hosts, "");
  const size_t mi = static_cast<size_t>(master_host - hosts.data());
  const auto deadline =
      StartMasterOn(config, *remote, *master_host, runs(mi, "master", ""), options.timeout);
  if (!deadline) return 1;
  const std::set<std::string> unstarted = StartWorkersOn(*remote, hosts, runs);

  // 4. Wait until every worker has registered, except those whose host
  // could not start them.
  const int want = static_cast<int>(config.computers.size());
  Result<ClusterStatus> st =
      PollStatus(config, *deadline, milliseconds(200), [&](const Result<ClusterStatus>& s) {
        if (!s.ok()) return false;
        for (const ComputerStatus& c : s->computers) {
          if (c.state != "live" && HostOf(hosts, c.name) != nullptr && !unstarted.count(c.name))
            return false;
        }
        return true;
      });
  if (!st.ok()) return fail(st.status());
  PrintStatusTable(config, *st);
  PrintDashboardAddress(config, *master_host);
  if (st->LiveCount() != want || !unstarted.empty()) {
    ReportNotRegistered(*remote, hosts, *st, unstarted, options.timeout);
    return 1;
  }
  std::cout << "stop it with: copse cluster down --config " << config.source.string() << "\n";
  return 0;
}

namespace {

// Stops the daemon on its host (when it runs) and starts it again, in one
// ssh call; says so; its new pid.
Result<int> RestartDaemon(const ClusterConfig& remote, const HostPlan& h, const std::string& role,
                          const std::string& computer) {
  COPSE_ASSIGN_OR_RETURN(std::vector<RunningDaemon> old, RunningOn(remote, h, role, computer));
  std::vector<std::vector<std::string>> stop;
  if (!old.empty()) stop.push_back(DaemonStopArgv(remote, old, kStopGrace));
  std::string said;
  COPSE_ASSIGN_OR_RETURN(auto pids, StartDaemons(remote, h, {{role, computer}}, stop, &said));
  const int pid = pids.at(Tag(role, computer));
  std::cout << fmt::format("restarted {} on {}: pid {} -> {}{}\n", Tag(role, computer),
                           Shown(HostLabel(h)),
                           old.empty() ? "none" : std::to_string(old.front().pid), pid,
                           said.starts_with("killed") ? " (needed SIGKILL)" : "");
  return pid;
}

}  // namespace

int RemoteRollingRestart(const ClusterConfig& config, const RestartOptions& options) {
  const std::string command = "cluster restart";
  auto fail = [&](const Status& s) { return ReportFailure(command, s); };
  auto remote = RemoteView(config);
  if (!remote.ok()) return fail(remote.status());
  const std::vector<HostPlan> hosts = PlanHosts(*remote);
  SshConnections shared(remote->deploy, HostNames(hosts));
  auto st = FetchStatus(config);
  if (!st.ok()) {
    return fail(Status(StatusCode::kUnavailable,
                       "the master does not answer (" + st.status().message() +
                           "): a rolling restart is of a running cluster; start it with `copse "
                           "cluster up`"));
  }
  if (options.install) {
    auto prefix = InstallPrefix();
    if (!prefix.ok()) return fail(prefix.status());
    auto build = BuildId(*prefix);
    if (!build.ok()) return fail(build.status());
    std::cout << fmt::format("cluster {}: a new install on {} hosts: {} (build {})\n", config.name,
                             hosts.size(), prefix->string(), build->substr(0, 12));
    Deployment deployment{config, *remote, hosts, *prefix, *build, command, {}};
    if (!deployment.Preflight(/*upgrade=*/true) || !deployment.Ship()) return 1;
  }
  const int want = static_cast<int>(config.computers.size());
  // Polls the master until `done` holds for its status, or the timeout.
  auto wait = [&](const std::function<bool(const ClusterStatus&)>& done) {
    bool held = false;
    st = PollStatus(config, std::chrono::steady_clock::now() + options.timeout, milliseconds(200),
                    [&](const Result<ClusterStatus>& s) { return held = s.ok() && done(*s); });
    return held;
  };
  auto restart = [&](const HostPlan& h, const std::string& role, const std::string& computer) {
    return RestartDaemon(*remote, h, role, computer);
  };
  auto not_back = [&](const HostPlan& h, const std::string& role, const std::string& computer,
                      const std::string& what) {
    std::cerr << fmt::format(
                     "copse {}: {} on {} {} within {}s; the end of its output and log "
                     "there:\n",
                     command, Tag(role, computer), Shown(HostLabel(h)), what,
                     options.timeout.count())
              << RemoteTail(*remote, h, role, computer, 10);
    return 1;
  };

  if (st->LiveCount() != want) {
    return fail(Status(StatusCode::kFailedPrecondition,
                       fmt::format("{} of {} computers are live: start the others (`copse cluster "
                                   "up`) before a rolling restart",
                                   st->LiveCount(), want)));
  }
  // The master: jobs keep running while it is away; every worker registers
  // again once it is back.
  const HostPlan* master_host = HostOf(hosts, "");
  auto master_pid = restart(*master_host, "master", "");
  if (!master_pid.ok()) return fail(master_pid.status());
  if (!wait([&](const ClusterStatus& s) { return s.LiveCount() == want; }))
    return not_back(*master_host, "master", "", "did not see every worker register again");

  // One worker at a time, once no block is short of its factor.
  for (const ComputerConfig& c : config.computers) {
    if (!wait([](const ClusterStatus& s) { return s.under_replicated_blocks == 0; })) {
      return fail(Status(StatusCode::kDeadlineExceeded,
                         fmt::format("{} DFS block(s) stayed under-replicated for {}s before "
                                     "computer {} could be restarted; `copse cluster status` "
                                     "shows the cluster",
                                     st.ok() ? st->under_replicated_blocks : -1,
                                     options.timeout.count(), c.name)));
    }
    const HostPlan& h = *HostOf(hosts, c.name);
    auto pid = restart(h, "worker", c.name);
    if (!pid.ok()) return fail(pid.status());
    const uint32_t want_pid = static_cast<uint32_t>(*pid);
    if (!wait([&](const ClusterStatus& s) {
          for (const ComputerStatus& cs : s.computers)
            if (cs.name == c.name) return cs.state == "live" && cs.pid == want_pid;
          return false;
        })) {
      return not_back(h, "worker", c.name, "did not register again");
    }
  }
  const bool healed = wait([](const ClusterStatus& s) { return s.under_replicated_blocks == 0; });
  if (st.ok()) PrintStatusTable(config, *st);
  if (!healed) {
    return fail(Status(StatusCode::kDeadlineExceeded,
                       fmt::format("every daemon restarted, but DFS blocks stayed "
                                   "under-replicated for {}s after the last",
                                   options.timeout.count())));
  }
  std::cout << fmt::format("restarted the master and {} worker(s), one at a time\n", want);
  return 0;
}

int RemoteDown(const ClusterConfig& config) {
  auto remote = RemoteView(config);
  if (!remote.ok()) return ReportFailure("cluster down", remote.status());
  const std::vector<HostPlan> hosts = PlanHosts(*remote);
  SshConnections shared(remote->deploy, HostNames(hosts));
  // Workers first, so the master does not log a wave of deaths for nothing.
  std::vector<Stopped> workers(hosts.size()), masters(hosts.size());
  StopRole(*remote, hosts, "worker", workers);
  StopRole(*remote, hosts, "master", masters);
  std::cout << fmt::format("{:<24} {}\n", "HOST", "STOPPED");
  int stopped = 0;
  bool failed = false;
  for (size_t i = 0; i < hosts.size(); ++i) {
    std::vector<std::string> all = workers[i].stopped;
    all.insert(all.end(), masters[i].stopped.begin(), masters[i].stopped.end());
    std::vector<std::string> killed = workers[i].killed;
    killed.insert(killed.end(), masters[i].killed.begin(), masters[i].killed.end());
    stopped += static_cast<int>(all.size());
    std::string what = all.empty() ? "nothing ran" : fmt::format("{}", fmt::join(all, ", "));
    if (!killed.empty()) what += fmt::format("; needed SIGKILL: {}", fmt::join(killed, ", "));
    const std::string& error = workers[i].error.empty() ? masters[i].error : workers[i].error;
    if (!error.empty()) {
      what = "UNREACHABLE: " + error;
      failed = true;
    }
    std::cout << fmt::format("{:<24} {}\n", Shown(HostLabel(hosts[i])), Shown(what));
  }
  std::cout << fmt::format(
      "stopped {} daemon(s) of cluster {}; data directories kept on the hosts\n", stopped,
      config.name);
  if (failed) {
    std::cerr << "copse cluster down: some hosts could not be reached; their daemons may still "
                 "run (run it again, or `copse cluster status --hosts`)\n";
    return 1;
  }
  return 0;
}

int RemoteHostsStatus(const ClusterConfig& config, bool json) {
  auto remote = RemoteView(config);
  if (!remote.ok()) return ReportFailure("cluster status", remote.status());
  const std::vector<HostPlan> hosts = PlanHosts(*remote);
  SshConnections shared(remote->deploy, HostNames(hosts));
  std::vector<Probed> probes = ProbeAll(*remote, hosts);
  std::string build;
  if (auto prefix = InstallPrefix(); prefix.ok()) {
    if (auto id = BuildId(*prefix); id.ok()) build = *id;
  }
  nlohmann::json doc = nlohmann::json::array();
  bool all = true;
  if (!json) {
    std::cout << fmt::format("{:<24} {:<4} {:<30} {:<34} {}\n", "HOST", "SSH", "SHOULD RUN",
                             "RUNNING", "BUILD");
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    const HostPlan& h = hosts[i];
    nlohmann::json row = {{"host", h.name}, {"address", h.address}, {"reachable", false}};
    nlohmann::json should = nlohmann::json::array();
    if (h.master) should.push_back("master");
    for (const std::string& c : h.computers) should.push_back(c);
    row["should_run"] = should;
    std::vector<std::string> cells;
    std::string build_cell = "-";
    if (probes[i].probe) {
      row["reachable"] = true;
      nlohmann::json run = nlohmann::json::array();
      std::vector<RunningDaemon> ours = OurDaemons(*probes[i].probe, remote->deploy.install_dir);
      for (const RunningDaemon& d : ours) {
        run.push_back(
            {{"role", d.role}, {"computer", d.computer}, {"pid", d.pid}, {"replaced", d.replaced}});
        cells.push_back(fmt::format("{} {}", d.role == "master" ? "master" : d.computer, d.pid));
      }
      all = all && (!h.master || Runs(ours, "master", ""));
      for (const std::string& c : h.computers) all = all && Runs(ours, "worker", c);
      row["running"] = run;
      const std::string& b = probes[i].probe->installed_build;
      row["build"] = b;
      build_cell = b.empty() ? "none" : b == build ? "this build" : b.substr(0, 12);
    } else {
      row["error"] = probes[i].error;
      all = false;
    }
    doc.push_back(row);
    if (!json) {
      std::cout << fmt::format(
          "{:<24} {:<4} {:<30} {:<34} {}\n", Shown(HostLabel(h)), probes[i].probe ? "ok" : "FAIL",
          Shown(Daemons(h)),
          probes[i].probe ? (cells.empty() ? "nothing" : fmt::format("{}", fmt::join(cells, ",")))
                          : Shown(probes[i].error),
          build_cell);
    }
  }
  if (json)
    std::cout << DumpJson(nlohmann::json{{"cluster", config.name}, {"hosts", doc}}, 2) << "\n";
  return all ? 0 : 1;
}

int RemoteLogs(const ClusterConfig& config, const std::string& who, int lines) {
  auto remote = RemoteView(config);
  if (!remote.ok()) return ReportFailure("cluster logs", remote.status());
  const std::vector<HostPlan> hosts = PlanHosts(*remote);
  const HostPlan* h = HostOf(hosts, who == "master" ? "" : who);
  if (h == nullptr) {
    return ReportFailure("cluster logs",
                         InvalidArgument(fmt::format("no computer '{}' in the config", who)));
  }
  const std::string role = who == "master" ? "master" : "worker";
  auto text = RemoteFileTail(*remote, *h, role, who == "master" ? "" : who, {"log"}, lines);
  if (!text.ok()) return ReportFailure("cluster logs", text.status());
  std::cout << ForStdout(*text);
  return 0;
}

}  // namespace copse::client

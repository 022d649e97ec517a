#include "client/host_probe.h"

#include <fmt/format.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace copse::client {
namespace {

// Field separators in a `proc` line: between the executable and the
// arguments, and between arguments (neither can be in a path we start).
constexpr char kExeEnd = '\036';
constexpr char kArgSep = '\037';
constexpr std::string_view kReplaced = " (deleted)";

bool AllOf(std::string_view s, bool (*ok)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), ok);
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsWordChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-' ||
         c == '.' || c == ' ';
}

std::string Bytes(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(b) / (1ull << 30));
  return fmt::format("{:.0f} MiB", static_cast<double>(b) / (1ull << 20));
}

}  // namespace

const std::string& ProbeScript() {
  static const std::string script = R"sh(set -u
install=$1; secret=$2; shift 2
os=unknown
if [ -r /etc/os-release ]; then os=$(. /etc/os-release; printf '%s %s' "${ID:-unknown}" "${VERSION_ID:-unknown}"); fi
printf 'os %s\n' "$os"
printf 'arch %s\n' "$(uname -m)"
printf 'clock %s\n' "$(date +%s%N)"
if [ -r "$install/share/copse/build-id" ]; then printf 'build %s\n' "$(head -c 128 "$install/share/copse/build-id" | tr -cd '0-9a-f')"; fi
if [ -r "$secret" ]; then printf 'secret %s\n' "$(sha256sum < "$secret" | cut -c1-64)"; fi
if command -v rsync >/dev/null 2>&1; then echo 'rsync yes'; else echo 'rsync no'; fi
for d in "$install" "$@"; do
  p=$d
  while [ ! -e "$p" ]; do p=$(dirname "$p"); done
  w=0
  if [ -d "$p" ] && t=$(mktemp "$p/.copse-probe.XXXXXX" 2>/dev/null); then rm -f "$t"; w=1; fi
  free=$(df -Pk "$p" 2>/dev/null | awk 'NR == 2 { print $4 }')
  printf 'dir %s %s %s\n' "$w" "${free:-0}" "$d"
done
for f in /proc/net/tcp /proc/net/tcp6; do
  if [ -r "$f" ]; then awk 'NR > 1 && $4 == "0A" { n = split($2, a, ":"); print "listen", a[n] }' "$f"; fi
done
self=$(readlink /proc/$$/ns/net)
find /proc -mindepth 2 -maxdepth 2 -name exe \( -lname '*/copse-master' -o -lname '*/copse-worker' \
    -o -lname '*/copse-master (deleted)' -o -lname '*/copse-worker (deleted)' \) \
    -printf '%h\t%l\n' 2>/dev/null |
while IFS="$(printf '\t')" read -r dir e; do
  [ "$(readlink "$dir/ns/net" 2>/dev/null)" = "$self" ] || continue
  printf 'proc %s %s\036' "${dir#/proc/}" "$e"
  tr '\000\n' '\037 ' < "$dir/cmdline" 2>/dev/null
  printf '\n'
done
echo 'procs listed'
)sh";
  return script;
}

Result<HostProbe> ParseProbe(std::string_view out) {
  HostProbe p;
  bool saw_clock = false;
  bool saw_procs = false;
  int number = 0;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string_view::npos) end = out.size();
    std::string_view line = out.substr(start, end - start);
    start = end + 1;
    ++number;
    size_t space = line.find(' ');
    std::string_view key = line.substr(0, space);
    std::string_view rest = space == std::string_view::npos ? "" : line.substr(space + 1);
    auto bad = [&](std::string_view what) {
      return InvalidArgument(fmt::format("probe output line {}: {} (\"{}\")", number, what,
                                         std::string(line.substr(0, 80))));
    };
    if (key == "os") {
      if (!AllOf(rest, IsWordChar) || rest.size() > 64) return bad("not an OS name");
      p.os = std::string(rest);
    } else if (key == "arch") {
      if (!AllOf(rest, IsWordChar) || rest.size() > 32) return bad("not an architecture");
      p.arch = std::string(rest);
    } else if (key == "clock") {
      if (!AllOf(rest, IsDigit) || rest.size() > 19) return bad("not a time in nanoseconds");
      p.clock_ns = std::strtoll(std::string(rest).c_str(), nullptr, 10);
      saw_clock = true;
    } else if (key == "build") {
      if (!rest.empty() && !AllOf(rest, IsHex)) return bad("not a build id");
      p.installed_build = std::string(rest);
    } else if (key == "secret") {
      if (rest.size() != 64 || !AllOf(rest, IsHex)) return bad("not a SHA-256 digest");
      p.secret_digest = std::string(rest);
    } else if (key == "procs") {
      saw_procs = rest == "listed";
    } else if (key == "rsync") {
      p.has_rsync = rest == "yes";
    } else if (key == "dir") {
      size_t a = rest.find(' ');
      size_t b = a == std::string_view::npos ? a : rest.find(' ', a + 1);
      if (b == std::string_view::npos) return bad("not 'dir WRITABLE FREE_KB PATH'");
      std::string_view w = rest.substr(0, a), kb = rest.substr(a + 1, b - a - 1);
      if ((w != "0" && w != "1") || !AllOf(kb, IsDigit) || kb.size() > 15)
        return bad("not 'dir WRITABLE FREE_KB PATH'");
      ProbedDir d;
      d.writable = w == "1";
      d.free_bytes = std::strtoull(std::string(kb).c_str(), nullptr, 10) * 1024;
      d.path = std::string(rest.substr(b + 1));
      p.dirs.push_back(std::move(d));
    } else if (key == "listen") {
      if (!AllOf(rest, IsHex) || rest.size() > 4) return bad("not a port in hex");
      p.listening.insert(
          static_cast<uint16_t>(std::strtoul(std::string(rest).c_str(), nullptr, 16)));
    } else if (key == "proc") {
      size_t sp = rest.find(' ');
      size_t exe_end = rest.find(kExeEnd);
      if (sp == std::string_view::npos || exe_end == std::string_view::npos || exe_end < sp ||
          !AllOf(rest.substr(0, sp), IsDigit) || sp > 9)
        return bad("not 'proc PID EXE ARGS'");
      ProbedProcess proc;
      proc.pid = std::atoi(std::string(rest.substr(0, sp)).c_str());
      if (proc.pid <= 1) return bad("not 'proc PID EXE ARGS'");
      proc.exe = std::string(rest.substr(sp + 1, exe_end - sp - 1));
      if (proc.exe.size() > kReplaced.size() && proc.exe.ends_with(kReplaced)) {
        proc.exe.resize(proc.exe.size() - kReplaced.size());
        proc.exe_replaced = true;
      }
      std::string_view args = rest.substr(exe_end + 1);
      size_t s = 0;
      while (s < args.size()) {
        size_t e = args.find(kArgSep, s);
        if (e == std::string_view::npos) e = args.size();
        proc.args.emplace_back(args.substr(s, e - s));
        s = e + 1;
      }
      p.processes.push_back(std::move(proc));
    }
  }
  if (!saw_clock) return InvalidArgument("probe output has no clock line: not the probe's output");
  if (!saw_procs) {
    return InvalidArgument(
        "the probe could not list the host's processes (it needs GNU find, from findutils)");
  }
  return p;
}

std::string HostLabel(const HostPlan& h) {
  return h.name == h.address ? h.name : fmt::format("{} ({})", h.name, h.address);
}

std::vector<HostPlan> PlanHosts(const ClusterConfig& remote) {
  std::vector<HostPlan> hosts;
  auto host = [&](const std::string& address, const std::string& name) -> HostPlan& {
    for (HostPlan& h : hosts)
      if (h.address == address) return h;
    hosts.push_back({address, name});
    hosts.back().dirs.push_back(remote.deploy.install_dir);
    return hosts.back();
  };
  HostPlan& m = host(remote.master.host, remote.master.host_name);
  m.master = true;
  m.dirs.push_back(remote.master.data_dir);
  m.ports[remote.master.port] = "the master's port";
  if (remote.http.enabled) m.ports[remote.http.port] = "the master's HTTP port";
  for (const ComputerConfig& c : remote.computers) {
    HostPlan& h = host(c.host, c.host_name);
    h.computers.push_back(c.name);
    h.dirs.push_back(c.data_dir);
    h.ports[c.control_port] = fmt::format("computer {}'s control_port", c.name);
    h.ports[c.data_port] = fmt::format("computer {}'s data_port", c.name);
    if (c.metrics_port != 0)
      h.ports[c.metrics_port] = fmt::format("computer {}'s metrics_port", c.name);
  }
  return hosts;
}

std::vector<RunningDaemon> OurDaemons(const HostProbe& probe,
                                      const std::filesystem::path& install_dir) {
  const std::string config = (install_dir / "etc" / "cluster.toml").string();
  std::vector<RunningDaemon> out;
  for (const ProbedProcess& p : probe.processes) {
    RunningDaemon d;
    if (p.exe == (install_dir / "bin" / "copse-master").string()) {
      d.role = "master";
    } else if (p.exe == (install_dir / "bin" / "copse-worker").string()) {
      d.role = "worker";
    } else {
      continue;
    }
    bool ours = false;
    for (size_t i = 0; i + 1 < p.args.size(); ++i) {
      if (p.args[i] == "--config") ours = p.args[i + 1] == config;
      if (p.args[i] == "--computer") d.computer = p.args[i + 1];
    }
    if (!ours || (d.role == "worker" && d.computer.empty())) continue;
    d.pid = p.pid;
    d.replaced = p.exe_replaced;
    out.push_back(std::move(d));
  }
  return out;
}

bool Runs(const std::vector<RunningDaemon>& daemons, const std::string& role,
          const std::string& computer) {
  return std::any_of(daemons.begin(), daemons.end(), [&](const RunningDaemon& d) {
    return d.role == role && d.computer == computer;
  });
}

namespace {

// The host's clock read between sent and answered: outside that interval
// by at least this much.
void CheckClock(const HostProbe& probe, const LocalFacts& local, const DeployConfig& d,
                PreflightRow& row) {
  const int64_t off_ns = probe.clock_ns < local.sent_ns       ? probe.clock_ns - local.sent_ns
                         : probe.clock_ns > local.answered_ns ? probe.clock_ns - local.answered_ns
                                                              : 0;
  const double offset = static_cast<double>(off_ns) / 1e9;
  row.clock = fmt::format("{:+.2f}s", offset);
  const double bound = std::chrono::duration<double>(d.max_clock_offset).count();
  if (std::abs(offset) > bound) {
    row.failures.push_back(fmt::format(
        "clock: at least {:.2f}s {} this machine's (more than max_clock_offset_ms = {:.0f}): "
        "synchronise the clocks (chrony or systemd-timesyncd on every host)",
        std::abs(offset), offset > 0 ? "ahead of" : "behind", bound * 1000));
  }
}

void CheckDirectories(const HostProbe& probe, const DeployConfig& d, PreflightRow& row) {
  uint64_t least = UINT64_MAX;
  for (const ProbedDir& dir : probe.dirs) {
    least = std::min(least, dir.free_bytes);
    if (!dir.writable) {
      row.failures.push_back(fmt::format(
          "directory: {} cannot be created or written by {}: as root on the host, `install -d "
          "-o {} {}`",
          dir.path.string(), d.ssh_user.empty() ? "the ssh user" : d.ssh_user,
          d.ssh_user.empty() ? "USER" : d.ssh_user, dir.path.string()));
    }
  }
  row.space = least == UINT64_MAX ? "-" : Bytes(least) + " free";
}

// Every port the config gives the host's daemons is free, or held by that
// daemon of ours.
void CheckPorts(const HostProbe& probe, const HostPlan& plan,
                const std::vector<RunningDaemon>& ours, PreflightRow& row) {
  for (const auto& [port, what] : plan.ports) {
    if (!probe.listening.count(port)) continue;
    bool own = false;
    if (what.starts_with("the master")) own = Runs(ours, "master", "");
    for (const std::string& c : plan.computers)
      own = own || (what.starts_with("computer " + c + "'") && Runs(ours, "worker", c));
    if (!own) {
      row.failures.push_back(fmt::format(
          "port: {} ({}) is in use on the host: stop what listens there, or give another port in "
          "the config",
          port, what));
    }
  }
}

// The build installed there, this cluster's daemons running there (with
// which secret and build), and Copse daemons that are not this cluster's.
void CheckCopse(const ClusterConfig& remote, const HostProbe& probe, const LocalFacts& local,
                const std::vector<RunningDaemon>& ours, bool upgrade, PreflightRow& row) {
  const DeployConfig& d = remote.deploy;
  if (probe.installed_build.empty()) {
    row.copse = "none";
  } else if (probe.installed_build == local.build) {
    row.copse = "this build";
  } else {
    row.copse = "build " + probe.installed_build.substr(0, 12);
    row.notes.push_back(fmt::format("install: build {} in {} is replaced by this one ({})",
                                    probe.installed_build.substr(0, 12), d.install_dir.string(),
                                    local.build.substr(0, 12)));
  }
  bool stale = false;
  for (const RunningDaemon& r : ours) stale = stale || r.replaced;
  if (!ours.empty()) {
    row.copse += fmt::format(", {} running", ours.size());
    if (!probe.secret_digest.empty() && probe.secret_digest != local.secret_digest) {
      row.failures.push_back(fmt::format(
          "secret: its daemons use another cluster secret than {}: copy the cluster's secret to "
          "this machine's secret_file, or stop them (`copse cluster down` where the secret is)",
          remote.secret_file.filename().string()));
    }
    if (upgrade) {
      if (stale || probe.installed_build != local.build)
        row.notes.push_back("copse: its daemons are restarted one at a time on this build");
    } else if (stale || probe.installed_build != local.build) {
      row.failures.push_back(
          "copse: its daemons run another build: upgrade them with `copse cluster restart "
          "--rolling --install`, or stop them with `copse cluster down` first");
    }
  }
  std::vector<int> others;
  for (const ProbedProcess& p : probe.processes) {
    bool mine = false;
    for (const RunningDaemon& r : ours) mine = mine || r.pid == p.pid;
    if (!mine) others.push_back(p.pid);
  }
  if (!others.empty()) {
    row.notes.push_back(fmt::format(
        "other Copse daemons run on the host (pids {}): another cluster, or another install",
        fmt::join(others, ", ")));
  }
}

}  // namespace

PreflightRow EvaluatePreflight(const ClusterConfig& remote, const HostPlan& plan,
                               const HostProbe* probe, const std::string& ssh_error,
                               const LocalFacts& local, bool upgrade) {
  PreflightRow row;
  row.host = HostLabel(plan);
  const DeployConfig& d = remote.deploy;
  if (probe == nullptr) {
    row.failures.push_back(fmt::format(
        "ssh: {}: make `ssh -o BatchMode=yes -p {} {} true` work from this machine without a "
        "prompt (a key the host accepts, the host in ~/.ssh/known_hosts)",
        ssh_error, d.ssh_port, d.ssh_user.empty() ? plan.name : d.ssh_user + "@" + plan.name));
    return row;
  }
  row.reachable = true;
  row.system = probe->os + " " + probe->arch;
  if (probe->os != local.os || probe->arch != local.arch) {
    row.failures.push_back(fmt::format(
        "system: the host runs {} {}, the install is built for {} {}: install from a machine "
        "like the hosts",
        probe->os, probe->arch, local.os, local.arch));
  }
  CheckClock(*probe, local, d, row);
  if (!probe->has_rsync) {
    row.failures.push_back("rsync: not installed on the host: install it (apt-get install rsync)");
  }
  CheckDirectories(*probe, d, row);
  const std::vector<RunningDaemon> ours = OurDaemons(*probe, d.install_dir);
  CheckPorts(*probe, plan, ours, row);
  CheckCopse(remote, *probe, local, ours, upgrade, row);
  return row;
}

std::string LocalOs() {
  std::ifstream in("/etc/os-release");
  std::string id = "unknown", version = "unknown";
  for (std::string line; std::getline(in, line);) {
    auto value = [&](std::string_view key) -> std::optional<std::string> {
      if (!line.starts_with(key)) return std::nullopt;
      std::string v = line.substr(key.size());
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
        v = v.substr(1, v.size() - 2);
      return v;
    };
    if (auto v = value("ID=")) id = *v;
    if (auto v = value("VERSION_ID=")) version = *v;
  }
  return id + " " + version;
}

std::string LocalArch() {
  utsname u{};
  if (::uname(&u) != 0) return "unknown";
  return u.machine;
}

}  // namespace copse::client

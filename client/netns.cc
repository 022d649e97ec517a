#include "client/netns.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json.h"
#include "common/subprocess.h"

namespace copse::client {
namespace {

const std::filesystem::path kNetnsDir = "/run/netns";
constexpr int kMaxPerLevel = 254;  // racks, and computers per rack, in 10.77.R+1.C+1
constexpr const char* kSubnet = "10.77";
constexpr int kCapNetAdmin = 12;
constexpr int kCapSysAdmin = 21;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Status WriteFileAtomically(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) return IoError(fmt::format("cannot write {}", tmp.string()));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return IoError(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  return Status::Ok();
}

// `name` found in $PATH or the usual sbin directories (root's PATH may lack them).
std::optional<std::filesystem::path> FindTool(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "";
  path += ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    std::filesystem::path p = std::filesystem::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return std::nullopt;
}

// Bit `cap` of this process's effective capability set (/proc/self/status).
bool HasCapability(int cap) {
  std::istringstream in(ReadFile("/proc/self/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    uint64_t mask = std::strtoull(line.c_str() + 7, nullptr, 16);
    return (mask >> cap) & 1;
  }
  return false;
}

// Runs a tool and waits for it; its output goes into the error when it fails.
Status RunTool(std::vector<std::string> argv) {
  auto tool = FindTool(argv[0]);
  if (!tool) return FailedPrecondition(fmt::format("`{}` not found (install iproute2)", argv[0]));
  std::string command = tool->string();
  for (size_t i = 1; i < argv.size(); ++i) command += " " + argv[i];
  SpawnOptions o;
  o.program = *tool;
  o.args.assign(argv.begin() + 1, argv.end());
  o.err_to_out = true;
  auto r = RunProcess(std::move(o), std::chrono::minutes(2));
  if (!r.ok()) return IoError(fmt::format("cannot run {}: {}", command, r.status().message()));
  if (r->status.ok()) return Status::Ok();
  std::string output = r->out;
  while (!output.empty() && output.back() == '\n') output.pop_back();
  for (char& c : output)
    if (c == '\n') c = ';';
  if (r->timed_out) output = "no answer within 2 minutes; " + output;
  return IoError(fmt::format("`{}` failed ({}): {}", command, r->status.ToString(), output));
}

bool NamespaceExists(const std::string& name) {
  std::error_code ec;
  return std::filesystem::exists(kNetnsDir / name, ec);
}

// Every namespace under /run/netns whose name starts with `prefix`.
std::vector<std::string> NamespacesWithPrefix(const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kNetnsDir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

// Moves the calling thread into the named network namespace.
Status EnterNamespace(const std::string& name) {
  std::filesystem::path path = kNetnsDir / name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return FailedPrecondition(
        fmt::format("cannot open network namespace {}: {}", path.string(), std::strerror(errno)));
  }
  int rc = ::setns(fd, CLONE_NEWNET);
  int err = errno;
  ::close(fd);
  if (rc != 0) {
    return (err == EPERM ? PermissionDenied : FailedPrecondition)(fmt::format(
        "cannot enter network namespace {}: {} (the cluster runs in network namespaces; "
        "run this command as root)",
        name, std::strerror(err)));
  }
  return Status::Ok();
}

nlohmann::json StateJson(const NetnsState& s) {
  return {{"prefix", s.prefix},
          {"complete", s.complete},
          {"core", s.core},
          {"namespaces", s.namespaces},
          {"computer_netns", s.computer_netns},
          {"derived_config", s.derived_config.string()},
          {"user_config", s.user_config.string()}};
}

Status WriteState(const ClusterConfig& config, const NetnsState& s) {
  return WriteFileAtomically(NetnsStatePath(config), DumpJson(StateJson(s), 2) + "\n");
}

std::string Address(int rack_index, int index_in_rack) {
  return fmt::format("{}.{}.{}", kSubnet, rack_index + 1, index_in_rack + 1);
}

// The tbf qdisc that shapes egress of `dev` to `bps` bits per second. The
// bucket holds 5 ms at the rate, and at least 128 KiB so a full GSO packet
// (64 KiB) always fits.
std::string TbfLine(const std::string& dev, double bps) {
  auto burst = static_cast<uint64_t>(std::max(bps / 8 * 0.005, 128.0 * 1024));
  return fmt::format("qdisc add dev {} root tbf rate {}bit burst {} latency 50ms\n", dev,
                     static_cast<uint64_t>(bps), burst);
}

// The derived config: the user's file with absolute paths and, for every
// computer, an explicit entry with its emulated address; the master at the
// core bridge's address.
Result<std::string> DerivedConfigText(const ClusterConfig& user,
                                      const std::map<std::string, std::string>& addresses,
                                      const std::string& master_address) {
  toml::table root;
  try {
    root = toml::parse(ReadFile(user.source), user.source.string());
  } catch (const toml::parse_error& e) {
    return InvalidArgument(
        fmt::format("{}: not valid TOML: {}", user.source.string(), e.description()));
  }
  toml::table& cluster = *root["cluster"].as_table();
  cluster.insert_or_assign("data_root", user.data_root.string());
  cluster.insert_or_assign("secret_file", user.secret_file.string());
  if (!user.apps_dir.empty()) cluster.insert_or_assign("apps_dir", user.apps_dir.string());
  toml::table& master = *root["master"].as_table();
  master.insert_or_assign("host", master_address);
  master.insert_or_assign("data_dir", user.master.data_dir.string());
  toml::array& racks = *root["racks"].as_array();
  for (size_t r = 0; r < racks.size(); ++r) {
    toml::table& rack = *racks.get(r)->as_table();
    rack.erase("count");
    rack.erase("host");
    toml::array computers;
    for (int i : user.racks[r].computers) {
      const ComputerConfig& c = user.computers[static_cast<size_t>(i)];
      computers.push_back(toml::table{{"name", c.name},
                                      {"host", addresses.at(c.name)},
                                      {"slots", c.slots},
                                      {"control_port", static_cast<int64_t>(c.control_port)},
                                      {"data_port", static_cast<int64_t>(c.data_port)},
                                      {"data_dir", c.data_dir.string()}});
    }
    rack.insert_or_assign("computers", std::move(computers));
  }
  std::ostringstream out;
  out << "# Derived by `copse cluster up --netns` from " << user.source.string()
      << " (docs/netns.md):\n# the same cluster with the emulated network's addresses. "
         "Removed by `copse cluster down`.\n\n"
      << root << "\n";
  return out.str();
}

// Whether the recorded network `old` can serve the processes of the cluster
// that still run: it must be complete, with every namespace still there.
Status CheckReusable(const ClusterConfig& user, const NetnsState& old) {
  if (!old.complete) {
    return FailedPrecondition(fmt::format(
        "an earlier `cluster up --netns` of cluster {} stopped half-way while some of its "
        "processes still run; run `copse cluster down` first",
        user.name));
  }
  for (const std::string& ns : old.namespaces) {
    if (!NamespaceExists(ns)) {
      return FailedPrecondition(
          fmt::format("network namespace {} of cluster {} is gone while the cluster runs; run "
                      "`copse cluster down`, then `copse cluster up --netns` again",
                      ns, user.name));
    }
  }
  return Status::Ok();
}

// Refuses to build while namespaces with this cluster's prefix exist that no
// state file records: they are not ours to delete, the error says how.
Status CheckNoStaleNamespaces(const ClusterConfig& user) {
  const std::string prefix = NetnsPrefix(user);
  std::vector<std::string> stale = NamespacesWithPrefix(prefix + "-");
  if (stale.empty()) return Status::Ok();
  std::string cmds;
  for (const std::string& n : stale)
    cmds += fmt::format("{}`ip netns del {}`", cmds.empty() ? "" : ", ", n);
  return FailedPrecondition(fmt::format(
      "network namespaces with this cluster's prefix {} exist but are not recorded in {} "
      "(left over from an earlier run whose state file is gone?); remove them with {}",
      prefix, NetnsStatePath(user).string(), cmds));
}

// The names of the network to build for `user` (not yet complete), and each
// computer's emulated address into `addresses`.
NetnsState PlanNetwork(const ClusterConfig& user, std::map<std::string, std::string>* addresses) {
  NetnsState s;
  s.prefix = NetnsPrefix(user);
  s.core = s.prefix + "-core";
  s.namespaces.push_back(s.core);
  for (const RackConfig& rack : user.racks) {
    for (size_t i = 0; i < rack.computers.size(); ++i) {
      const ComputerConfig& c = user.computers[static_cast<size_t>(rack.computers[i])];
      std::string ns = s.prefix + "-" + c.name;
      s.namespaces.push_back(ns);
      s.computer_netns[c.name] = ns;
      (*addresses)[c.name] = Address(c.rack_index, static_cast<int>(i));
    }
  }
  s.derived_config = user.data_root / "netns" / "cluster.toml";
  s.user_config = user.source;
  s.complete = false;
  return s;
}

// The core namespace's links: the core bridge (with the master's address),
// a bridge per rack joined to the core by a veth uplink, and each
// computer's veth into its rack bridge, as an `ip -batch` file.
std::string CoreIpBatch(const ClusterConfig& user, const NetnsState& s,
                        const std::string& master_address) {
  const std::string& p = s.prefix;
  std::string ip_core = fmt::format(
      "link set lo up\nlink add {0}c type bridge\nlink set {0}c up\naddr add {1}/16 dev {0}c\n", p,
      master_address);
  for (size_t r = 0; r < user.racks.size(); ++r) {
    ip_core += fmt::format(
        "link add {0}r{1} type bridge\nlink set {0}r{1} up\n"
        "link add {0}u{1} type veth peer name {0}d{1}\n"
        "link set {0}u{1} master {0}r{1}\nlink set {0}d{1} master {0}c\n"
        "link set {0}u{1} up\nlink set {0}d{1} up\n",
        p, r);
  }
  for (size_t k = 0; k < user.computers.size(); ++k) {
    const ComputerConfig& c = user.computers[k];
    ip_core += fmt::format(
        "link add {0}h{1} type veth peer name eth0 netns {2}\n"
        "link set {0}h{1} master {0}r{3}\nlink set {0}h{1} up\n",
        p, k, s.computer_netns.at(c.name), c.rack_index);
  }
  return ip_core;
}

// The shaping of the core namespace's ends of those links (rack uplinks both
// ways, computer links towards the computer), as a `tc -batch` file.
std::string CoreTcBatch(const ClusterConfig& user, const NetnsState& s) {
  const std::string& p = s.prefix;
  std::string tc_core;
  for (size_t r = 0; r < user.racks.size(); ++r) {
    tc_core += TbfLine(fmt::format("{}u{}", p, r), user.network.rack_uplink_bps);
    tc_core += TbfLine(fmt::format("{}d{}", p, r), user.network.rack_uplink_bps);
  }
  for (size_t k = 0; k < user.computers.size(); ++k) {
    tc_core += TbfLine(fmt::format("{}h{}", p, k), user.network.computer_link_bps);
  }
  return tc_core;
}

// A computer's end of its link: its address on eth0, shaped towards the rack.
Status BuildComputerLink(const ClusterConfig& user, const std::string& ns, const ComputerConfig& c,
                         const std::string& address, const std::filesystem::path& dir) {
  std::filesystem::path ip_file = dir / (c.name + ".ip");
  COPSE_RETURN_IF_ERROR(WriteFileAtomically(
      ip_file,
      fmt::format("link set lo up\nlink set eth0 up\naddr add {}/16 dev eth0\n", address)));
  COPSE_RETURN_IF_ERROR(RunTool({"ip", "-n", ns, "-batch", ip_file.string()}));
  std::filesystem::path tc_file = dir / (c.name + ".tc");
  COPSE_RETURN_IF_ERROR(
      WriteFileAtomically(tc_file, TbfLine("eth0", user.network.computer_link_bps)));
  return RunTool({"tc", "-n", ns, "-batch", tc_file.string()});
}

// Creates the network `s` plans, writes and loads the derived config into
// `derived`, records `s` as complete and enters the core namespace. What it
// created is left for the caller to remove when it fails.
Status BuildNetwork(const ClusterConfig& user, const std::map<std::string, std::string>& addresses,
                    NetnsState& s, ClusterConfig* derived) {
  for (const std::string& ns : s.namespaces)
    COPSE_RETURN_IF_ERROR(RunTool({"ip", "netns", "add", ns}));
  const std::string master_address = fmt::format("{}.0.1", kSubnet);
  std::filesystem::path dir = user.data_root / "netns";
  COPSE_RETURN_IF_ERROR(WriteFileAtomically(dir / "core.ip", CoreIpBatch(user, s, master_address)));
  COPSE_RETURN_IF_ERROR(WriteFileAtomically(dir / "core.tc", CoreTcBatch(user, s)));
  COPSE_RETURN_IF_ERROR(RunTool({"ip", "-n", s.core, "-batch", (dir / "core.ip").string()}));
  COPSE_RETURN_IF_ERROR(RunTool({"tc", "-n", s.core, "-batch", (dir / "core.tc").string()}));
  for (const ComputerConfig& c : user.computers) {
    COPSE_RETURN_IF_ERROR(
        BuildComputerLink(user, s.computer_netns.at(c.name), c, addresses.at(c.name), dir));
  }
  COPSE_ASSIGN_OR_RETURN(std::string text, DerivedConfigText(user, addresses, master_address));
  COPSE_RETURN_IF_ERROR(WriteFileAtomically(s.derived_config, text));
  COPSE_ASSIGN_OR_RETURN(*derived, LoadClusterConfig(s.derived_config));
  s.complete = true;
  COPSE_RETURN_IF_ERROR(WriteState(user, s));
  return EnterNamespace(s.core);
}

}  // namespace

Result<std::optional<NetnsState>> ReadNetnsState(const ClusterConfig& config) {
  std::filesystem::path path = NetnsStatePath(config);
  if (!std::filesystem::exists(path)) return std::optional<NetnsState>();
  NetnsState s;
  try {
    auto j = nlohmann::json::parse(ReadFile(path));
    s.prefix = j.at("prefix").get<std::string>();
    s.complete = j.at("complete").get<bool>();
    s.core = j.at("core").get<std::string>();
    s.namespaces = j.at("namespaces").get<std::vector<std::string>>();
    s.computer_netns = j.at("computer_netns").get<std::map<std::string, std::string>>();
    s.derived_config = j.at("derived_config").get<std::string>();
    s.user_config = j.at("user_config").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return Corruption(fmt::format(
        "{}: damaged netns state file ({}); list the cluster's namespaces with "
        "`ip netns list | grep {}`, delete them with `ip netns del NAME` and remove the file",
        path.string(), e.what(), NetnsPrefix(config)));
  }
  // Only names of this cluster are ever deleted, whatever the file says.
  for (const std::string& n : s.namespaces) {
    if (n.rfind(NetnsPrefix(config) + "-", 0) != 0 || n.find('/') != std::string::npos) {
      return Corruption(fmt::format("{}: namespace '{}' does not carry this cluster's prefix {}",
                                    path.string(), n, NetnsPrefix(config)));
    }
  }
  return std::optional<NetnsState>(std::move(s));
}

std::string NetnsPrefix(const ClusterConfig& config) {
  // FNV-1a of the data root: one cluster per data root on a machine.
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : config.data_root.string()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("cp{:06x}", h & 0xffffff);
}

Status CheckNetnsRequirements(const ClusterConfig& config) {
  if (config.racks.size() > kMaxPerLevel) {
    return InvalidArgument(
        fmt::format("{}: --netns supports at most {} racks (addresses {}.RACK.COMPUTER), got {}",
                    config.source.string(), kMaxPerLevel, kSubnet, config.racks.size()));
  }
  for (const RackConfig& r : config.racks) {
    if (r.computers.size() > kMaxPerLevel) {
      return InvalidArgument(
          fmt::format("{}: --netns supports at most {} computers per rack, rack {} has {}",
                      config.source.string(), kMaxPerLevel, r.name, r.computers.size()));
    }
  }
  if (!HasCapability(kCapNetAdmin) || !HasCapability(kCapSysAdmin)) {
    return FailedPrecondition(
        "--netns creates network namespaces, bridges and tc qdiscs and needs CAP_NET_ADMIN and "
        "CAP_SYS_ADMIN: run it as root (e.g. with sudo)");
  }
  for (const char* tool : {"ip", "tc"}) {
    if (!FindTool(tool)) {
      return FailedPrecondition(fmt::format(
          "--netns needs the iproute2 tool `{}`, which is not in PATH, /usr/sbin or /sbin "
          "(apt-get install iproute2)",
          tool));
    }
  }
  return Status::Ok();
}

Result<int> TeardownNetns(const ClusterConfig& config, std::vector<std::string>* notes) {
  COPSE_ASSIGN_OR_RETURN(auto state, ReadNetnsState(config));
  if (!state) return 0;
  int deleted = 0;
  // Computers first, the core (bridges, uplinks) last.
  std::vector<std::string> order = state->namespaces;
  std::stable_partition(order.begin(), order.end(),
                        [&](const std::string& n) { return n != state->core; });
  for (const std::string& ns : order) {
    if (!NamespaceExists(ns)) continue;
    Status s = RunTool({"ip", "netns", "del", ns});
    if (!s.ok()) return s.WithContext(fmt::format("deleting network namespace {}", ns));
    ++deleted;
  }
  std::error_code ec;
  if (!state->derived_config.empty() &&
      state->derived_config.parent_path() == config.data_root / "netns") {
    std::filesystem::remove_all(state->derived_config.parent_path(), ec);
  }
  std::filesystem::remove(NetnsStatePath(config), ec);
  if (ec) {
    return IoError(
        fmt::format("cannot remove {}: {}", NetnsStatePath(config).string(), ec.message()));
  }
  std::vector<std::string> left = NamespacesWithPrefix(state->prefix + "-");
  if (!left.empty() && notes) {
    std::string names;
    for (const std::string& n : left) names += " " + n;
    notes->push_back(
        fmt::format("namespaces with this cluster's prefix that were not recorded "
                    "remain (not made by this `up`):{}",
                    names));
  }
  return deleted;
}

Result<NetnsCluster> NetnsCluster::Setup(const ClusterConfig& user, bool processes_running) {
  COPSE_RETURN_IF_ERROR(CheckNetnsRequirements(user));
  COPSE_ASSIGN_OR_RETURN(auto old, ReadNetnsState(user));
  NetnsCluster net;
  if (old && processes_running) {
    COPSE_RETURN_IF_ERROR(CheckReusable(user, *old));
    COPSE_ASSIGN_OR_RETURN(net.config_, LoadClusterConfig(old->derived_config));
    net.state_ = *old;
    COPSE_RETURN_IF_ERROR(EnterNamespace(net.state_.core));
    return net;
  }
  if (!old && processes_running) {
    return FailedPrecondition(fmt::format(
        "cluster {} is running without --netns; stop it with `copse cluster down` first",
        user.name));
  }
  if (old) {
    // A half-built or stale network whose processes are all gone.
    COPSE_RETURN_IF_ERROR(TeardownNetns(user, nullptr).status());
  }
  COPSE_RETURN_IF_ERROR(CheckNoStaleNamespaces(user));
  std::map<std::string, std::string> addresses;
  net.state_ = PlanNetwork(user, &addresses);
  // Recorded before anything exists, so a crash at any point leaves a record.
  COPSE_RETURN_IF_ERROR(WriteState(user, net.state_));
  Status built = BuildNetwork(user, addresses, net.state_, &net.config_);
  if (!built.ok()) {
    auto removed = TeardownNetns(user, nullptr);
    if (!removed.ok()) {
      return built.WithContext(
          fmt::format("building the emulated network (and removing it again failed too: {})",
                      removed.status().ToString()));
    }
    return built.WithContext("building the emulated network (removed again)");
  }
  net.created_ = true;
  return net;
}

Result<int> NetnsCluster::Spawn(const std::string& computer, const std::filesystem::path& exe,
                                const std::vector<std::string>& args,
                                const std::filesystem::path& output) const {
  std::string ns = state_.core;
  if (!computer.empty()) {
    auto it = state_.computer_netns.find(computer);
    if (it == state_.computer_netns.end()) {
      return NotFound(fmt::format("computer {} has no network namespace", computer));
    }
    ns = it->second;
  }
  std::filesystem::path ns_path = kNetnsDir / ns;
  int ns_fd = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns_fd < 0) {
    return FailedPrecondition(fmt::format("cannot open network namespace {}: {}", ns_path.string(),
                                          std::strerror(errno)));
  }
  SpawnOptions o;
  o.program = exe;
  o.args = args;
  o.out = SpawnOptions::Output::kFile;
  o.out_file = output;
  o.err_to_out = true;
  o.new_session = true;
  o.netns_fd = ns_fd;
  asio::io_context io;
  auto p = Subprocess::Spawn(io, std::move(o));
  ::close(ns_fd);
  if (!p.ok()) {
    return Status(p.status().code(),
                  fmt::format("{} (in network namespace {})", p.status().message(), ns));
  }
  (*p)->Detach();
  return (*p)->pid();
}

Result<std::optional<ClusterConfig>> EnterClusterNetns(const ClusterConfig& config,
                                                       const std::string& computer) {
  COPSE_ASSIGN_OR_RETURN(auto state, ReadNetnsState(config));
  if (!state) return std::optional<ClusterConfig>();
  if (!state->complete) {
    return FailedPrecondition(fmt::format(
        "the emulated network of cluster {} is half-built (a `cluster up --netns` runs or "
        "stopped half-way); run `copse cluster up --netns` again or `copse cluster down`",
        config.name));
  }
  COPSE_ASSIGN_OR_RETURN(ClusterConfig derived, LoadClusterConfig(state->derived_config));
  derived.source = config.source;  // hints name the user's config, not the derived one
  auto it = state->computer_netns.find(computer);
  COPSE_RETURN_IF_ERROR(
      EnterNamespace(it == state->computer_netns.end() ? state->core : it->second));
  return std::optional<ClusterConfig>(std::move(derived));
}

}  // namespace copse::client

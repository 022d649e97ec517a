#include "common/config.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace copse {
namespace {

// Walks one TOML table, remembering the dotted key path so that every error
// names the file, line, key and what was expected; Finish() rejects keys the
// schema does not know (typos).
class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, const std::string& file)
      : table_(table), path_(std::move(path)), file_(file) {}

  Status error() const { return error_; }

  std::string Key(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  void Fail(const toml::node* node, std::string_view key, std::string_view expected) {
    if (!error_.ok()) return;
    std::string where = file_;
    const toml::node* at = node ? node : static_cast<const toml::node*>(&table_);
    if (at->source().begin.line > 0) where += fmt::format(":{}", at->source().begin.line);
    error_ = InvalidArgument(fmt::format("{}: key '{}': expected {}", where, Key(key), expected));
  }

  const toml::node* Get(std::string_view key) {
    seen_.insert(std::string(key));
    return table_.get(key);
  }

  std::string String(std::string_view key, std::string def, bool required = false) {
    const toml::node* n = Get(key);
    if (!n) {
      if (required) Fail(nullptr, key, "a string (the key is required)");
      return def;
    }
    if (auto v = n->value<std::string>()) return *v;
    Fail(n, key, "a string");
    return def;
  }

  int64_t Int(std::string_view key, int64_t def, int64_t lo, int64_t hi) {
    const toml::node* n = Get(key);
    if (!n) return def;
    auto v = n->is_integer() ? n->value<int64_t>() : std::nullopt;
    if (!v || *v < lo || *v > hi) {
      Fail(n, key, fmt::format("an integer from {} to {}", lo, hi) + Got(n));
      return def;
    }
    return *v;
  }

  bool Bool(std::string_view key, bool def) {
    const toml::node* n = Get(key);
    if (!n) return def;
    if (auto v = n->value_exact<bool>()) return *v;
    Fail(n, key, "true or false" + Got(n));
    return def;
  }

  double Number(std::string_view key, double def, double lo, double hi) {
    const toml::node* n = Get(key);
    if (!n) return def;
    std::optional<double> v;
    if (n->is_floating_point() || n->is_integer()) v = n->value<double>();
    if (!v || !(*v >= lo && *v <= hi)) {
      Fail(n, key, fmt::format("a number from {} to {}", lo, hi) + Got(n));
      return def;
    }
    return *v;
  }

  const toml::table* Table(std::string_view key) {
    const toml::node* n = Get(key);
    if (!n) return nullptr;
    if (!n->is_table()) Fail(n, key, "a table");
    return n->as_table();
  }

  const toml::array* Array(std::string_view key) {
    const toml::node* n = Get(key);
    if (!n) return nullptr;
    if (!n->is_array()) Fail(n, key, "an array");
    return n->as_array();
  }

  // A list of strings; absent: empty.
  std::vector<std::string> StringList(std::string_view key) {
    std::vector<std::string> out;
    const toml::array* a = Array(key);
    if (a == nullptr) return out;
    for (const toml::node& n : *a) {
      auto v = n.value<std::string>();
      if (!v) {
        Fail(&n, key, "a list of strings");
        return {};
      }
      out.push_back(*v);
    }
    return out;
  }

  // Fails on keys not read through this reader.
  void Finish() {
    for (const auto& [k, v] : table_) {
      if (!seen_.count(std::string(k.str()))) {
        Fail(&v, k.str(), "no such key here (unknown setting)");
        return;
      }
    }
  }

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  static std::string Got(const toml::node* n) {
    std::ostringstream os;
    os << ", got ";
    if (n->is_string()) {
      os << '"' << *n->value<std::string>() << '"';
    } else if (n->is_integer() || n->is_floating_point() || n->is_boolean()) {
      n->visit([&](auto&& x) { os << x; });
    } else {
      os << "a " << n->type();
    }
    return os.str();
  }

  const toml::table& table_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> seen_;
  Status error_;
};

bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::filesystem::path Anchor(const std::filesystem::path& base, const std::string& p) {
  std::filesystem::path path(p);
  if (!p.empty() && p[0] == '~') {
    const char* home = std::getenv("HOME");
    if (home) path = std::filesystem::path(home) / p.substr(p.size() > 1 && p[1] == '/' ? 2 : 1);
  }
  if (path.is_relative()) path = base / path;
  return path.lexically_normal();
}

constexpr const char* kLogLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};

class ConfigParser {
 public:
  ConfigParser(const toml::table& root, std::filesystem::path origin, const HostResolver& resolve)
      : resolve_(resolve),
        root_(root),
        origin_(std::move(origin)),
        file_(origin_.string()),
        base_(origin_.has_parent_path() ? origin_.parent_path() : ".") {}

  Result<ClusterConfig> Parse() {
    cfg_.source = origin_;
    TableReader top(root_, "", file_);
    const toml::table* cluster = top.Table("cluster");
    const toml::table* master = top.Table("master");
    const toml::table* network = top.Table("network");
    const toml::table* scheduler = top.Table("scheduler");
    const toml::table* dfs = top.Table("dfs");
    const toml::table* jobs = top.Table("jobs");
    const toml::table* worker = top.Table("worker");
    const toml::table* http = top.Table("http");
    const toml::table* apps = top.Table("apps");
    const toml::table* streaming = top.Table("streaming");
    const toml::table* deploy = top.Table("deploy");
    const toml::table* hosts = top.Table("hosts");
    const toml::array* racks = top.Array("racks");
    top.Finish();
    COPSE_RETURN_IF_ERROR(top.error());
    if (!cluster) return Missing("cluster", "a [cluster] table");
    if (!master) return Missing("master", "a [master] table");
    if (!racks) return Missing("racks", "at least one [[racks]] table");
    COPSE_RETURN_IF_ERROR(ParseCluster(*cluster));
    COPSE_RETURN_IF_ERROR(ParseMaster(*master));
    if (network) COPSE_RETURN_IF_ERROR(ParseNetwork(*network));
    if (scheduler) COPSE_RETURN_IF_ERROR(ParseScheduler(*scheduler));
    if (dfs) COPSE_RETURN_IF_ERROR(ParseDfs(*dfs));
    if (jobs) COPSE_RETURN_IF_ERROR(ParseJobs(*jobs));
    if (worker) COPSE_RETURN_IF_ERROR(ParseWorker(*worker));
    if (apps) COPSE_RETURN_IF_ERROR(ParseApps(*apps));
    if (streaming) COPSE_RETURN_IF_ERROR(ParseStreaming(*streaming));
    COPSE_RETURN_IF_ERROR(ParseHttp(http));
    if (deploy) COPSE_RETURN_IF_ERROR(ParseDeploy(*deploy));
    COPSE_RETURN_IF_ERROR(ParseRacks(*racks));
    if (hosts) COPSE_RETURN_IF_ERROR(ParseHostAddresses(*hosts));
    COPSE_RETURN_IF_ERROR(ResolveHosts());
    COPSE_RETURN_IF_ERROR(CheckPorts());
    return std::move(cfg_);
  }

 private:
  Status Missing(std::string_view key, std::string_view what) {
    return InvalidArgument(fmt::format("{}: key '{}': expected {}", file_, key, what));
  }

  Status ParseCluster(const toml::table& t) {
    TableReader r(t, "cluster", file_);
    cfg_.name = r.String("name", "", true);
    if (r.error().ok() && !ValidName(cfg_.name))
      r.Fail(t.get("name"), "name", "a name of letters, digits, '-', '_', '.' (1-64 chars)");
    cfg_.data_root = Anchor(base_, r.String("data_root", "", true));
    std::string secret = r.String("secret_file", "");
    cfg_.secret_file = secret.empty() ? cfg_.data_root / "cluster.secret" : Anchor(base_, secret);
    std::string apps = r.String("apps_dir", "");
    cfg_.apps_dir = apps.empty() ? std::filesystem::path() : Anchor(base_, apps);
    cfg_.replication = static_cast<int>(r.Int("replication", 3, 1, 16));
    cfg_.block_size_bytes = r.Int("block_size_mb", 64, 1, 4096) << 20;
    cfg_.max_running_jobs = static_cast<int>(r.Int("max_running_jobs", 10, 1, 100000));
    cfg_.log_level = r.String("log_level", "info");
    cfg_.log_max_bytes = static_cast<uint64_t>(r.Int("log_max_mb", 64, 1, 1 << 20)) << 20;
    cfg_.log_files = static_cast<int>(r.Int("log_files", 5, 1, 1000));
    if (r.error().ok() && std::find(std::begin(kLogLevels), std::end(kLogLevels), cfg_.log_level) ==
                              std::end(kLogLevels)) {
      r.Fail(t.get("log_level"), "log_level",
             "one of trace, debug, info, warn, error, critical, off");
    }
    cfg_.heartbeat_interval =
        std::chrono::milliseconds(r.Int("heartbeat_interval_ms", 1000, 10, 600'000));
    cfg_.worker_timeout =
        std::chrono::milliseconds(r.Int("worker_timeout_ms", 5000, 20, 3'600'000));
    if (r.error().ok() && cfg_.worker_timeout <= cfg_.heartbeat_interval) {
      r.Fail(t.get("worker_timeout_ms"), "worker_timeout_ms",
             "a timeout longer than heartbeat_interval_ms");
    }
    r.Finish();
    return r.error();
  }

  Status ParseMaster(const toml::table& t) {
    TableReader r(t, "master", file_);
    cfg_.master.host = r.String("host", "127.0.0.1");
    NoteHost(cfg_.master.host, "master.host");
    cfg_.master.port = static_cast<uint16_t>(r.Int("port", 0, 1, 65535));
    if (r.error().ok() && !t.get("port")) r.Fail(nullptr, "port", "a port (the key is required)");
    std::string dir = r.String("data_dir", "");
    cfg_.master.data_dir = dir.empty() ? cfg_.data_root / "master" : Anchor(base_, dir);
    worker_port_base_ = r.Int("worker_port_base", 0, 0, 65535);
    metrics_port_base_ = r.Int("worker_metrics_port_base", 0, 0, 65535);
    r.Finish();
    return r.error();
  }

  Status ParseNetwork(const toml::table& t) {
    TableReader r(t, "network", file_);
    cfg_.network.computer_link_bps = r.Number("computer_link_gbps", 1, 1e-6, 1e4) * 1e9;
    cfg_.network.rack_uplink_bps = r.Number("rack_uplink_gbps", 6, 1e-6, 1e5) * 1e9;
    r.Finish();
    return r.error();
  }

  Status ParseDfs(const toml::table& t) {
    TableReader r(t, "dfs", file_);
    cfg_.dfs.rereplication_delay =
        std::chrono::milliseconds(r.Int("rereplication_delay_ms", 10'000, 0, 86'400'000));
    cfg_.dfs.uncommitted_grace =
        std::chrono::milliseconds(r.Int("uncommitted_grace_ms", 600'000, 1'000, 604'800'000));
    cfg_.dfs.reserve_bytes = static_cast<uint64_t>(r.Int("reserve_mb", 100, 0, int64_t{1} << 40))
                             << 20;
    cfg_.dfs.sync_on_close = r.Bool("sync_on_close", true);
    cfg_.dfs.safe_mode = std::chrono::milliseconds(r.Int("safe_mode_ms", 10'000, 0, 3'600'000));
    r.Finish();
    return r.error();
  }

  Status ParseJobs(const toml::table& t) {
    TableReader r(t, "jobs", file_);
    cfg_.jobs.max_queued = static_cast<int>(r.Int("max_queued", 1000, 0, 1'000'000));
    cfg_.jobs.retention = std::chrono::seconds(r.Int("retention_s", 86'400, 0, 31'536'000));
    cfg_.jobs.max_vertices = static_cast<int>(r.Int("max_vertices", 100'000, 1, 10'000'000));
    cfg_.jobs.max_finished = static_cast<int>(r.Int("max_finished", 10'000, 0, 10'000'000));
    cfg_.jobs.max_finished_bytes =
        static_cast<uint64_t>(r.Int("max_finished_mb", 256, 1, int64_t{1} << 20)) << 20;
    cfg_.jobs.root_timeout = std::chrono::seconds(r.Int("root_timeout_s", 60, 1, 86'400));
    cfg_.jobs.max_root_restarts = static_cast<int>(r.Int("max_root_restarts", 5, 0, 1000));
    r.Finish();
    return r.error();
  }

  Status ParseWorker(const toml::table& t) {
    TableReader r(t, "worker", file_);
    WorkerConfig& w = cfg_.worker;
    w.vertex_timeout = std::chrono::seconds(r.Int("vertex_timeout_s", 86'400, 1, 31'536'000));
    w.memory_bytes = static_cast<uint64_t>(r.Int("memory_limit_mb", 0, 0, int64_t{1} << 30)) << 20;
    w.log_bytes = static_cast<uint64_t>(r.Int("log_limit_kb", 16 << 10, 1, int64_t{1} << 30)) << 10;
    w.workdir_bytes = static_cast<uint64_t>(r.Int("workdir_limit_mb", 0, 0, int64_t{1} << 30))
                      << 20;
    w.kill_grace = std::chrono::milliseconds(r.Int("kill_grace_ms", 2000, 0, 600'000));
    w.task_retention = std::chrono::seconds(r.Int("task_retention_s", 3600, 0, 31'536'000));
    w.program_cache_bytes =
        static_cast<uint64_t>(r.Int("program_cache_mb", 1024, 1, int64_t{1} << 30)) << 20;
    r.Finish();
    return r.error();
  }

  Status ParseApps(const toml::table& t) {
    TableReader r(t, "apps", file_);
    cfg_.apps.max_program_bytes =
        static_cast<uint64_t>(r.Int("max_program_mb", 256, 1, int64_t{1} << 20)) << 20;
    r.Finish();
    return r.error();
  }

  Status ParseStreaming(const toml::table& t) {
    TableReader r(t, "streaming", file_);
    cfg_.streaming.sort_memory_bytes =
        static_cast<uint64_t>(r.Int("sort_memory_mb", 256, 1, int64_t{1} << 20)) << 20;
    cfg_.streaming.max_record_bytes =
        static_cast<uint64_t>(r.Int("max_record_bytes", 1 << 20, 16, int64_t{1} << 30));
    r.Finish();
    return r.error();
  }

  // [http] is optional: without it the API serves on 127.0.0.1 at the first
  // port above master.port that no other process of the config uses.
  Status ParseHttp(const toml::table* t) {
    HttpConfig& h = cfg_.http;
    http_port_default_ = t == nullptr || !t->get("port");
    if (t == nullptr) return Status::Ok();
    TableReader r(*t, "http", file_);
    h.enabled = r.Bool("enabled", true);
    h.host = r.String("host", "127.0.0.1");
    h.port = static_cast<uint16_t>(r.Int("port", 0, 1, 65535));
    std::string token = r.String("token_file", "");
    h.token_file = token.empty() ? std::filesystem::path() : Anchor(base_, token);
    h.threads = static_cast<int>(r.Int("threads", 8, 1, 64));
    h.allowed_hosts = r.StringList("allowed_hosts");
    if (r.error().ok() && h.enabled && !h.loopback() && h.token_file.empty()) {
      r.Fail(t->get("host"), "host",
             "127.0.0.1 (or another loopback address) unless token_file names the token "
             "clients must send: an API reachable from other computers requires one");
    }
    r.Finish();
    return r.error();
  }

  Status ParseScheduler(const toml::table& t) {
    TableReader r(t, "scheduler", file_);
    for (const auto& [k, v] : t) {
      std::string key(k.str());
      if (key == "policy") {
        cfg_.scheduler.policy = r.String("policy", "QFP");
      } else if (key == "solver") {
        cfg_.scheduler.solver = r.String("solver", kSchedulerSolver);
      } else {
        cfg_.scheduler.params[key] = r.Number(key, 0, -1e18, 1e18);
      }
    }
    r.Finish();
    return r.error();
  }

  Status ParseRacks(const toml::array& racks) {
    if (racks.empty()) return Missing("racks", "at least one [[racks]] table");
    for (size_t i = 0; i < racks.size(); ++i) {
      const toml::table* t = racks.get(i)->as_table();
      std::string path = fmt::format("racks[{}]", i);
      if (!t) return Missing(path, "a table");
      COPSE_RETURN_IF_ERROR(ParseRack(*t, path));
    }
    return Status::Ok();
  }

  Status ParseRack(const toml::table& t, const std::string& path) {
    TableReader r(t, path, file_);
    RackConfig rack;
    rack.name = r.String("name", "", true);
    if (r.error().ok() && !ValidName(rack.name))
      r.Fail(t.get("name"), "name", "a name of letters, digits, '-', '_', '.' (1-64 chars)");
    if (r.error().ok() && !names_.insert(rack.name).second)
      r.Fail(t.get("name"), "name", "a name not used by another rack or computer");
    int64_t count = r.Int("count", 0, 0, 100000);
    int64_t slots = r.Int("slots", 1, 1, 1024);
    std::string host = r.String("host", cfg_.master.host);
    if (t.get("host")) NoteHost(host, path + ".host");
    const toml::array* explicit_list = r.Array("computers");
    r.Finish();
    COPSE_RETURN_IF_ERROR(r.error());
    if ((count > 0) == (explicit_list != nullptr))
      return Missing(path, "either 'count' (generated computers) or a [[racks.computers]] list");
    int rack_index = static_cast<int>(cfg_.racks.size());
    if (explicit_list) {
      for (size_t i = 0; i < explicit_list->size(); ++i) {
        const toml::table* ct = explicit_list->get(i)->as_table();
        std::string cpath = fmt::format("{}.computers[{}]", path, i);
        if (!ct) return Missing(cpath, "a table");
        ComputerConfig c;
        c.rack = rack.name;
        c.rack_index = rack_index;
        COPSE_RETURN_IF_ERROR(ParseComputer(*ct, cpath, host, slots, &c));
        rack.computers.push_back(static_cast<int>(cfg_.computers.size()));
        cfg_.computers.push_back(std::move(c));
      }
      if (rack.computers.empty()) return Missing(path + ".computers", "at least one computer");
    } else {
      for (int64_t i = 0; i < count; ++i) {
        ComputerConfig c;
        c.name = fmt::format("{}-c{:02}", rack.name, i);
        if (!names_.insert(c.name).second) {
          return Missing(path + ".count", "generated names that no other rack or computer uses (" +
                                              c.name + " is taken)");
        }
        c.rack = rack.name;
        c.rack_index = rack_index;
        c.host = host;
        c.slots = static_cast<int>(slots);
        COPSE_RETURN_IF_ERROR(DefaultPorts(&c, path + ".count"));
        COPSE_RETURN_IF_ERROR(DefaultMetricsPort(&c, path + ".count"));
        c.data_dir = cfg_.data_root / c.name;
        rack.computers.push_back(static_cast<int>(cfg_.computers.size()));
        cfg_.computers.push_back(std::move(c));
      }
    }
    cfg_.racks.push_back(std::move(rack));
    return Status::Ok();
  }

  Status ParseComputer(const toml::table& t, const std::string& path, const std::string& host,
                       int64_t slots, ComputerConfig* c) {
    TableReader r(t, path, file_);
    c->name = r.String("name", "", true);
    if (r.error().ok() && !ValidName(c->name))
      r.Fail(t.get("name"), "name", "a name of letters, digits, '-', '_', '.' (1-64 chars)");
    if (r.error().ok() && !names_.insert(c->name).second)
      r.Fail(t.get("name"), "name", "a name not used by another rack or computer");
    if (r.error().ok() && c->name == "master")
      r.Fail(t.get("name"), "name",
             "a name other than 'master' (`copse cluster logs master` and the unit files name the "
             "master so)");
    c->host = r.String("host", host);
    if (t.get("host")) NoteHost(c->host, path + ".host");
    c->slots = static_cast<int>(r.Int("slots", slots, 1, 1024));
    c->control_port = static_cast<uint16_t>(r.Int("control_port", 0, 1, 65535));
    c->data_port = static_cast<uint16_t>(r.Int("data_port", 0, 1, 65535));
    c->metrics_port = static_cast<uint16_t>(r.Int("metrics_port", 0, 1, 65535));
    std::string dir = r.String("data_dir", "");
    c->data_dir = dir.empty() ? cfg_.data_root / c->name : Anchor(base_, dir);
    r.Finish();
    COPSE_RETURN_IF_ERROR(r.error());
    if (c->control_port == 0 || c->data_port == 0) {
      uint16_t control = c->control_port, data = c->data_port;
      COPSE_RETURN_IF_ERROR(DefaultPorts(c, path + ".control_port"));
      if (control) c->control_port = control;
      if (data) c->data_port = data;
    }
    if (c->metrics_port == 0) COPSE_RETURN_IF_ERROR(DefaultMetricsPort(c, path + ".metrics_port"));
    return Status::Ok();
  }

  // With master.worker_metrics_port_base, computer i (in file order) serves
  // its metrics on base + i; without it, a computer serves none unless it
  // sets metrics_port.
  Status DefaultMetricsPort(ComputerConfig* c, const std::string& key) {
    if (metrics_port_base_ == 0) return Status::Ok();
    int64_t port = metrics_port_base_ + static_cast<int64_t>(cfg_.computers.size());
    if (port > 65535) {
      return Missing(key, "ports below 65536 (master.worker_metrics_port_base is too high for " +
                              std::to_string(cfg_.computers.size() + 1) + " computers)");
    }
    c->metrics_port = static_cast<uint16_t>(port);
    return Status::Ok();
  }

  // Computer i (in file order) gets control port base + 2i and data port base + 2i + 1.
  Status DefaultPorts(ComputerConfig* c, const std::string& key) {
    if (worker_port_base_ == 0)
      return Missing(key, "explicit control_port/data_port, or master.worker_port_base");
    int64_t port = worker_port_base_ + 2 * static_cast<int64_t>(cfg_.computers.size());
    if (port + 1 > 65535) {
      return Missing(key, "ports below 65536 (master.worker_port_base is too high for " +
                              std::to_string(cfg_.computers.size() + 1) + " computers)");
    }
    c->control_port = static_cast<uint16_t>(port);
    c->data_port = static_cast<uint16_t>(port + 1);
    return Status::Ok();
  }

  // [deploy] is optional: without it, ssh's defaults and /opt/copse.
  Status ParseDeploy(const toml::table& t) {
    TableReader r(t, "deploy", file_);
    DeployConfig& d = cfg_.deploy;
    d.ssh_user = r.String("ssh_user", "");
    if (r.error().ok() && !d.ssh_user.empty() && !ValidUserName(d.ssh_user))
      r.Fail(t.get("ssh_user"), "ssh_user",
             "a user name of lower-case letters, digits, '-', '_' and '.', not starting with '-'");
    d.ssh_port = static_cast<uint16_t>(r.Int("ssh_port", 22, 1, 65535));
    d.ssh_options = r.StringList("ssh_options");
    for (const std::string& o : d.ssh_options) {
      if (r.error().ok() && (o.empty() || o.find('\0') != std::string::npos))
        r.Fail(t.get("ssh_options"), "ssh_options", "a list of non-empty arguments for ssh");
    }
    std::string dir = r.String("install_dir", "/opt/copse");
    if (r.error().ok() && !ValidInstallDir(dir))
      r.Fail(t.get("install_dir"), "install_dir",
             "an absolute path of letters, digits, '/', '-', '_' and '.', without '..' (the "
             "same on every host), got \"" +
                 dir + "\"");
    d.install_dir = std::filesystem::path(dir).lexically_normal();
    d.systemd = r.Bool("systemd", false);
    d.max_clock_offset =
        std::chrono::milliseconds(r.Int("max_clock_offset_ms", 2000, 1, 3'600'000));
    r.Finish();
    return r.error();
  }

  static bool ValidUserName(const std::string& s) {
    if (s.empty() || s.size() > 32 || s[0] == '-') return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    });
  }

  // Paths that go into commands run by a remote shell: nothing it could read
  // as syntax.
  static bool ValidInstallDir(const std::string& s) {
    if (s.size() < 2 || s[0] != '/' || s.size() > 200) return false;
    for (const auto& part : std::filesystem::path(s))
      if (part == "..") return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '-' || c == '_' ||
             c == '.';
    });
  }

  // Remembers the first key that names `host`, for the error if it does not
  // resolve.
  void NoteHost(const std::string& host, const std::string& key) { host_keys_.emplace(host, key); }

  // `address` in the one spelling inet_ntop gives it (so that two spellings
  // are one host); "" when it is not the unicast address of a host.
  static std::string CanonicalAddress(const std::string& address) {
    char text[INET6_ADDRSTRLEN] = {};
    in_addr v4;
    in6_addr v6;
    if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) {
      const uint32_t a = ntohl(v4.s_addr);
      if (a == 0 || (a >> 28) == 0xe) return "";  // 0.0.0.0, 224.0.0.0/4
      return ::inet_ntop(AF_INET, &v4, text, sizeof text) ? text : "";
    }
    if (::inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
      if (IN6_IS_ADDR_UNSPECIFIED(&v6) || IN6_IS_ADDR_MULTICAST(&v6)) return "";
      return ::inet_ntop(AF_INET6, &v6, text, sizeof text) ? text : "";
    }
    return "";
  }

  // [hosts]: NAME = "ADDRESS", the cluster's own /etc/hosts, looked up
  // before the resolver (`cluster up` over ssh ships the config with one,
  // so that every host sees the addresses the operator's machine resolved).
  Status ParseHostAddresses(const toml::table& t) {
    TableReader r(t, "hosts", file_);
    for (const auto& [key, node] : t) {
      const std::string name(key.str());
      const std::string address = r.String(name, "");
      if (!r.error().ok()) break;
      std::string canonical = CanonicalAddress(address);
      if (canonical.empty()) {
        r.Fail(&node, name,
               "an IPv4 or IPv6 address a host can have (not unspecified or multicast), got \"" +
                   address + "\"");
        break;
      }
      host_addresses_[name] = canonical;
    }
    return r.error();
  }

  // Every host name becomes an address; the name is kept for ssh.
  Status ResolveHosts() {
    std::map<std::string, std::string> resolved = host_addresses_;
    auto resolve = [&](std::string* host, std::string* name) -> Status {
      *name = *host;
      auto it = resolved.find(*host);
      if (it == resolved.end()) {
        Result<std::string> address = resolve_(*host);
        if (!address.ok()) {
          auto key = host_keys_.find(*host);
          return InvalidArgument(fmt::format(
              "{}: key '{}': expected a host name or address that resolves, got \"{}\" ({})", file_,
              key != host_keys_.end() ? key->second : "master.host", *host,
              address.status().message()));
        }
        it = resolved.emplace(*host, *address).first;
      }
      *host = it->second;
      return Status::Ok();
    };
    COPSE_RETURN_IF_ERROR(resolve(&cfg_.master.host, &cfg_.master.host_name));
    for (ComputerConfig& c : cfg_.computers) COPSE_RETURN_IF_ERROR(resolve(&c.host, &c.host_name));
    return Status::Ok();
  }

  Status CheckPorts() {
    std::map<std::pair<std::string, uint16_t>, std::string> used;
    auto claim = [&](const std::string& host, uint16_t port, const std::string& who) -> Status {
      auto [it, fresh] = used.emplace(std::make_pair(host, port), who);
      if (fresh) return Status::Ok();
      return InvalidArgument(
          fmt::format("{}: key '{}': expected a port no other process uses on "
                      "{}, but {} is also used by {}",
                      file_, who, host, port, it->second));
    };
    COPSE_RETURN_IF_ERROR(claim(cfg_.master.host, cfg_.master.port, "master.port"));
    for (const ComputerConfig& c : cfg_.computers) {
      COPSE_RETURN_IF_ERROR(claim(c.host, c.control_port, c.name + ".control_port"));
      COPSE_RETURN_IF_ERROR(claim(c.host, c.data_port, c.name + ".data_port"));
      if (c.metrics_port != 0) {
        COPSE_RETURN_IF_ERROR(claim(c.host, c.metrics_port, c.name + ".metrics_port"));
      }
    }
    if (cfg_.http.enabled) {
      // Either side on a wildcard address collides with any host.
      const std::string& host = cfg_.http.host;
      auto taken = [&](uint16_t port)
          -> const std::pair<const std::pair<std::string, uint16_t>, std::string>* {
        for (const auto& entry : used) {
          const auto& [key, who] = entry;
          if (key.second == port &&
              (key.first == host || host == "0.0.0.0" || key.first == "0.0.0.0")) {
            return &entry;
          }
        }
        return nullptr;
      };
      if (http_port_default_) {
        uint32_t port = cfg_.master.port + 1u;
        while (port <= 65535 && taken(static_cast<uint16_t>(port)) != nullptr) ++port;
        if (port > 65535) {
          return InvalidArgument(fmt::format(
              "{}: key 'http.port': every port above master.port is taken; set one", file_));
        }
        cfg_.http.port = static_cast<uint16_t>(port);
      }
      if (const auto* clash = taken(cfg_.http.port)) {
        return claim(clash->first.first, cfg_.http.port, "http.port");
      }
      COPSE_RETURN_IF_ERROR(claim(host, cfg_.http.port, "http.port"));
    }
    return Status::Ok();
  }

  const HostResolver& resolve_;
  std::map<std::string, std::string> host_addresses_;  // [hosts]
  std::map<std::string, std::string> host_keys_;
  const toml::table& root_;
  std::filesystem::path origin_;
  std::string file_;
  std::filesystem::path base_;
  ClusterConfig cfg_;
  std::set<std::string> names_;
  bool http_port_default_ = true;
  int64_t worker_port_base_ = 0;
  int64_t metrics_port_base_ = 0;
};

}  // namespace

bool HttpConfig::loopback() const { return host == "localhost" || IsLoopbackAddress(host); }

bool IsLoopbackAddress(const std::string& address) {
  return address == "::1" || address.rfind("127.", 0) == 0;
}

bool ClusterConfig::AllOnThisMachine() const {
  if (!IsLoopbackAddress(master.host)) return false;
  return std::all_of(computers.begin(), computers.end(),
                     [](const ComputerConfig& c) { return IsLoopbackAddress(c.host); });
}

Result<std::string> ResolveHost(const std::string& host) {
  if (host.empty()) return InvalidArgument("an empty host");
  in6_addr scratch;
  if (::inet_pton(AF_INET, host.c_str(), &scratch) == 1 ||
      ::inet_pton(AF_INET6, host.c_str(), &scratch) == 1) {
    return host;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &list); rc != 0)
    return NotFound(::gai_strerror(rc));
  std::string v4, v6;
  for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET && v4.empty()) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, text,
                  sizeof text);
      v4 = text;
    } else if (a->ai_family == AF_INET6 && v6.empty()) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                  sizeof text);
      v6 = text;
    }
  }
  ::freeaddrinfo(list);
  if (!v4.empty()) return v4;
  if (!v6.empty()) return v6;
  return NotFound("no IPv4 or IPv6 address");
}

const ComputerConfig* ClusterConfig::FindComputer(const std::string& name) const {
  for (const ComputerConfig& c : computers)
    if (c.name == name) return &c;
  return nullptr;
}

int ClusterConfig::TotalSlots() const {
  int total = 0;
  for (const ComputerConfig& c : computers) total += c.slots;
  return total;
}

Result<ClusterConfig> ParseClusterConfig(const std::string& text,
                                         const std::filesystem::path& origin,
                                         const HostResolver& resolve) {
  toml::table root;
  try {
    root = toml::parse(text, origin.string());
  } catch (const toml::parse_error& e) {
    return InvalidArgument(fmt::format("{}:{}:{}: not valid TOML: {}", origin.string(),
                                       e.source().begin.line, e.source().begin.column,
                                       e.description()));
  }
  return ConfigParser(root, origin, resolve).Parse();
}

Result<ClusterConfig> LoadClusterConfig(const std::filesystem::path& path,
                                        const HostResolver& resolve) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(fmt::format("{}: cannot open cluster config", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError(fmt::format("{}: cannot read cluster config", path.string()));
  std::filesystem::path abs = std::filesystem::absolute(path).lexically_normal();
  return ParseClusterConfig(text.str(), abs, resolve);
}

std::filesystem::path ResolveConfigPath(const std::optional<std::string>& flag) {
  if (flag && !flag->empty()) return *flag;
  if (const char* env = std::getenv("COPSE_CONFIG"); env && *env) return env;
  std::filesystem::path local = "cluster-configs/local.toml";
  if (std::filesystem::exists(local)) return local;
#ifdef COPSE_SOURCE_DIR
  std::filesystem::path in_tree = std::filesystem::path(COPSE_SOURCE_DIR) / local;
  if (std::filesystem::exists(in_tree)) return in_tree;
#endif
  return local;
}

}  // namespace copse

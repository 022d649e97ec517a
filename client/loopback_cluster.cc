#include "client/loopback_cluster.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "common/net/free_ports.h"
#include "common/subprocess.h"

namespace copse::client {

Result<std::unique_ptr<RunDir>> RunDir::Create(const std::string& prefix, bool keep) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return IoError(fmt::format("cannot create a directory {}: {}", tmpl, std::strerror(errno)));
  }
  return std::unique_ptr<RunDir>(new RunDir(tmpl, keep));
}

int RunDir::Failed(const std::string& program, const Status& s) {
  std::cerr << program << ": " << s.ToString() << " (logs in " << path_.string() << ")\n";
  keep_ = true;
  return 1;
}

LoopbackSpec LocalShape(const std::string& name, int slots, const std::string& policy,
                        const std::string& log_level) {
  LoopbackSpec spec;
  spec.name = name;
  spec.racks = {3, 3};
  spec.slots = slots;
  spec.max_running_jobs = 4;
  spec.heartbeat_interval_ms = 500;
  spec.worker_timeout_ms = 5000;
  spec.log_level = log_level;
  spec.extra_cluster_keys = "replication = 3\nblock_size_mb = 64\n";
  spec.extra_tables = fmt::format("[scheduler]\npolicy = \"{}\"\n", policy);
  return spec;
}

RunDir::~RunDir() {
  if (keep_) {
    std::cerr << "kept " << path_.string() << "\n";
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Result<std::filesystem::path> WriteLoopbackConfig(const std::filesystem::path& dir,
                                                  const LoopbackSpec& spec) {
  int computers = 0;
  for (int n : spec.racks) computers += n;
  // The last port is the HTTP API's, unless the spec has an [http] table.
  const int per_computer = spec.worker_metrics ? 3 : 2;
  COPSE_ASSIGN_OR_RETURN(std::vector<uint16_t> ports, net::FreePorts(2 + per_computer * computers));
  std::string http;
  if (spec.extra_tables.find("[http]") == std::string::npos) {
    http = fmt::format("[http]\nport = {}\n", ports.back());
  }
  std::string text = fmt::format(R"([cluster]
name = "{}"
data_root = "{}"
heartbeat_interval_ms = {}
worker_timeout_ms = {}
max_running_jobs = {}
log_level = "{}"
{}
[master]
host = "127.0.0.1"
port = {}
{}{}
)",
                                 spec.name, (dir / "data").string(), spec.heartbeat_interval_ms,
                                 spec.worker_timeout_ms, spec.max_running_jobs, spec.log_level,
                                 spec.extra_cluster_keys, ports[0], http, spec.extra_tables);
  size_t next = 1;
  for (size_t r = 0; r < spec.racks.size(); ++r) {
    text += fmt::format("\n[[racks]]\nname = \"r{}\"\n", r);
    for (int c = 0; c < spec.racks[r]; ++c) {
      text += fmt::format(
          "  [[racks.computers]]\n  name = \"c{}{}\"\n  slots = {}\n  control_port = {}\n"
          "  data_port = {}\n",
          r, c, spec.slots, ports[next], ports[next + 1]);
      if (spec.worker_metrics) text += fmt::format("  metrics_port = {}\n", ports[next + 2]);
      next += static_cast<size_t>(per_computer);
    }
  }
  std::filesystem::path path = dir / "cluster.toml";
  std::ofstream out(path);
  out << text;
  if (!out) return IoError("cannot write " + path.string());
  return path;
}

Result<std::filesystem::path> WriteRunConfig(const std::filesystem::path& source,
                                             const std::filesystem::path& dir,
                                             const std::string& policy, int k) {
  COPSE_ASSIGN_OR_RETURN(ClusterConfig config, LoadClusterConfig(source));
  toml::table t;
  try {
    t = toml::parse_file(source.string());
  } catch (const toml::parse_error& e) {
    return InvalidArgument(fmt::format("{}: {}", source.string(), e.description()));
  }
  // The last port is the HTTP API's.
  COPSE_ASSIGN_OR_RETURN(std::vector<uint16_t> ports,
                         net::FreePorts(2 + 2 * static_cast<int>(config.computers.size())));
  auto table = [&](const char* name) -> toml::table& {
    if (!t[name].is_table()) t.insert_or_assign(name, toml::table{});
    return *t[name].as_table();
  };
  toml::table& cluster = table("cluster");
  cluster.insert_or_assign("data_root", (dir / "data").string());
  cluster.erase("secret_file");
  if (!config.apps_dir.empty()) cluster.insert_or_assign("apps_dir", config.apps_dir.string());
  if (k > 0) cluster.insert_or_assign("max_running_jobs", k);
  toml::table& master = table("master");
  master.insert_or_assign("port", ports[0]);
  master.erase("worker_port_base");
  master.erase("worker_metrics_port_base");
  master.erase("data_dir");
  if (config.http.enabled) table("http").insert_or_assign("port", ports.back());
  if (!policy.empty()) table("scheduler").insert_or_assign("policy", policy);
  toml::array racks;
  size_t next = 1;
  for (const RackConfig& r : config.racks) {
    toml::array computers;
    for (int index : r.computers) {
      const ComputerConfig& c = config.computers[static_cast<size_t>(index)];
      computers.push_back(toml::table{{"name", c.name},
                                      {"slots", c.slots},
                                      {"control_port", ports[next]},
                                      {"data_port", ports[next + 1]}});
      next += 2;
    }
    racks.push_back(toml::table{{"name", r.name}, {"computers", std::move(computers)}});
  }
  t.insert_or_assign("racks", std::move(racks));
  std::filesystem::path path = dir / "cluster.toml";
  std::ofstream out(path);
  out << "# Written by a benchmark from " << source.string() << "\n" << t << "\n";
  out.close();
  if (!out) return IoError("cannot write " + path.string());
  COPSE_RETURN_IF_ERROR(
      LoadClusterConfig(path).status().WithContext("the run's copy of " + source.string()));
  return path;
}

Result<std::string> RunCopse(const std::filesystem::path& bin_dir,
                             const std::filesystem::path& config, std::vector<std::string> args,
                             std::chrono::seconds bound) {
  args.insert(args.begin(), {"--config", config.string()});
  SpawnOptions o;
  o.program = bin_dir / "copse";
  o.args = std::move(args);
  std::string line = "copse";
  for (const std::string& a : o.args) line += " " + a;
  COPSE_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(std::move(o), bound, 1u << 26));
  if (!r.status.ok()) return Internal(fmt::format("{}: {}: {}", line, r.status.ToString(), r.err));
  return r.out;
}

bool PortWasTaken(std::string_view cluster_up_output) {
  return cluster_up_output.find("Address already in use") != std::string_view::npos;
}

Result<std::unique_ptr<LoopbackCluster>> LoopbackCluster::Start(
    const std::filesystem::path& dir, const LoopbackSpec& spec,
    const std::filesystem::path& bin_dir, std::chrono::seconds timeout) {
  return StartWithFreshPorts([&] { return WriteLoopbackConfig(dir, spec); }, bin_dir, false,
                             timeout);
}

Result<std::unique_ptr<LoopbackCluster>> LoopbackCluster::StartWithFreshPorts(
    const std::function<Result<std::filesystem::path>()>& write,
    const std::filesystem::path& bin_dir, bool netns, std::chrono::seconds timeout) {
  for (int attempt = 1;; ++attempt) {
    COPSE_ASSIGN_OR_RETURN(std::filesystem::path path, write());
    Result<std::unique_ptr<LoopbackCluster>> c = StartFrom(path, bin_dir, netns, timeout);
    if (c.ok() || attempt >= kClusterUpTries || !PortWasTaken(c.status().message())) return c;
    std::cerr << "copse cluster up: a port was taken meanwhile; again with other ports\n";
  }
}

Result<std::unique_ptr<LoopbackCluster>> LoopbackCluster::StartFrom(
    const std::filesystem::path& path, const std::filesystem::path& bin_dir, bool netns,
    std::chrono::seconds timeout) {
  COPSE_ASSIGN_OR_RETURN(ClusterConfig config, LoadClusterConfig(path));
  SpawnOptions o;
  o.program = bin_dir / "copse";
  o.args = {"--config", path.string(), "cluster",
            "up",       "--timeout",   std::to_string(timeout.count())};
  if (netns) o.args.push_back("--netns");
  COPSE_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(std::move(o), timeout + timeout));
  std::unique_ptr<LoopbackCluster> c(new LoopbackCluster(bin_dir, path, std::move(config)));
  if (!r.status.ok()) {
    // Whatever did start is stopped by the destructor.
    return Unavailable(
        fmt::format("copse cluster up ({}): {}{}", r.status.ToString(), r.out, r.err));
  }
  return c;
}

LoopbackCluster::~LoopbackCluster() {
  SpawnOptions o;
  o.program = bin_dir_ / "copse";
  o.args = {"--config", config_path_.string(), "cluster", "down"};
  (void)RunProcess(std::move(o), std::chrono::seconds(60));
}

}  // namespace copse::client

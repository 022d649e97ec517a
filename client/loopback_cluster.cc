#include "client/loopback_cluster.h"

#include <fmt/format.h>
#include <stdlib.h>

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
  COPSE_ASSIGN_OR_RETURN(std::vector<uint16_t> ports, net::FreePorts(1 + 2 * computers));
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
{}
)",
                                 spec.name, (dir / "data").string(), spec.heartbeat_interval_ms,
                                 spec.worker_timeout_ms, spec.max_running_jobs, spec.log_level,
                                 spec.extra_cluster_keys, ports[0], spec.extra_tables);
  size_t next = 1;
  for (size_t r = 0; r < spec.racks.size(); ++r) {
    text += fmt::format("\n[[racks]]\nname = \"r{}\"\n", r);
    for (int c = 0; c < spec.racks[r]; ++c) {
      text += fmt::format(
          "  [[racks.computers]]\n  name = \"c{}{}\"\n  slots = {}\n  control_port = {}\n"
          "  data_port = {}\n",
          r, c, spec.slots, ports[next], ports[next + 1]);
      next += 2;
    }
  }
  std::filesystem::path path = dir / "cluster.toml";
  std::ofstream out(path);
  out << text;
  if (!out) return IoError("cannot write " + path.string());
  return path;
}

Result<std::unique_ptr<LoopbackCluster>> LoopbackCluster::Start(
    const std::filesystem::path& dir, const LoopbackSpec& spec,
    const std::filesystem::path& bin_dir, std::chrono::seconds timeout) {
  COPSE_ASSIGN_OR_RETURN(std::filesystem::path path, WriteLoopbackConfig(dir, spec));
  COPSE_ASSIGN_OR_RETURN(ClusterConfig config, LoadClusterConfig(path));
  SpawnOptions o;
  o.program = bin_dir / "copse";
  o.args = {"--config", path.string(), "cluster",
            "up",       "--timeout",   std::to_string(timeout.count())};
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

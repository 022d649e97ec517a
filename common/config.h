// ClusterConfig: the cluster description every Copse process reads from a TOML
// file in cluster-configs/ (docs/design.md §7): racks and computers, the master's
// address, ports and data dirs, replication, admission limit K, the scheduling
// policy with its parameters, the network's bandwidths, and how `copse cluster`
// reaches and installs the hosts.
//
// LoadClusterConfig validates everything; an error names the file, the line,
// the key and what was expected. The format is documented in
// docs/cluster-config.md. Thread-safety: plain data once loaded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "copse/status.h"

namespace copse {

struct ComputerConfig {
  std::string name;
  std::string rack;
  int rack_index = 0;
  // The address the worker listens on and is dialled at: `host` as the
  // config gives it (a DNS name or an address), resolved when loaded.
  std::string host;
  // `host` as the config wrote it: what ssh dials and what is shown.
  std::string host_name;
  int slots = 1;
  uint16_t control_port = 0;
  uint16_t data_port = 0;
  // The worker's Prometheus metrics at http://host:metrics_port/metrics
  // (docs/deploy.md "Metrics"); 0: none.
  uint16_t metrics_port = 0;
  std::filesystem::path data_dir;
};

struct RackConfig {
  std::string name;
  std::vector<int> computers;  // indices into ClusterConfig::computers
};

struct MasterConfig {
  std::string host;       // resolved, as ComputerConfig::host
  std::string host_name;  // as written
  uint16_t port = 0;
  std::filesystem::path data_dir;
};

struct NetworkConfig {
  double computer_link_bps = 1e9;  // each computer's link to its rack switch
  double rack_uplink_bps = 6e9;    // each rack switch's uplink to the core switch
};

// [dfs]: the distributed file system's knobs (docs/dfs.md).
struct DfsConfig {
  // After a computer is declared dead, how long the master waits before it
  // copies the blocks that computer held from their surviving replicas (a
  // worker back within this time costs no copying).
  Duration rereplication_delay{10'000'000};
  // A file being written (or a scratch partition) whose writer has been quiet
  // this long is dropped with its blocks.
  Duration uncommitted_grace{600'000'000};
  // Disk space each worker keeps free: a block write that could cross it
  // fails with "disk full". The master keeps as much free under its data
  // dir for its own metadata: below it, it refuses new jobs and new files
  // ("no space on the master"), and still records what running work does.
  uint64_t reserve_bytes = 100u << 20;
  // How long a master that has just started waits for every computer's
  // worker to register before it places replicas (HDFS's safe mode): files
  // created and blocks allocated meanwhile wait rather than fail, or land
  // on the few computers that came first.
  Duration safe_mode{10'000'000};
  // Whether a worker flushes and syncs a block to disk when it is committed.
  // false (like HDFS): a committed block survives a killed worker process
  // (RocksDB's unsynced write-ahead log), replication covers power loss.
  bool sync_on_close = true;
};

// The min-cost-flow solver of the scheduler and the simulators unless
// [scheduler] solver names another (scheduler/flow/solvers.h): deterministic,
// one solver rather than a race (docs/design.md §5; docs/flow.md "Start here").
// The leaf solver (flow::LeafSspSolver): at 12,500 computers its rounds take
// a fifth to a tenth of `incremental`'s.
// `copse flow` defaults to the fastest from scratch, flow::kDefaultSolver.
inline constexpr const char* kSchedulerSolver = "incremental_leaf";

struct SchedulerConfig {
  std::string policy = "QFP";
  // The min-cost-flow solver of the Quincy policies (scheduler/flow/solvers.h
  // names); the master's [scheduler] solver key.
  std::string solver = kSchedulerSolver;
  // Numeric policy parameters as written in [scheduler]; each policy checks
  // the names it knows (scheduler/), so a typo is reported there.
  std::map<std::string, double> params;
};

// [jobs]: the master's job service (docs/jobs.md).
struct JobsConfig {
  int max_queued = 1000;               // jobs waiting for admission; more are refused
  Duration retention{86'400'000'000};  // finished jobs stay in the job table this long
  int max_vertices = 100'000;          // per job
  // Finished jobs the table keeps, by count and by the bytes of their
  // records; beyond either the oldest are forgotten first.
  int max_finished = 10'000;
  uint64_t max_finished_bytes = 256u << 20;
  // A running job's root that the master has not heard from this long (it
  // hangs, or cannot reach the master) is killed and its job restarts.
  Duration root_timeout{60'000'000};
  // A job whose root was lost this many times fails instead of restarting.
  int max_root_restarts = 5;
};

// [worker]: limits every task a worker runs (docs/jobs.md).
struct WorkerConfig {
  Duration vertex_timeout{86'400'000'000};  // the longest a run may take (a job may ask less)
  uint64_t memory_bytes = 0;                // resident memory per run; 0: no limit
  uint64_t log_bytes = 16u << 20;           // stdout and stderr kept per run
  uint64_t workdir_bytes = 0;               // a run's working directory; 0: no limit
  Duration kill_grace{2'000'000};           // SIGTERM, then SIGKILL after this
  Duration task_retention{3'600'000'000};   // logs and working dirs after the job ended
  uint64_t program_cache_bytes = 1u << 30;  // programs fetched from the program store
};

// [apps]: the program store (docs/sdk.md).
struct AppsConfig {
  uint64_t max_program_bytes = 256u << 20;  // a program (or archive) put
};

// [streaming]: the streaming adapter (docs/sdk.md "Streaming vertices").
struct StreamingConfig {
  uint64_t sort_memory_bytes = 256u << 20;  // records sorted in memory before a spill
  uint64_t max_record_bytes = 1u << 20;     // the longest record a program may write
};

// [http]: the master's read-only HTTP API and dashboard (docs/api.md).
struct HttpConfig {
  bool enabled = true;
  // 127.0.0.1 unless the config names another address, which then requires
  // a token (token_file).
  std::string host = "127.0.0.1";
  // Default: the first port above master.port that no other process of the
  // config uses.
  uint16_t port = 0;
  // A file holding the token clients send as "Authorization: Bearer TOKEN";
  // required when host is not a loopback address. `copse cluster up` creates
  // it when it does not exist yet.
  std::filesystem::path token_file;
  // Threads answering requests; each open connection holds one while it is
  // kept alive (a browser opens up to 6).
  int threads = 8;
  // Names besides `host` (and, on loopback, localhost and 127.0.0.1) that a
  // request's Host header may give: the names this API is reached by. A
  // request naming any other is refused, so a web page cannot reach a
  // loopback API through a DNS name it rebinds to 127.0.0.1.
  std::vector<std::string> allowed_hosts;
  // Whether host is a loopback address (127.0.0.0/8, ::1, localhost).
  bool loopback() const;
};

// [deploy]: how `copse cluster` reaches the hosts of a config whose
// computers are not all on this machine, and where it installs Copse on
// them (docs/cluster-config.md).
struct DeployConfig {
  std::string ssh_user;  // empty: ssh's own choice (~/.ssh/config, $USER)
  uint16_t ssh_port = 22;
  std::vector<std::string> ssh_options;              // more arguments for ssh, e.g. {"-i", "key"}
  std::filesystem::path install_dir = "/opt/copse";  // absolute, the same on every host
  bool systemd = false;                              // daemons run as systemd units
  // Preflight: the largest clock offset a host may have from this machine.
  Duration max_clock_offset{2'000'000};
};

struct ClusterConfig {
  std::filesystem::path source;  // the file this was loaded from
  std::string name;
  std::filesystem::path data_root;
  std::filesystem::path secret_file;
  std::filesystem::path apps_dir;  // where vertex programs are looked up
  int replication = 3;
  int64_t block_size_bytes = 64ll << 20;
  int max_running_jobs = 10;  // admission limit K
  std::string log_level = "info";
  // A daemon's log rotates at this size; this many rotated files are kept.
  uint64_t log_max_bytes = 64u << 20;
  int log_files = 5;
  Duration heartbeat_interval{1'000'000};
  Duration worker_timeout{5'000'000};
  MasterConfig master;
  NetworkConfig network;
  SchedulerConfig scheduler;
  DfsConfig dfs;
  JobsConfig jobs;
  WorkerConfig worker;
  AppsConfig apps;
  StreamingConfig streaming;
  HttpConfig http;
  DeployConfig deploy;
  std::vector<RackConfig> racks;
  std::vector<ComputerConfig> computers;

  // The computer with this name, or nullptr.
  const ComputerConfig* FindComputer(const std::string& name) const;
  int TotalSlots() const;
  // Whether the master and every computer are on this machine (loopback
  // addresses): then `copse cluster` starts them here, without ssh.
  bool AllOnThisMachine() const;
};

// Whether `address` (resolved) is a loopback address: 127.0.0.0/8 or ::1.
bool IsLoopbackAddress(const std::string& address);

// Resolves a config's `host`: an IPv4 or IPv6 address is itself; a name
// becomes its first IPv4 address (else its first IPv6 one), as the system's
// resolver (getaddrinfo: /etc/hosts, then DNS) gives it.
using HostResolver = std::function<Result<std::string>(const std::string& host)>;
Result<std::string> ResolveHost(const std::string& host);

// Reads and validates a cluster config. Relative paths inside the file are
// resolved against the file's directory.
// Host names are resolved with `resolve`.
Result<ClusterConfig> LoadClusterConfig(const std::filesystem::path& path,
                                        const HostResolver& resolve = ResolveHost);

// Same, from text; `origin` names the source in error messages and its parent
// directory anchors relative paths.
Result<ClusterConfig> ParseClusterConfig(const std::string& text,
                                         const std::filesystem::path& origin,
                                         const HostResolver& resolve = ResolveHost);

// The config a command should use: `flag` when given, else $COPSE_CONFIG, else
// cluster-configs/local.toml (docs/design.md §12).
std::filesystem::path ResolveConfigPath(const std::optional<std::string>& flag);

}  // namespace copse

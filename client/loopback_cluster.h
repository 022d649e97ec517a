// A whole cluster on this machine's loopback, on free ports, under a
// directory of the caller's: what the integration tests and the benchmarks
// that bring up their own cluster start. WriteLoopbackConfig writes its
// config (one writer for all of them); LoopbackCluster runs `copse cluster
// up` on it from a build's bin directory and `copse cluster down` when
// destroyed, so the daemons start exactly as a user's do.
// Thread-safety: none needed (free function; one owner per LoopbackCluster).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "copse/status.h"

namespace copse::client {

struct LoopbackSpec {
  std::string name = "loopback";
  std::vector<int> racks = {3, 3};  // computers per rack: rack r<R> holds c<R><I>
  int slots = 1;                    // per computer
  int max_running_jobs = 2;         // K; the master wants it below the total slots
  int heartbeat_interval_ms = 100;
  int worker_timeout_ms = 1000;
  std::string log_level = "debug";
  std::string extra_cluster_keys;  // appended to [cluster]
  std::string extra_tables;        // appended after [master] ([scheduler], [worker], [dfs], ...)
  bool worker_metrics = false;     // each computer gets a metrics_port too
};

// The shape of cluster-configs/local.toml, for the benchmarks that compare
// against it: two racks of three computers with `slots` slots each, K = 4,
// replication 3, 64 MB blocks, heartbeats every 500 ms, the scheduler's
// `policy`.
LoopbackSpec LocalShape(const std::string& name, int slots, const std::string& policy,
                        const std::string& log_level);

// Writes `dir`/cluster.toml with the data root `dir`/data and every port a
// free loopback port. Returns the config's path.
Result<std::filesystem::path> WriteLoopbackConfig(const std::filesystem::path& dir,
                                                  const LoopbackSpec& spec);

// A benchmark's copy of the cluster config at `source`, written to
// `dir`/cluster.toml (its path is returned): data root `dir`/data with the
// secret and every data dir under it, every port a free loopback port, each
// computer listed explicitly with the name, rack and slots `source` gives it,
// apps_dir absolute; [scheduler] policy `policy` and K `k` unless empty / 0.
// Every other setting is `source`'s. Errors name `source`.
Result<std::filesystem::path> WriteRunConfig(const std::filesystem::path& source,
                                             const std::filesystem::path& dir,
                                             const std::string& policy, int k);

// Runs `bin_dir`/copse --config CONFIG ARGS... to its end within `bound`:
// its stdout, or an error carrying how it ended and its stderr.
Result<std::string> RunCopse(const std::filesystem::path& bin_dir,
                             const std::filesystem::path& config, std::vector<std::string> args,
                             std::chrono::seconds bound = std::chrono::seconds(3600));

// A port that WriteLoopbackConfig or WriteRunConfig found free can be taken
// by another process (tests and benchmarks run side by side) before the
// daemon binds it; `copse cluster up` then fails, saying so in its output.
// A cluster is brought up with fresh ports up to kClusterUpTries times in
// all when PortWasTaken(what `cluster up` printed).
inline constexpr int kClusterUpTries = 3;
bool PortWasTaken(std::string_view cluster_up_output);

// The directory of one benchmark run, /tmp/PREFIX-XXXXXX: removed when
// destroyed unless kept (on request, or after a failure, to read the logs),
// its path then printed to stderr. Outlives the LoopbackCluster in it.
class RunDir {
 public:
  static Result<std::unique_ptr<RunDir>> Create(const std::string& prefix, bool keep);
  ~RunDir();
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  void Keep() { keep_ = true; }
  // A failed run: prints "PROGRAM: what failed (logs in DIR)" to stderr,
  // keeps the directory, and returns the exit code 1.
  int Failed(const std::string& program, const Status& s);

 private:
  RunDir(std::filesystem::path path, bool keep) : path_(std::move(path)), keep_(keep) {}
  std::filesystem::path path_;
  bool keep_;
};

class LoopbackCluster {
 public:
  // Writes the config into `dir` and runs `bin_dir`/copse cluster up on it;
  // an error carries what `cluster up` printed.
  static Result<std::unique_ptr<LoopbackCluster>> Start(
      const std::filesystem::path& dir, const LoopbackSpec& spec,
      const std::filesystem::path& bin_dir,
      std::chrono::seconds timeout = std::chrono::seconds(60));
  // `copse cluster up` (with --netns when `netns`) on a config already
  // written, e.g. by WriteRunConfig.
  static Result<std::unique_ptr<LoopbackCluster>> StartFrom(
      const std::filesystem::path& config_path, const std::filesystem::path& bin_dir,
      bool netns = false, std::chrono::seconds timeout = std::chrono::seconds(60));
  // StartFrom on the config `write` writes (with fresh free ports each
  // call; it returns the config's path), written and started again when a
  // port was taken meanwhile (PortWasTaken), kClusterUpTries times in all.
  // Start is this with WriteLoopbackConfig.
  static Result<std::unique_ptr<LoopbackCluster>> StartWithFreshPorts(
      const std::function<Result<std::filesystem::path>()>& write,
      const std::filesystem::path& bin_dir, bool netns = false,
      std::chrono::seconds timeout = std::chrono::seconds(60));
  // `copse cluster down`.
  ~LoopbackCluster();
  LoopbackCluster(const LoopbackCluster&) = delete;
  LoopbackCluster& operator=(const LoopbackCluster&) = delete;

  const ClusterConfig& config() const { return config_; }
  const std::filesystem::path& config_path() const { return config_path_; }

 private:
  LoopbackCluster(std::filesystem::path bin_dir, std::filesystem::path config_path,
                  ClusterConfig config)
      : bin_dir_(std::move(bin_dir)),
        config_path_(std::move(config_path)),
        config_(std::move(config)) {}

  std::filesystem::path bin_dir_;
  std::filesystem::path config_path_;
  ClusterConfig config_;
};

}  // namespace copse::client

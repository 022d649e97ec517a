#include "client/cluster_commands.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "client/cluster_view.h"
#include "client/command.h"
#include "client/launcher.h"
#include "client/master_client.h"
#include "client/netns.h"
#include "client/remote_cluster.h"
#include "client/systemd_units.h"
#include "client/terminal.h"
#include "common/json.h"
#include "common/net/auth.h"
#include "common/process.h"

namespace copse::client {
namespace {

std::filesystem::path PidFilePath(const ClusterConfig& config) {
  return config.data_root / "cluster.pids.json";
}

class Up {
 public:
  // `net`: the emulated network each process starts in (--netns), or null.
  Up(const ClusterConfig& config, const UpOptions& options, const NetnsCluster* net = nullptr)
      : config_(config), options_(options), exe_dir_(ExecutableDir()), net_(net) {}

  int Run() {
    if (Status s = EnsureSecrets(config_); !s.ok()) return Fail(s);
    auto procs = ReadPidFile(PidFilePath(config_));
    if (!procs.ok()) return Fail(procs.status());
    for (ProcessRecord& r : *procs)
      if (IsRunning(r)) procs_.push_back(std::move(r));
    if (!StartMaster()) return 1;
    if (!StartWorkers()) return 1;
    return WaitForWorkers();
  }

 private:
  int Fail(const Status& s) { return ReportFailure("cluster up", Status(s.code(), s.ToString())); }

  const ProcessRecord* Find(const std::string& role, const std::string& computer) const {
    for (const ProcessRecord& r : procs_)
      if (r.role == role && r.computer == computer) return &r;
    return nullptr;
  }

  bool Launch(const std::string& role, const std::string& computer,
              const std::filesystem::path& data_dir, std::vector<std::string> args) {
    std::filesystem::path exe = exe_dir_ / ("copse-" + role);
    if (!std::filesystem::exists(exe)) {
      std::cerr << "copse cluster up: " << exe.string() << " not found beside copse\n";
      return false;
    }
    std::filesystem::path out = data_dir / (role + ".stderr");
    args.insert(args.begin(), {"--config", config_.source.string(), "--quiet"});
    auto pid = net_ ? net_->Spawn(computer, exe, args, out) : Spawn(exe, args, out);
    if (!pid.ok()) {
      std::cerr << "copse cluster up: " << pid.status().ToString() << "\n";
      return false;
    }
    procs_.push_back({role, computer, *pid, exe.string(), (data_dir / (role + ".log")).string()});
    Status s = WritePidFile(PidFilePath(config_), procs_);
    if (!s.ok()) {
      std::cerr << "copse cluster up: " << s.ToString() << "\n";
      return false;
    }
    return true;
  }

  // Reports a process that exited during start-up, with the end of its output.
  void ReportDeath(const ProcessRecord& r) {
    std::filesystem::path dir = std::filesystem::path(r.log).parent_path();
    std::cerr << fmt::format("copse cluster up: {}{} (pid {}) exited during start-up; see {}\n",
                             r.role, r.computer.empty() ? "" : " " + r.computer, r.pid, r.log)
              << Tail(dir / (r.role + ".stderr"), 5);
  }

  bool StartMaster() {
    if (!Find("master", "")) {
      if (!Launch("master", "", config_.master.data_dir, {})) return false;
    }
    const ProcessRecord* master = Find("master", "");
    auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    Status last;
    while (std::chrono::steady_clock::now() < deadline) {
      auto st = FetchStatus(config_);
      if (st.ok()) return true;
      last = st.status();
      if (!IsRunning(*master)) {
        ReportDeath(*master);
        return false;
      }
      // A refusal is final once our master holds the port. Until then it
      // may come from another cluster's daemon on that port while our master
      // is still starting, about to fail to bind it: its own "Address
      // already in use" is what to report (and what makes a loopback
      // cluster try again on other ports).
      if (last.code() == StatusCode::kPermissionDenied &&
          ListensOn(master->pid, config_.master.port)) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::cerr << "copse cluster up: the master did not answer: " << last.ToString() << "\n";
    return false;
  }

  bool StartWorkers() {
    for (const ComputerConfig& c : config_.computers) {
      if (Find("worker", c.name)) continue;
      if (!Launch("worker", c.name, c.data_dir, {"--computer", c.name})) return false;
    }
    return true;
  }

  int WaitForWorkers() {
    auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    Result<ClusterStatus> st = FetchStatus(config_);
    while (std::chrono::steady_clock::now() < deadline) {
      st = FetchStatus(config_);
      if (st.ok() && st->LiveCount() == static_cast<int>(config_.computers.size())) break;
      for (const ProcessRecord& r : procs_) {
        if (!IsRunning(r)) {
          ReportDeath(r);
          return 1;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!st.ok()) return Fail(st.status());
    PrintStatusTable(config_, *st);
    std::cout << "logs: " << (config_.master.data_dir / "master.log").string() << " and "
              << (config_.data_root / "<computer>" / "worker.log").string() << "\n";
    if (config_.http.enabled) {
      std::cout << "dashboard and API: http://" << config_.http.host << ":" << config_.http.port
                << "/ (docs/api.md)\n";
    }
    if (st->LiveCount() != static_cast<int>(config_.computers.size())) {
      std::cerr << "copse cluster up: not every worker registered within "
                << options_.timeout.count() << "s; see the logs above\n";
      return 1;
    }
    std::cout << "the cluster keeps running; stop it with: " << (exe_dir_ / "copse").string()
              << " cluster down --config "
              << (net_ ? net_->state().user_config : config_.source).string() << "\n";
    return 0;
  }

  const ClusterConfig& config_;
  UpOptions options_;
  std::filesystem::path exe_dir_;
  const NetnsCluster* net_;
  std::vector<ProcessRecord> procs_;
};

}  // namespace

namespace {

// Whether the daemons of `config` are reached over ssh: some host is not
// this machine, and the cluster does not run in emulated hosts here
// (`up --netns` replaces a config's hosts with its own).
bool OverSsh(const ClusterConfig& config) {
  if (AllDaemonsHere(config)) return false;
  auto state = ReadNetnsState(config);
  return !(state.ok() && state->has_value());
}

}  // namespace

int ClusterLogs(const ClusterConfig& config, const std::string& who, int lines) {
  std::filesystem::path log;
  if (who == "master") {
    log = config.master.data_dir / "master.log";
  } else if (const ComputerConfig* c = config.FindComputer(who)) {
    log = c->data_dir / "worker.log";
  } else {
    return ReportFailure("cluster logs",
                         InvalidArgument(fmt::format("no computer '{}' in the config of cluster {} "
                                                     "(a computer's name, or master)",
                                                     who, config.name)));
  }
  if (OverSsh(config)) return RemoteLogs(config, who, lines);
  Result<std::string> text = LastLines(log, lines);
  if (!text.ok()) return ReportFailure("cluster logs", text.status());
  std::cout << ForStdout(*text);
  return 0;
}

int ClusterUp(const ClusterConfig& config, const UpOptions& options) {
  if (!options.netns && !AllDaemonsHere(config)) return RemoteUp(config, options);
  auto state = ReadNetnsState(config);
  auto procs = ReadPidFile(PidFilePath(config));
  for (const Status& s : {state.status(), procs.status()}) {
    if (!s.ok()) {
      std::cerr << "copse cluster up: " << s.ToString() << "\n";
      return 1;
    }
  }
  if (!options.netns) {
    if (*state) {
      std::cerr << "copse cluster up: cluster " << config.name
                << " runs in network namespaces (see " << NetnsStatePath(config).string()
                << "); use `copse cluster up --netns`, or `copse cluster down` first\n";
      return 2;
    }
    return Up(config, options).Run();
  }
  bool running = false;
  for (const ProcessRecord& r : *procs) running = running || IsRunning(r);
  auto net = NetnsCluster::Setup(config, running);
  if (!net.ok()) {
    std::cerr << "copse cluster up --netns: " << net.status().ToString() << "\n";
    return net.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (net->created()) {
    std::cout << fmt::format(
        "emulated network {}*: {} namespaces (master in {}), rack uplinks {} Gbit/s, computer "
        "links {} Gbit/s; see {}\n",
        net->state().prefix, net->state().namespaces.size(), net->state().core,
        config.network.rack_uplink_bps / 1e9, config.network.computer_link_bps / 1e9,
        NetnsStatePath(config).string());
  }
  return Up(net->config(), options, &*net).Run();
}

int ClusterDown(const ClusterConfig& config) {
  if (OverSsh(config)) return RemoteDown(config);
  auto procs = ReadPidFile(PidFilePath(config));
  if (!procs.ok()) {
    std::cerr << "copse cluster down: " << procs.status().ToString() << "\n";
    return 1;
  }
  int running = 0;
  for (const ProcessRecord& r : *procs) running += IsRunning(r);
  // Workers first, so the master does not log a wave of deaths for nothing.
  std::vector<ProcessRecord> workers, masters;
  for (const ProcessRecord& r : *procs) (r.role == "master" ? masters : workers).push_back(r);
  int killed = StopProcesses(workers, std::chrono::seconds(10));
  killed += StopProcesses(masters, std::chrono::seconds(10));
  for (const ProcessRecord& r : *procs) {
    if (IsRunning(r)) {
      std::cerr << fmt::format("copse cluster down: {} {} (pid {}) is still running\n", r.role,
                               r.computer, r.pid);
      return 1;
    }
  }
  std::error_code ec;
  std::filesystem::remove(PidFilePath(config), ec);
  std::cout << fmt::format(
      "stopped {} process(es) of cluster {}{}; data dirs kept under {}\n", running, config.name,
      killed ? fmt::format(" ({} needed SIGKILL)", killed) : "", config.data_root.string());
  std::vector<std::string> notes;
  auto removed = TeardownNetns(config, &notes);
  for (const std::string& n : notes) std::cerr << "copse cluster down: " << n << "\n";
  if (!removed.ok()) {
    std::cerr << "copse cluster down: " << removed.status().ToString() << "\n";
    return 1;
  }
  if (*removed > 0) {
    std::cout << fmt::format("removed {} network namespace(s) with their bridges and links\n",
                             *removed);
  }
  return 0;
}

int ClusterRollingRestart(const ClusterConfig& config, const RestartOptions& options) {
  if (OverSsh(config)) return RemoteRollingRestart(config, options);
  std::cerr << "copse cluster restart: every daemon of cluster " << config.name
            << " is on this machine; restart it with `copse cluster down` and `copse cluster up` "
               "(a rolling restart is for a cluster on several hosts: docs/deploy.md)\n";
  return 2;
}

int ClusterHostsStatus(const ClusterConfig& config, bool json) {
  if (OverSsh(config)) return RemoteHostsStatus(config, json);
  auto procs = ReadPidFile(PidFilePath(config));
  if (!procs.ok()) return ReportFailure("cluster status", procs.status());
  nlohmann::json doc = nlohmann::json::array();
  for (const ProcessRecord& r : *procs) {
    doc.push_back(
        {{"role", r.role}, {"computer", r.computer}, {"pid", r.pid}, {"running", IsRunning(r)}});
  }
  if (json) {
    std::cout << DumpJson(nlohmann::json{{"cluster", config.name}, {"this_machine", doc}}, 2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "every daemon of cluster {} is on this machine; as `cluster up` "
      "recorded them in {}:\n",
      config.name, PidFilePath(config).string());
  for (const ProcessRecord& r : *procs) {
    std::cout << fmt::format("  {} {} pid {}: {}\n", r.role, r.computer, r.pid,
                             IsRunning(r) ? "running" : "not running");
  }
  return 0;
}

int ClusterStatusCommand(const ClusterConfig& config, bool json, std::chrono::seconds master_wait) {
  auto st = FetchStatus(config, MasterWait(config, master_wait));
  if (!st.ok())
    return ReportFailure("cluster status",
                         Status(StatusCode::kUnavailable, st.status().ToString()));
  if (json) {
    std::cout << DumpJson(StatusJson(config, *st), 2) << "\n";
  } else {
    PrintStatusTable(config, *st);
  }
  return 0;
}

namespace {

// InvalidArgument (exit 2) naming the computer and the config's computers
// when the config does not name it.
Status CheckComputerNamed(const ClusterConfig& config, const std::string& computer) {
  if (config.FindComputer(computer) != nullptr) return Status::Ok();
  std::string names;
  for (const ComputerConfig& c : config.computers) names += (names.empty() ? "" : ", ") + c.name;
  return InvalidArgument(
      fmt::format("computer '{}' is not in the cluster config {} (its computers: {})",
                  Shown(computer), config.source.string(), names));
}

// A refusal of the master: a computer it does not know is bad input.
Status AsInput(const Status& s) {
  return s.code() == StatusCode::kNotFound ? Status(StatusCode::kInvalidArgument, s.message()) : s;
}

const ComputerStatus* FindStatus(const ClusterStatus& st, const std::string& computer) {
  for (const ComputerStatus& c : st.computers)
    if (c.name == computer) return &c;
  return nullptr;
}

std::string DrainLine(const ComputerStatus& c) {
  std::string line = fmt::format(
      "{}: {} block(s) held nowhere else, {} short of their copies "
      "elsewhere, {} slot(s) busy",
      c.name, c.sole_blocks, c.short_blocks, c.busy_slots);
  if (c.state != "live" && c.sole_blocks > 0) {
    line +=
        fmt::format(" ({}: the blocks only it holds are copied once its worker is back)", c.state);
  }
  return line;
}

}  // namespace

int ClusterDrain(const ClusterConfig& config, const std::string& computer,
                 const DrainOptions& options, std::chrono::seconds master_wait) {
  if (Status named = CheckComputerNamed(config, computer); !named.ok()) {
    return ReportFailure("cluster drain", named);
  }
  auto client = ConnectMaster(config, master_wait);
  if (!client.ok()) return ReportFailure("cluster drain", client.status());
  Result<std::string> warning = (*client)->Drain(computer, true, options.now);
  if (!warning.ok()) return ReportFailure("cluster drain", AsInput(warning.status()));
  if (!warning->empty()) std::cerr << "copse cluster drain: warning: " << Shown(*warning) << "\n";
  std::cout << fmt::format(
      "{} is draining: no new task or replica goes there, its running tasks {}, and its blocks "
      "are copied to other computers\n",
      computer, options.now ? "are moved to other computers" : "finish there");
  if (!options.wait) return 0;
  const auto start = std::chrono::steady_clock::now();
  std::string last;
  for (;;) {
    Result<ClusterStatus> st = (*client)->GetClusterStatus();
    if (!st.ok()) return ReportFailure("cluster drain", st.status());
    const ComputerStatus* c = FindStatus(*st, computer);
    if (c == nullptr) {
      return ReportFailure("cluster drain",
                           Internal("the master's status does not list " + computer));
    }
    if (!c->draining) {
      return ReportFailure(
          "cluster drain",
          FailedPrecondition(computer + " is no longer draining (undrained meanwhile)"));
    }
    std::string line = DrainLine(*c);
    if (c->sole_blocks == 0) {
      std::cout << line << "\n";
      std::cout << fmt::format(
          "{} holds no block that exists nowhere else: it can be stopped{}\n", computer,
          c->busy_slots > 0 && !options.now ? " once its running tasks have finished" : "");
      return 0;
    }
    if (line != last) std::cout << line << "\n" << std::flush;
    last = line;
    if (options.timeout.count() > 0 &&
        std::chrono::steady_clock::now() - start >= options.timeout) {
      return ReportFailure(
          "cluster drain",
          DeadlineExceeded(fmt::format("gave up after {} s: {} still holds {} block(s) that exist "
                                       "nowhere else ({} short of their copies elsewhere); it "
                                       "stays draining",
                                       options.timeout.count(), computer, c->sole_blocks,
                                       c->short_blocks)));
    }
    std::this_thread::sleep_for(options.poll);
  }
}

int ClusterUndrain(const ClusterConfig& config, const std::string& computer,
                   std::chrono::seconds master_wait) {
  if (Status named = CheckComputerNamed(config, computer); !named.ok()) {
    return ReportFailure("cluster undrain", named);
  }
  auto client = ConnectMaster(config, master_wait);
  if (!client.ok()) return ReportFailure("cluster undrain", client.status());
  Result<std::string> done = (*client)->Drain(computer, false, false);
  if (!done.ok()) return ReportFailure("cluster undrain", AsInput(done.status()));
  std::cout << fmt::format("{} is not draining: it takes new tasks and replicas\n", computer);
  return 0;
}

}  // namespace copse::client

namespace copse::client {
namespace {

// Each `cluster` subcommand: its options, kept in an object the commands own
// (they must outlive parsing), and its run.

void AddUpCommand(CLI::App* cluster, Commands& commands) {
  struct Options {
    UpOptions up;
    int timeout_s = 30;
  };
  Options& o = commands.Own<Options>();
  const GlobalOptions& g = commands.global();
  auto* up = cluster->add_subcommand(
      "up", "start the master and every worker of the config (on other hosts over ssh)");
  up->add_option("--timeout", o.timeout_s, "seconds to wait for every worker to register")
      ->check(CLI::Range(1, 3600));
  up->add_flag("--netns", o.up.netns,
               "each computer in its own network namespace, racks joined by tc-shaped links "
               "(root; docs/netns.md)");
  up->fallthrough();
  commands.Add(up, [&o, &g] {
    return WithConfig(g, "", /*enter_netns=*/false, [&](const ClusterConfig& c) {
      o.up.timeout = std::chrono::seconds(o.timeout_s);
      return ClusterUp(c, o.up);
    });
  });
}

void AddDownCommand(CLI::App* cluster, Commands& commands) {
  const GlobalOptions& g = commands.global();
  auto* down = cluster->add_subcommand("down", "stop the processes `cluster up` started");
  down->fallthrough();
  commands.Add(down, [&g] {
    return WithConfig(g, "", /*enter_netns=*/false,
                      [](const ClusterConfig& c) { return ClusterDown(c); });
  });
}

// Writes the unit files into `dir` and says how to install them.
int ClusterUnits(const ClusterConfig& c, const std::string& dir) {
  Result<std::vector<std::filesystem::path>> written = WriteSystemdUnits(c, dir);
  if (!written.ok()) return ReportFailure("cluster units", written.status());
  for (const auto& path : *written) std::cout << Shown(path.string()) << "\n";
  std::cout << "on each host, as root: copy them to /etc/systemd/system, then\n"
            << "  systemctl daemon-reload\n"
            << "  systemctl enable --now " << UnitName(c, "master") << "   (the master's host)\n"
            << "  systemctl enable --now " << UnitName(c, "COMPUTER")
            << "   (each computer's host)\n";
  return 0;
}

void AddUnitsCommand(CLI::App* cluster, Commands& commands) {
  struct Options {
    std::string dir = ".";
  };
  Options& o = commands.Own<Options>();
  const GlobalOptions& g = commands.global();
  auto* units = cluster->add_subcommand(
      "units", "write systemd unit files for the master and for a worker (docs/deploy.md)");
  units->add_option("--out", o.dir, "the directory to write them to")->capture_default_str();
  units->fallthrough();
  commands.Add(units, [&o, &g] {
    return WithConfig(g, "", /*enter_netns=*/false,
                      [&](const ClusterConfig& c) { return ClusterUnits(c, o.dir); });
  });
}

void AddRestartCommand(CLI::App* cluster, Commands& commands) {
  struct Options {
    bool rolling = false;
    RestartOptions restart;
    int timeout_s = 120;
  };
  Options& o = commands.Own<Options>();
  const GlobalOptions& g = commands.global();
  auto* restart = cluster->add_subcommand(
      "restart", "restart the master, then one worker at a time (docs/deploy.md)");
  restart->add_flag("--rolling", o.rolling, "one daemon at a time, jobs keep running (required)")
      ->required();
  restart->add_flag("--install", o.restart.install,
                    "ship the install this copse runs from first (preflight included)");
  restart
      ->add_option("--timeout", o.timeout_s,
                   "seconds for each daemon to come back and the DFS to heal")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  restart->fallthrough();
  commands.Add(restart, [&o, &g] {
    return WithConfig(g, "", /*enter_netns=*/false, [&](const ClusterConfig& c) {
      o.restart.timeout = std::chrono::seconds(o.timeout_s);
      return ClusterRollingRestart(c, o.restart);
    });
  });
}

void AddLogsCommand(CLI::App* cluster, Commands& commands) {
  struct Options {
    std::string who;
    int lines = 50;
  };
  Options& o = commands.Own<Options>();
  const GlobalOptions& g = commands.global();
  auto* logs = cluster->add_subcommand("logs", "the last lines of a daemon's log");
  logs->add_option("who", o.who, "a computer's name, or master")->required();
  logs->add_option("-n,--lines", o.lines, "how many lines")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  logs->fallthrough();
  commands.Add(logs, [&o, &g] {
    return WithConfig(g, "", /*enter_netns=*/false,
                      [&](const ClusterConfig& c) { return ClusterLogs(c, o.who, o.lines); });
  });
}

void AddDrainCommand(CLI::App* cluster, Commands& commands) {
  struct Options {
    std::string computer;
    DrainOptions drain;
    bool no_wait = false;
    int timeout_s = 0;
  };
  Options& o = commands.Own<Options>();
  const GlobalOptions& g = commands.global();
  auto* drain = cluster->add_subcommand(
      "drain",
      "take a computer out: no new work there, its blocks copied elsewhere; returns when it "
      "holds no block that exists nowhere else");
  drain->add_option("computer", o.computer, "the computer's name")->required();
  drain->add_flag("--now", o.drain.now,
                  "move its running tasks to other computers instead of letting them finish");
  drain->add_flag("--no-wait", o.no_wait, "return once the master has begun the drain");
  drain
      ->add_option("--timeout", o.timeout_s,
                   "seconds to wait for its blocks to be copied (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0, 30 * 24 * 3600));
  drain->fallthrough();
  commands.Add(drain, [&o, &g] {
    return WithConfig(g, "", true, [&](const ClusterConfig& c) {
      o.drain.wait = !o.no_wait;
      o.drain.timeout = std::chrono::seconds(o.timeout_s);
      return ClusterDrain(c, o.computer, o.drain, g.master_wait());
    });
  });
}

void AddUndrainCommand(CLI::App* cluster, Commands& commands) {
  std::string& computer = commands.Own<std::string>();
  const GlobalOptions& g = commands.global();
  auto* undrain = cluster->add_subcommand(
      "undrain", "end a drain: the computer takes new tasks and replicas again");
  undrain->add_option("computer", computer, "the computer's name")->required();
  undrain->fallthrough();
  commands.Add(undrain, [&computer, &g] {
    return WithConfig(g, "", true, [&](const ClusterConfig& c) {
      return ClusterUndrain(c, computer, g.master_wait());
    });
  });
}

void AddStatusCommand(CLI::App* cluster, Commands& commands) {
  struct Options {
    bool json = false;
    bool hosts = false;
  };
  Options& o = commands.Own<Options>();
  const GlobalOptions& g = commands.global();
  auto* status = cluster->add_subcommand("status", "each computer's rack, state, slots, heartbeat");
  status->add_flag("--json", o.json, "print one JSON document");
  status->add_flag("--hosts", o.hosts,
                   "what runs on each host, asked over ssh (also when the master is down)");
  status->fallthrough();
  commands.Add(status, [&o, &g] {
    return WithConfig(g, "", !o.hosts, [&](const ClusterConfig& c) {
      if (o.hosts) return ClusterHostsStatus(c, o.json);
      // Whether the cluster is up is answered at once, unless asked to wait.
      return ClusterStatusCommand(c, o.json,
                                  g.master_wait_given ? g.master_wait() : std::chrono::seconds(0));
    });
  });
}

}  // namespace

void AddClusterCommands(CLI::App& app, Commands& commands) {
  auto* cluster = app.add_subcommand("cluster", "start, stop and show a cluster");
  cluster->fallthrough();
  cluster->require_subcommand(1);
  AddUpCommand(cluster, commands);
  AddDownCommand(cluster, commands);
  AddUnitsCommand(cluster, commands);
  AddRestartCommand(cluster, commands);
  AddLogsCommand(cluster, commands);
  AddDrainCommand(cluster, commands);
  AddUndrainCommand(cluster, commands);
  AddStatusCommand(cluster, commands);
}

}  // namespace copse::client

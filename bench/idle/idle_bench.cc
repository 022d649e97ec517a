// copse-bench-idle (`copse bench idle`): what a large cluster on one machine
// costs while it does nothing (docs/deploy.md, "Many computers on one
// host"). It brings up a loopback cluster of --racks x --per-rack computers
// with `copse cluster up` (the time it takes is the first figure), lets it
// sit idle for --idle-seconds, and reports the CPU the master and the
// workers used meanwhile (from /proc/PID/stat, as a share of one core), the
// memory each daemon holds (Rss and Pss from /proc/PID/smaps_rollup), and how
// long `copse cluster status`, the API's cluster document and the dashboard
// page take to answer. Heartbeats and timeouts are the config's defaults
// (500 ms, 5 s), as a user's cluster has them.
#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "client/launcher.h"
#include "client/loopback_cluster.h"
#include "common/json.h"
#include "common/process.h"

namespace copse {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
  int racks = 4;
  int per_rack = 25;
  int idle_seconds = 30;
  int requests = 20;
  // The config's default unless given: what a user's cluster pays.
  int heartbeat_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(ClusterConfig{}.heartbeat_interval)
          .count());
  bool keep = false;
  bool json = false;
};

// utime + stime of `pid`, in clock ticks; -1 when it cannot be read.
int64_t CpuTicks(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return -1;
  const size_t end = stat.rfind(')');
  if (end == std::string::npos) return -1;
  std::istringstream fields(stat.substr(end + 2));
  std::string f;
  int64_t utime = 0, stime = 0;
  // After the name: state is field 3; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoll(f);
    if (i == 15) stime = std::stoll(f);
  }
  return utime + stime;
}

// Rss and Pss of `pid` in KiB.
std::pair<int64_t, int64_t> MemoryKiB(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  int64_t rss = 0, pss = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    int64_t kib = 0;
    words >> key >> kib;
    if (key == "Rss:") rss = kib;
    if (key == "Pss:") pss = kib;
  }
  return {rss, pss};
}

Json Summary(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  return {{"min", v.front()}, {"median", v[v.size() / 2]}, {"max", v.back()}};
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

int Run(const Options& opt) {
  const std::string program = "copse-bench-idle";
  auto run_dir = client::RunDir::Create(program, opt.keep);
  if (!run_dir.ok()) {
    std::cerr << program << ": " << run_dir.status().ToString() << "\n";
    return 1;
  }
  auto fail = [&](const Status& s) { return (*run_dir)->Failed(program, s); };
  const std::filesystem::path bin = ExecutableDir();
  client::LoopbackSpec spec;
  spec.name = "bench-idle";
  spec.racks.assign(static_cast<size_t>(opt.racks), opt.per_rack);
  spec.max_running_jobs = 2;
  spec.heartbeat_interval_ms = opt.heartbeat_ms;
  spec.worker_timeout_ms = 5000;
  spec.log_level = "info";
  const int computers = opt.racks * opt.per_rack;
  const auto t0 = Clock::now();
  auto cluster =
      client::LoopbackCluster::Start((*run_dir)->path(), spec, bin, std::chrono::seconds(300));
  if (!cluster.ok()) return fail(cluster.status());
  const double up_s = Ms(Clock::now() - t0) / 1000;
  const ClusterConfig& config = (*cluster)->config();

  auto procs = client::ReadPidFile(config.data_root / "cluster.pids.json");
  if (!procs.ok()) return fail(procs.status());
  int master = 0;
  std::vector<int> workers;
  for (const client::ProcessRecord& r : *procs) {
    if (r.role == "master") master = r.pid;
    if (r.role == "worker") workers.push_back(r.pid);
  }
  if (master == 0 || static_cast<int>(workers.size()) != computers)
    return fail(Internal(fmt::format("{} workers recorded of {}", workers.size(), computers)));

  // Idle: the CPU every daemon uses meanwhile.
  std::this_thread::sleep_for(std::chrono::seconds(2));  // past start-up
  const int64_t m0 = CpuTicks(master);
  int64_t w0 = 0;
  for (int pid : workers) w0 += CpuTicks(pid);
  const auto idle_start = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(opt.idle_seconds));
  const double idle_s = Ms(Clock::now() - idle_start) / 1000;
  const int64_t m1 = CpuTicks(master);
  int64_t w1 = 0;
  for (int pid : workers) w1 += CpuTicks(pid);
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double master_core = static_cast<double>(m1 - m0) / ticks / idle_s;
  const double workers_core = static_cast<double>(w1 - w0) / ticks / idle_s;

  std::vector<double> rss, pss;
  for (int pid : workers) {
    auto [r, p] = MemoryKiB(pid);
    rss.push_back(static_cast<double>(r) / 1024);
    pss.push_back(static_cast<double>(p) / 1024);
  }
  auto [master_rss, master_pss] = MemoryKiB(master);

  // What a user looks at: the status command, the API's cluster document,
  // the dashboard's page.
  std::vector<double> status_ms, api_ms, page_ms;
  httplib::Client http(config.http.host, config.http.port);
  int bad = 0;
  for (int i = 0; i < opt.requests; ++i) {
    auto s0 = Clock::now();
    auto st = client::RunCopse(bin, (*cluster)->config_path(), {"cluster", "status", "--json"},
                               std::chrono::seconds(60));
    if (st.ok()) {
      status_ms.push_back(Ms(Clock::now() - s0));
    } else {
      ++bad;
    }
    for (auto [path, out] :
         {std::make_pair("/api/v1/cluster", &api_ms), std::make_pair("/", &page_ms)}) {
      auto h0 = Clock::now();
      auto r = http.Get(path);
      if (r && r->status == 200) {
        out->push_back(Ms(Clock::now() - h0));
      } else {
        ++bad;
      }
    }
  }
  Json out = {{"computers", computers},
              {"racks", opt.racks},
              {"heartbeat_interval_ms", opt.heartbeat_ms},
              {"cluster_up_s", up_s},
              {"idle_s", idle_s},
              {"master_cpu_share_of_a_core", master_core},
              {"workers_cpu_share_of_a_core", workers_core},
              {"worker_cpu_share_of_a_core_each", workers_core / computers},
              {"master_rss_mib", static_cast<double>(master_rss) / 1024},
              {"master_pss_mib", static_cast<double>(master_pss) / 1024},
              {"worker_rss_mib", Summary(rss)},
              {"worker_pss_mib", Summary(pss)},
              {"cluster_status_ms", Summary(status_ms)},
              {"api_cluster_ms", Summary(api_ms)},
              {"dashboard_page_ms", Summary(page_ms)},
              {"failed_requests", bad}};
  if (opt.json) {
    std::cout << DumpJson(out, 2) << "\n";
  } else {
    std::cout << fmt::format(
        "{} computers in {} racks, a heartbeat every {} ms: cluster up in {:.1f} s\n"
        "idle {:.0f} s: master {:.1f}% of a core, all workers {:.1f}% ({:.2f}% each)\n"
        "memory: master Rss {:.1f} MiB; a worker Rss median {:.1f} MiB, Pss median {:.1f} MiB\n"
        "answers (median ms): cluster status {:.0f}, API cluster document {:.1f}, dashboard page "
        "{:.1f}; {} failed\n",
        computers, opt.racks, opt.heartbeat_ms, up_s, idle_s, 100 * master_core, 100 * workers_core,
        100 * workers_core / computers, static_cast<double>(master_rss) / 1024,
        rss.empty() ? 0.0 : out["worker_rss_mib"]["median"].get<double>(),
        pss.empty() ? 0.0 : out["worker_pss_mib"]["median"].get<double>(),
        status_ms.empty() ? 0.0 : out["cluster_status_ms"]["median"].get<double>(),
        api_ms.empty() ? 0.0 : out["api_cluster_ms"]["median"].get<double>(),
        page_ms.empty() ? 0.0 : out["dashboard_page_ms"]["median"].get<double>(), bad);
  }
  return bad == 0 ? 0 : 1;
}

}  // namespace
}  // namespace copse

int main(int argc, char** argv) {
  copse::Options opt;
  CLI::App app{"copse-bench-idle: what an idle cluster of many computers on this machine costs"};
  app.add_option("--racks", opt.racks, "racks")->capture_default_str()->check(CLI::Range(1, 254));
  app.add_option("--per-rack", opt.per_rack, "computers per rack")
      ->capture_default_str()
      ->check(CLI::Range(1, 254));
  app.add_option("--idle-seconds", opt.idle_seconds, "how long it sits idle while measured")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--requests", opt.requests, "status, API and page requests each")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--heartbeat-ms", opt.heartbeat_ms,
                 "the workers' heartbeat interval (heartbeat_interval_ms; below the 5 s timeout)")
      ->capture_default_str()
      ->check(CLI::Range(10, 4999));
  app.add_flag("--keep", opt.keep, "keep the run's directory");
  app.add_flag("--json", opt.json, "print one JSON document");
  CLI11_PARSE(app, argc, argv);
  return copse::Run(opt);
}

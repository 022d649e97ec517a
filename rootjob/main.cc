// copse-rootjob: a job's root task (rootjob/root_task.h). A worker starts it
// in a slot like any task:
//   copse-rootjob TASK_JSON
// where TASK_JSON is the worker's descriptor (job, incarnation, task,
// computer, config) and descriptor 3 holds the cluster secret. It logs to
// stderr (the task's log) and exits 0 once the master recorded the job's end.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/config.h"
#include "common/log.h"
#include "common/net/auth.h"
#include "common/net/guard.h"
#include "dfs/client.h"
#include "rootjob/root_task.h"

namespace {

int Fail(const std::string& why) {
  std::cerr << "copse-rootjob: " << why << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return Fail("usage: copse-rootjob TASK_JSON (started by a worker)");
  copse::LogOptions log;
  log.process = "root";
  if (const char* level = std::getenv("COPSE_ROOT_LOG_LEVEL")) log.level = level;
  if (copse::Status s = copse::InitLogging(log); !s.ok()) return Fail(s.ToString());
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json d = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!d.is_object()) return Fail(std::string("cannot read the task descriptor ") + argv[1]);
  copse::rootjob::RootOptions o;
  std::string config_path;
  int secret_fd = -1;
  try {
    o.job = d.at("job").get<uint64_t>();
    o.incarnation = d.at("incarnation").get<uint32_t>();
    o.task = d.at("task").get<uint64_t>();
    o.computer = d.at("computer").get<std::string>();
    config_path = d.at("config").get<std::string>();
    secret_fd = d.at("secret_fd").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return Fail(std::string("bad task descriptor: ") + e.what());
  }
  auto secret = copse::net::ReadSecretFd(secret_fd);
  if (!secret.ok()) return Fail(secret.status().ToString());
  auto config = copse::LoadClusterConfig(config_path);
  if (!config.ok()) return Fail(config.status().ToString());
  copse::dfs::DfsClientOptions dopt;
  dopt.computer = o.computer;
  auto dfs = copse::dfs::DfsClient::Connect(*config, *secret, dopt);
  if (!dfs.ok()) return Fail(dfs.status().ToString());
  spdlog::info("root of job {} (incarnation {}, task {}) on {}", o.job, o.incarnation, o.task,
               o.computer);
  asio::io_context io;
  copse::SteadyClock clock;
  copse::rootjob::RootTask root(io, *config, *secret, o, clock, std::move(*dfs));
  root.Start();
  // The master's messages are requests from outside, handled inside
  // RootTask's guards; anything that escapes to here is a fault in the
  // root's own state: it stops, and the master restarts the job.
  copse::net::GuardState("running the root", [&] { io.run(); });
  return root.exit_code();
}

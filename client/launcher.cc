#include "client/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/exec_argv.h"
#include "common/process.h"

extern char** environ;

namespace copse::client {
namespace {

std::string ReadSmallFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Result<std::vector<ProcessRecord>> ReadPidFile(const std::filesystem::path& path) {
  std::vector<ProcessRecord> out;
  if (!std::filesystem::exists(path)) return out;
  try {
    auto j = nlohmann::json::parse(ReadSmallFile(path));
    for (const auto& p : j.at("processes")) {
      ProcessRecord r;
      r.role = p.at("role").get<std::string>();
      r.computer = p.value("computer", "");
      r.pid = p.at("pid").get<int>();
      r.exe = p.at("exe").get<std::string>();
      r.log = p.value("log", "");
      out.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception& e) {
    return Corruption(
        fmt::format("{}: damaged pid file ({}); check for leftover copse processes "
                    "with `pgrep -a copse-` and remove the file",
                    path.string(), e.what()));
  }
  return out;
}

Status WritePidFile(const std::filesystem::path& path, const std::vector<ProcessRecord>& procs) {
  nlohmann::json j;
  j["processes"] = nlohmann::json::array();
  for (const ProcessRecord& r : procs) {
    j["processes"].push_back({{"role", r.role},
                              {"computer", r.computer},
                              {"pid", r.pid},
                              {"exe", r.exe},
                              {"log", r.log}});
  }
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out) return IoError(fmt::format("cannot write {}", tmp.string()));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return IoError(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  return Status::Ok();
}

bool IsRunning(const ProcessRecord& rec) {
  if (rec.pid <= 0) return false;
  // A process still tearing down its threads holds its files and locks: it is
  // running until the last thread is gone.
  if (!ProcessAlive(rec.pid)) return false;
  std::filesystem::path proc = fmt::format("/proc/{}", rec.pid);
  std::error_code ec;
  auto exe = std::filesystem::read_symlink(proc / "exe", ec);
  if (ec) {
    // Not ours to inspect: compare the command line instead.
    std::string cmdline = ReadSmallFile(proc / "cmdline");
    std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
    return std::filesystem::path(argv0).filename() == std::filesystem::path(rec.exe).filename();
  }
  // A rebuilt executable shows as "path (deleted)" for processes started before.
  std::string exe_s = exe.string();
  const std::string deleted = " (deleted)";
  if (exe_s.size() > deleted.size() && exe_s.ends_with(deleted)) {
    exe_s.resize(exe_s.size() - deleted.size());
  }
  return exe_s == rec.exe;
}

Result<int> Spawn(const std::filesystem::path& exe, const std::vector<std::string>& args,
                  const std::filesystem::path& output) {
  std::error_code ec;
  std::filesystem::create_directories(output.parent_path(), ec);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // no inherited sockets or pipes
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  std::vector<std::string> argv_s;
  argv_s.push_back(exe.string());
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = ExecArgv(argv_s);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return IoError(fmt::format("cannot start {}: {}", exe.string(), std::strerror(rc)));
  }
  return static_cast<int>(pid);
}

int StopProcesses(const std::vector<ProcessRecord>& procs, std::chrono::milliseconds grace) {
  std::vector<const ProcessRecord*> running;
  for (const ProcessRecord& r : procs) {
    if (IsRunning(r) && ::kill(r.pid, SIGTERM) == 0) running.push_back(&r);
  }
  auto deadline = std::chrono::steady_clock::now() + grace;
  auto any_left = [&] {
    for (const ProcessRecord* r : running)
      if (IsRunning(*r)) return true;
    return false;
  };
  while (any_left() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int killed = 0;
  for (const ProcessRecord* r : running) {
    if (IsRunning(*r) && ::kill(r->pid, SIGKILL) == 0) ++killed;
  }
  auto kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (killed > 0 && any_left() && std::chrono::steady_clock::now() < kill_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return killed;
}

std::filesystem::path SelfDir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : self.parent_path();
}

}  // namespace copse::client

#include "client/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/json.h"
#include "common/process.h"
#include "common/subprocess.h"

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
    out << DumpJson(j, 2) << "\n";
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
  SpawnOptions o;
  o.program = exe;
  o.args = args;
  o.out = SpawnOptions::Output::kFile;
  o.out_file = output;
  o.err_to_out = true;
  o.new_session = true;  // `cluster down` signals it; it outlives this command
  asio::io_context io;
  COPSE_ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> p, Subprocess::Spawn(io, std::move(o)));
  p->Detach();
  return p->pid();
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

}  // namespace copse::client

#include "client/program_commands.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "client/command.h"
#include "client/fs_commands.h"
#include "client/master_client.h"
#include "client/terminal.h"
#include "common/archive.h"
#include "common/json.h"
#include "common/program_name.h"
#include "common/sha256.h"
#include "dfs/client.h"

namespace copse::client {
namespace {

using Json = nlohmann::json;

int FailApp(const std::string& what, const Status& s) {
  return ReportFailure("app " + what, Status(s.code(), s.message()));
}

bool IsTar(const std::string& file) {
  return file.size() > 4 && file.compare(file.size() - 4, 4, ".tar") == 0;
}

// What kind of program `file` is, checked before anything is uploaded:
// a .tar must unpack (as a worker will unpack it) and hold its entry point.
Status CheckProgramFile(const std::string& file, const std::string& entry, uint64_t max_bytes,
                        bool* executable) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    return NotFound(fmt::format("cannot read {}: {}", file, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgument(file + " is not a regular file");
  *executable = (st.st_mode & S_IXUSR) != 0;
  if (!IsTar(file)) return Status::Ok();
  char tmpl[] = "/tmp/copse-app-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return IoError("cannot make a temporary directory");
  std::filesystem::path dir(tmpl);
  Result<uint64_t> n = ExtractTar(file, dir, max_bytes);
  Status s = n.ok() ? Status::Ok() : n.status().WithContext(file);
  if (s.ok()) {
    std::filesystem::path e = dir / entry;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(e, ec)) {
      s =
          InvalidArgument(fmt::format("{} holds no file '{}' to run (give the entry point with "
                                      "--entry)",
                                      file, entry));
    } else if (::access(e.c_str(), X_OK) != 0) {
      s = InvalidArgument(fmt::format("{}: its entry point '{}' is not executable", file, entry));
    }
  }
  std::error_code ec;
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(dir, ec);
  *executable = true;
  return s;
}

// Writes `file` as the DFS file `path` (one partition), returning its SHA-256.
Result<std::string> Upload(const ClusterConfig& config, const AppPutOptions& o,
                           const std::string& path, uint64_t size) {
  COPSE_ASSIGN_OR_RETURN(auto dfs, ConnectDfs(config, o.computer, o.master_wait));
  dfs::CreateOptions co;
  co.partitions = 1;
  co.replication = config.replication;
  co.program_store = true;
  COPSE_RETURN_IF_ERROR(dfs->Create(path, co));
  COPSE_RETURN_IF_ERROR(dfs->BeginPartition(0));
  std::ifstream in(o.file, std::ios::binary);
  Sha256 hash;
  std::string buf(1 << 20, '\0');
  uint64_t sent = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    size_t n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    hash.Update(std::string_view(buf.data(), n));
    Status s =
        dfs->Append(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(buf.data()), n));
    if (!s.ok()) {
      (void)dfs->Abandon();
      return s;
    }
    sent += n;
  }
  if (sent != size) {
    (void)dfs->Abandon();
    return IoError(
        fmt::format("{} changed while it was read ({} bytes, then {})", o.file, size, sent));
  }
  COPSE_RETURN_IF_ERROR(dfs->EndPartition().status());
  return hash.HexDigest();
}

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

}  // namespace

int AppPut(const ClusterConfig& config, const AppPutOptions& o) {
  bool executable = false;
  std::string entry = o.entry.empty() && IsTar(o.file) ? o.name : o.entry;
  if (!o.entry.empty() && !IsTar(o.file)) {
    return FailApp("put", InvalidArgument("--entry goes with a .tar archive"));
  }
  Status s = CheckProgramFile(o.file, entry, config.apps.max_program_bytes, &executable);
  if (!s.ok()) return FailApp("put", s);
  if (!executable) {
    std::cerr << fmt::format(
        "copse app put: warning: {} has no execute bit: runs of it will fail (chmod +x it and "
        "put it again)\n",
        Shown(o.file));
  }
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(o.file, ec);
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return FailApp("put", master.status());
  MasterClient::AppPutRequest req;
  req.name = o.name;
  req.version = o.version;
  req.size = size;
  req.entry = entry;
  req.shadow = o.shadow;
  req.executable = executable;
  auto prepared = (*master)->AppPut(req);
  if (!prepared.ok()) return FailApp("put", prepared.status());
  Result<Json> record = ParseJson(*prepared, "the master's answer");
  if (!record.ok()) return FailApp("put", record.status());
  req.version = record->value("version", "");
  const std::string path = record->value("path", "");
  Result<std::string> sha = Upload(config, o, path, size);
  if (!sha.ok()) return FailApp("put", sha.status().WithContext("uploading " + o.file));
  req.sha256 = *sha;
  req.commit = true;
  auto committed = (*master)->AppPut(req);
  if (!committed.ok()) return FailApp("put", committed.status());
  if (o.json) {
    std::cout << *committed << "\n";
  } else {
    std::cout << fmt::format("{}@{}: {} bytes, sha256 {}{}\n", o.name, req.version, size, *sha,
                             entry.empty() ? "" : ", runs " + entry);
  }
  return 0;
}

int AppList(const ClusterConfig& config, const AppListOptions& o) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return FailApp(o.name.empty() ? "ls" : "show", master.status());
  auto doc = (*master)->AppList(o.name);
  if (!doc.ok()) return FailApp(o.name.empty() ? "ls" : "show", doc.status());
  if (o.json) {
    std::cout << *doc << "\n";
    return 0;
  }
  Result<Json> j = ParseJson(*doc, "the master's answer");
  if (!j.ok()) return FailApp("ls", j.status());
  const Json& programs = (*j)["programs"];
  if (!o.name.empty() && programs.empty()) {
    return FailApp("show", NotFound(fmt::format("no program '{}' in the store", Shown(o.name))));
  }
  if (o.name.empty()) {
    std::cout << fmt::format("{:<24} {:<10} {:>12}  {:<12}  {:<20}  {}\n", "NAME", "VERSION",
                             "BYTES", "SHA256", "PUT", "ENTRY");
    for (const Json& p : programs) {
      std::cout << fmt::format("{:<24} {:<10} {:>12}  {:<12}  {:<20}  {}\n",
                               Shown(p.value("name", "")), Shown(p.value("version", "")),
                               p.value("size", uint64_t{0}), Short(p.value("sha256", "")),
                               p.value("put", ""), Shown(p.value("entry", "")));
    }
    return 0;
  }
  for (const Json& p : programs) {
    std::cout << fmt::format("{}@{}\n  sha256     {}\n  bytes      {}\n  put        {}\n",
                             Shown(p.value("name", "")), Shown(p.value("version", "")),
                             p.value("sha256", ""), p.value("size", uint64_t{0}),
                             p.value("put", ""));
    if (!p.value("entry", "").empty()) {
      std::cout << "  entry      " << Shown(p.value("entry", "")) << "\n";
    }
    if (p.value("shadow", false)) std::cout << "  shadows    the apps directory's program\n";
    std::cout << "  path       " << Shown(p.value("path", "")) << "\n";
  }
  return 0;
}

int AppRemove(const ClusterConfig& config, const AppRemoveOptions& o) {
  auto master = ConnectMaster(config, o.master_wait);
  if (!master.ok()) return FailApp("rm", master.status());
  size_t at = o.program.find('@');
  std::string name = o.program.substr(0, at);
  std::string version = at == std::string::npos ? "" : o.program.substr(at + 1);
  if (!ValidProgramName(name) || (at != std::string::npos && !ValidProgramVersion(version))) {
    return FailApp("rm", InvalidArgument(fmt::format(
                             "'{}' is not NAME or NAME@VERSION (to remove every version, give NAME "
                             "alone)",
                             Shown(o.program))));
  }
  auto doc = (*master)->AppRemove(name, version);
  if (!doc.ok()) return FailApp("rm", doc.status());
  Result<Json> j = ParseJson(*doc, "the master's answer");
  if (!j.ok()) return FailApp("rm", j.status());
  for (const Json& p : (*j)["removed"]) {
    std::cout << fmt::format("removed {}@{}\n", Shown(p.value("name", "")),
                             Shown(p.value("version", "")));
  }
  return 0;
}

}  // namespace copse::client

namespace copse::client {

void AddAppCommands(CLI::App& app, Commands& commands) {
  struct Options {
    AppPutOptions put;
    AppListOptions list;
    AppRemoveOptions rm;
  };
  Options& o = commands.Own<Options>();
  const GlobalOptions& g = commands.global();
  auto* apps = app.add_subcommand(
      "app", "the program store: programs shipped through the DFS (docs/sdk.md)");
  apps->require_subcommand(1);
  apps->fallthrough();
  auto* put = apps->add_subcommand(
      "put", "store a program (an executable, or a .tar of a directory) as NAME@VERSION");
  put->add_option("NAME", o.put.name, "the program's name")->required();
  put->add_option("FILE", o.put.file, "the executable or .tar archive")->required();
  put->add_option("--version", o.put.version, "its version (default: the next whole number)");
  put->add_option("--entry", o.put.entry,
                  "a .tar archive's program, a path inside it (default: NAME at its top)");
  put->add_flag("--shadow", o.put.shadow,
                "take the place of the apps directory's program of this name");
  put->add_flag("--json", o.put.json, "print the stored program's record as JSON");
  put->add_option("--computer", o.put.computer,
                  "the computer this runs on (default: outside the cluster)");
  put->fallthrough();
  commands.Add(put, [&o, &g] {
    o.put.master_wait = g.master_wait();
    return WithConfig(g, o.put.computer, true,
                      [&](const ClusterConfig& c) { return AppPut(c, o.put); });
  });
  auto* ls = apps->add_subcommand("ls", "every stored program and version");
  ls->add_flag("--json", o.list.json, "print one JSON document");
  ls->fallthrough();
  commands.Add(ls, [&o, &g] {
    o.list.master_wait = g.master_wait();
    o.list.name.clear();
    return WithConfig(g, "", true, [&](const ClusterConfig& c) { return AppList(c, o.list); });
  });
  auto* show = apps->add_subcommand("show", "a stored program's versions");
  show->add_option("NAME", o.list.name, "the program's name")->required();
  show->add_flag("--json", o.list.json, "print one JSON document");
  show->fallthrough();
  commands.Add(show, [&o, &g] {
    o.list.master_wait = g.master_wait();
    return WithConfig(g, "", true, [&](const ClusterConfig& c) { return AppList(c, o.list); });
  });
  auto* rm = apps->add_subcommand(
      "rm", "remove NAME@VERSION, or every version of NAME (refused while a job uses it)");
  rm->add_option("PROGRAM", o.rm.program, "NAME or NAME@VERSION")->required();
  rm->fallthrough();
  commands.Add(rm, [&o, &g] {
    o.rm.master_wait = g.master_wait();
    return WithConfig(g, "", true, [&](const ClusterConfig& c) { return AppRemove(c, o.rm); });
  });
}

}  // namespace copse::client

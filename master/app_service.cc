#include "master/app_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/program_name.h"
#include "common/text.h"

namespace copse::master {
namespace {

using Json = nlohmann::json;

std::string Key(const std::string& name, const std::string& version) {
  return "app/" + name + "/" + version;
}

Json ToJson(const AppRecord& r) {
  return {{"name", r.name},   {"version", r.version}, {"sha256", r.sha256}, {"size", r.size},
          {"entry", r.entry}, {"put_ms", r.put_ms},   {"seq", r.seq},       {"shadow", r.shadow},
          {"executable", r.executable}};
}

Result<AppRecord> FromJson(const std::string& text) {
  COPSE_ASSIGN_OR_RETURN(Json j, ParseJson(text, "a program record"));
  AppRecord r;
  try {
    r.name = j.at("name").get<std::string>();
    r.version = j.at("version").get<std::string>();
    r.sha256 = j.at("sha256").get<std::string>();
    r.size = j.at("size").get<uint64_t>();
    r.entry = j.value("entry", "");
    r.put_ms = j.value("put_ms", int64_t{0});
    r.seq = j.value("seq", uint64_t{0});
    r.shadow = j.value("shadow", false);
    r.executable = j.value("executable", true);
  } catch (const Json::exception& e) {
    return Corruption(std::string("a program record: ") + e.what());
  }
  return r;
}

bool ValidSha256(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// An entry point inside an archive: a relative path of plain components.
bool ValidEntry(std::string_view e) {
  if (e.empty() || e.size() > 256 || e.front() == '/' || !IsValidUtf8(e)) return false;
  size_t start = 0;
  while (start <= e.size()) {
    size_t end = e.find('/', start);
    if (end == std::string_view::npos) end = e.size();
    std::string_view part = e.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (unsigned char c : part) {
      if (c < 0x20 || c == 0x7f) return false;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace

bool ValidAppVersion(std::string_view v) { return ValidProgramVersion(v); }

Status SplitProgram(std::string_view program, std::string* name, std::string* version) {
  size_t at = program.find('@');
  std::string_view n = program.substr(0, at);
  std::string_view v = at == std::string_view::npos ? std::string_view() : program.substr(at + 1);
  if (!ValidProgramName(n)) {
    return InvalidArgument(fmt::format(
        "'{}' is not a program name (a lower-case letter, then up to 63 of a-z, 0-9, '-', '_')",
        EscapeForLog(Excerpt(n))));
  }
  if (at != std::string_view::npos && !ValidAppVersion(v)) {
    return InvalidArgument(fmt::format(
        "'{}' is not a version (1 to 32 of A-Z, a-z, 0-9, '.', '_', '-'; not starting with '.' "
        "or '-')",
        EscapeForLog(Excerpt(v))));
  }
  *name = std::string(n);
  *version = std::string(v);
  return Status::Ok();
}

std::string AppRecord::path() const {
  return std::string(dfs::kAppsRoot) + "/" + name + "/" + version;
}

ProgramRef AppRecord::Ref() const {
  ProgramRef p;
  p.name = name + "@" + version;
  p.sha256 = sha256;
  p.path = path();
  p.size = size;
  p.entry = entry;
  p.executable = executable;
  return p;
}

AppService::AppService(dfs::MetaStore& store, AppFiles& files, const Clock& wall, Options options)
    : store_(store), files_(files), wall_(wall), options_(std::move(options)) {}

Status AppService::Load() {
  COPSE_ASSIGN_OR_RETURN(dfs::MetaStore::Entries entries, store_.Scan("app/"));
  for (const auto& [key, value] : entries) {
    Result<AppRecord> r = FromJson(value);
    if (!r.ok()) {
      // One unreadable record does not take the store down; it is named.
      spdlog::error("program store: {} is unreadable, left out: {}", EscapeForLog(key),
                    r.status().ToString());
      continue;
    }
    next_seq_ = std::max(next_seq_, r->seq + 1);
    apps_[r->name][r->version] = std::move(*r);
  }
  return Status::Ok();
}

bool AppService::InAppsDir(const std::string& name) const {
  if (!ValidProgramName(name) || options_.apps_dir.empty()) return false;
  std::filesystem::path p = options_.apps_dir / name;
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::string AppService::NextVersion(const std::string& name) const {
  uint64_t top = 0;
  auto count = [&top](const std::string& v) {
    if (!v.empty() && v.size() < 19 &&
        std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      top = std::max<uint64_t>(top, std::stoull(v));
    }
  };
  if (auto it = apps_.find(name); it != apps_.end()) {
    for (const auto& [v, r] : it->second) count(v);
  }
  for (const auto& [key, when] : reserved_) {
    if (key.first == name) count(key.second);
  }
  return std::to_string(top + 1);
}

Status AppService::CheckPut(const AppPut& put) const {
  std::string name, version;
  COPSE_RETURN_IF_ERROR(SplitProgram(put.name, &name, &version).WithContext("app put"));
  if (!version.empty()) {
    return InvalidArgument(
        fmt::format("app put: give the version with --version, not in the name ('{}')", put.name));
  }
  if (!put.version.empty() && !ValidAppVersion(put.version)) {
    return InvalidArgument(fmt::format(
        "app put: '{}' is not a version (1 to 32 of A-Z, a-z, 0-9, '.', '_', '-'; not starting "
        "with '.' or '-')",
        EscapeForLog(Excerpt(put.version))));
  }
  if (put.size == 0) return InvalidArgument("app put: the program is empty");
  if (put.size > options_.max_bytes) {
    return InvalidArgument(fmt::format(
        "app put: the program is {} bytes, over the limit of {} ([apps] max_program_mb)", put.size,
        options_.max_bytes));
  }
  if (!put.entry.empty() && !ValidEntry(put.entry)) {
    return InvalidArgument(fmt::format(
        "app put: the entry point '{}' is not a relative path of plain names inside the archive",
        EscapeForLog(Excerpt(put.entry))));
  }
  if (InAppsDir(put.name) && !put.shadow) {
    return AlreadyExists(fmt::format(
        "app put: '{}' is a program of the cluster's apps directory {}; give --shadow to put one "
        "that jobs submitted from now on run instead",
        put.name, options_.apps_dir.string()));
  }
  return Status::Ok();
}

Result<AppRecord> AppService::Prepare(const AppPut& put) {
  COPSE_RETURN_IF_ERROR(CheckPut(put));
  const Timestamp now = wall_.Now();
  for (auto it = reserved_.begin(); it != reserved_.end();) {
    it = now - it->second > kReservation ? reserved_.erase(it) : std::next(it);
  }
  AppRecord r;
  r.name = put.name;
  r.version = put.version.empty() ? NextVersion(put.name) : put.version;
  auto it = apps_.find(r.name);
  if (it != apps_.end() && it->second.count(r.version) != 0) {
    return AlreadyExists(fmt::format(
        "app put: {}@{} exists already (a version names one content for good; put another "
        "version, or remove this one first)",
        r.name, r.version));
  }
  if (reserved_.count({r.name, r.version}) != 0) {
    return AlreadyExists(
        fmt::format("app put: {}@{} is being put by another client", r.name, r.version));
  }
  r.size = put.size;
  r.entry = put.entry;
  r.executable = put.executable;
  r.shadow = put.shadow;
  // What an upload that never committed left behind.
  COPSE_RETURN_IF_ERROR(files_.Delete(r.path()));
  reserved_[{r.name, r.version}] = now;
  return r;
}

Result<AppRecord> AppService::Commit(const AppPut& put) {
  COPSE_RETURN_IF_ERROR(CheckPut(put));
  if (put.version.empty()) return InvalidArgument("app put: the commit names no version");
  if (!ValidSha256(put.sha256)) {
    return InvalidArgument("app put: the SHA-256 is not 64 lower-case hex digits");
  }
  auto it = apps_.find(put.name);
  if (it != apps_.end() && it->second.count(put.version) != 0) {
    const AppRecord& have = it->second.at(put.version);
    // The same commit again (its first answer was lost): done already.
    if (have.sha256 == put.sha256 && have.size == put.size) return have;
    return AlreadyExists(fmt::format("app put: {}@{} exists already", put.name, put.version));
  }
  AppRecord r;
  r.name = put.name;
  r.version = put.version;
  r.sha256 = put.sha256;
  r.size = put.size;
  r.entry = put.entry;
  r.executable = put.executable;
  r.shadow = put.shadow;
  r.put_ms = wall_.Now().count() / 1000;
  r.seq = next_seq_;
  Result<uint64_t> size = files_.FileSize(r.path());
  if (!size.ok()) {
    return FailedPrecondition(
        fmt::format("app put: the upload of {}@{} is not there: {}", r.name, r.version,
                    size.status().message()));
  }
  if (*size != r.size) {
    return FailedPrecondition(fmt::format("app put: the upload of {}@{} holds {} bytes, not {}",
                                          r.name, r.version, *size, r.size));
  }
  COPSE_RETURN_IF_ERROR(store_.Apply({{Key(r.name, r.version), DumpJson(ToJson(r))}})
                            .WithContext("program store"));
  ++next_seq_;
  reserved_.erase({r.name, r.version});
  apps_[r.name][r.version] = r;
  spdlog::info("program {}@{} put: {} bytes, sha256 {}", r.name, r.version, r.size, r.sha256);
  return r;
}

std::vector<AppRecord> AppService::List(std::string_view name) const {
  std::vector<AppRecord> out;
  for (const auto& [n, versions] : apps_) {
    if (!name.empty() && n != name) continue;
    for (const auto& [v, r] : versions) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const AppRecord& a, const AppRecord& b) {
    return a.name != b.name ? a.name < b.name : a.seq < b.seq;
  });
  return out;
}

Result<std::vector<AppRecord>> AppService::Remove(const std::string& name,
                                                  const std::string& version,
                                                  const InUse& in_use) {
  auto it = apps_.find(name);
  if (it == apps_.end()) return NotFound(fmt::format("app rm: no program '{}' in the store", name));
  std::vector<AppRecord> gone;
  for (const auto& [v, r] : it->second) {
    if (version.empty() || v == version) gone.push_back(r);
  }
  if (gone.empty()) {
    return NotFound(fmt::format("app rm: program '{}' has no version '{}'", name, version));
  }
  for (const AppRecord& r : gone) {
    if (std::optional<uint64_t> job = in_use(r.name, r.version)) {
      return FailedPrecondition(fmt::format(
          "app rm: {}@{} is pinned by job {}, which has not ended; kill it or wait", r.name,
          r.version, *job));
    }
  }
  std::vector<dfs::MetaStore::Write> writes;
  for (const AppRecord& r : gone) writes.push_back({Key(r.name, r.version), std::nullopt});
  COPSE_RETURN_IF_ERROR(store_.Apply(writes).WithContext("program store"));
  for (const AppRecord& r : gone) {
    it->second.erase(r.version);
    if (Status s = files_.Delete(r.path()); !s.ok()) {
      spdlog::warn("app rm: {}@{}: its file stays: {}", r.name, r.version, s.ToString());
    }
  }
  if (it->second.empty()) apps_.erase(it);
  return gone;
}

Result<std::optional<AppRecord>> AppService::Resolve(std::string_view program) const {
  std::string name, version;
  COPSE_RETURN_IF_ERROR(SplitProgram(program, &name, &version));
  auto it = apps_.find(name);
  if (it == apps_.end()) {
    if (!version.empty()) {
      return NotFound(fmt::format("no program {}@{}: '{}' is not in the program store", name,
                                  version, name));
    }
    return std::optional<AppRecord>();
  }
  if (!version.empty()) {
    auto v = it->second.find(version);
    if (v == it->second.end()) {
      std::string have;
      for (const AppRecord& r : List(name)) have += (have.empty() ? "" : ", ") + r.version;
      return NotFound(
          fmt::format("no version '{}' of program '{}' (the store has: {})", version, name, have));
    }
    return std::optional<AppRecord>(v->second);
  }
  const AppRecord* newest = nullptr;
  for (const auto& [v, r] : it->second) {
    if (newest == nullptr || r.seq > newest->seq) newest = &r;
  }
  return std::optional<AppRecord>(*newest);
}

}  // namespace copse::master

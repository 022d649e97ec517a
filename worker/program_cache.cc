#include "worker/program_cache.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "common/net/auth.h"
#include "common/program_name.h"
#include "common/sha256.h"
#include "common/text.h"
#include "dfs/client.h"
#include "common/archive.h"

namespace copse::worker {
namespace {

constexpr std::string_view kMark = "copse-vertex-contract=";

// What a file looked like when it was checked.
struct Stamp {
  std::filesystem::path path;
  uint64_t ino = 0, size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const Stamp& o) const {
    return ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
  }
};

Result<Stamp> StampOf(const std::filesystem::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return NotFound(p.string() + ": " + std::strerror(errno));
  return Stamp{p, st.st_ino, static_cast<uint64_t>(st.st_size),
               st.st_mtim.tv_sec * 1'000'000'000ll + st.st_mtim.tv_nsec};
}

std::vector<Stamp> StampsUnder(const std::filesystem::path& dir) {
  std::vector<Stamp> out;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (Result<Stamp> s = StampOf(it->path()); s.ok()) out.push_back(*s);
  }
  return out;
}

uint64_t BytesOf(const std::vector<Stamp>& stamps) {
  uint64_t n = 0;
  for (const Stamp& s : stamps) n += s.size;
  return n;
}

bool IsSha256(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// An entry's name: the content's hash, with ".tar" for an unpacked archive
// (the same bytes put as one executable and as an archive are two entries).
std::string EntryName(const ProgramRef& ref) {
  return ref.entry.empty() ? ref.sha256 : ref.sha256 + ".tar";
}

bool IsEntryName(const std::string& name) {
  return IsSha256(name) || (name.size() == 68 && IsSha256(std::string_view(name).substr(0, 64)) &&
                            name.compare(64, 4, ".tar") == 0);
}

// Entries are read-only once checked (a program cannot change its own
// files); removing one makes its directories writable first.
void SetDirectoriesWritable(const std::filesystem::path& dir, bool writable) {
  std::error_code ec;
  auto mode = writable ? std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                             std::filesystem::perms::group_exec |
                             std::filesystem::perms::others_read |
                             std::filesystem::perms::others_exec
                       : std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec |
                             std::filesystem::perms::group_read |
                             std::filesystem::perms::group_exec |
                             std::filesystem::perms::others_read |
                             std::filesystem::perms::others_exec;
  std::vector<std::filesystem::path> dirs{dir};
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) dirs.push_back(it->path());
  }
  // Writable from the top down, read-only from the bottom up.
  if (!writable) std::reverse(dirs.begin(), dirs.end());
  for (const auto& d : dirs) std::filesystem::permissions(d, mode, ec);
}

void RemoveEntryDir(const std::filesystem::path& dir) {
  SetDirectoriesWritable(dir, true);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace

Result<int> ReadContractMark(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return IoError("cannot read " + file.string());
  std::string buf;
  std::string chunk(1 << 20, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    buf.append(chunk.data(), static_cast<size_t>(in.gcount()));
    size_t at = buf.find(kMark);
    if (at != std::string::npos) {
      size_t p = at + kMark.size();
      // The digits and ';' may be in the next chunk.
      while (buf.find(';', p) == std::string::npos && in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        buf.append(chunk.data(), static_cast<size_t>(in.gcount()));
      }
      int v = 0;
      size_t digits = 0;
      for (; p < buf.size() && buf[p] >= '0' && buf[p] <= '9' && digits < 6; ++p, ++digits) {
        v = v * 10 + (buf[p] - '0');
      }
      if (digits > 0 && p < buf.size() && buf[p] == ';') return v;
      return 0;
    }
    // Keep the tail a mark could start in.
    if (buf.size() > kMark.size()) buf.erase(0, buf.size() - kMark.size());
  }
  return 0;
}

struct ProgramCache::Entry {
  std::string sha;
  std::filesystem::path dir, exec;
  uint64_t bytes = 0;
  uint64_t used = 0;
  int leases = 0;
  bool checked = false;  // its files' stamps are known good
  std::vector<Stamp> stamps;
  int contract = 0;
};

struct ProgramCache::Marked {
  Stamp stamp;
  int contract = 0;
};

struct ProgramCache::Dfs {
  std::unique_ptr<dfs::DfsClient> client;
};

ProgramCache::ProgramCache(const ClusterConfig& config, std::string secret, Options options)
    : config_(config),
      secret_(std::move(secret)),
      options_(std::move(options)),
      dfs_(std::make_unique<Dfs>()) {
  thread_.Post([this] { ScanDisk(); });
}

ProgramCache::~ProgramCache() {
  stopping_ = true;
  thread_.Stop();
}

uint64_t ProgramCache::bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  uint64_t n = 0;
  for (const auto& [sha, e] : entries_) n += e->bytes;
  return n;
}

void ProgramCache::ScanDisk() {
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = std::filesystem::directory_iterator(options_.dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!IsEntryName(name)) {  // an interrupted fetch
      RemoveEntryDir(it->path());
      continue;
    }
    auto e = std::make_unique<Entry>();
    e->sha = name;
    e->dir = it->path();
    e->bytes = BytesOf(StampsUnder(e->dir));
    entries_[name] = std::move(e);
  }
}

void ProgramCache::Resolve(const std::string& name, const std::vector<ProgramRef>& pinned,
                           Done done) {
  auto answer = [this](Done d, Result<ResolvedProgram> r) {
    options_.post([d = std::move(d), r = std::move(r)]() mutable { d(std::move(r)); });
  };
  const bool is_pinned = std::any_of(pinned.begin(), pinned.end(),
                                     [&](const ProgramRef& p) { return p.name == name; });
  if (!is_pinned) {
    // The apps directory: answered here, never behind a fetch.
    answer(std::move(done), ResolveNow(name, pinned));
    return;
  }
  thread_.Post([this, name, pinned, done = std::move(done), answer]() mutable {
    if (stopping_.load()) {
      answer(std::move(done), Cancelled("the worker is stopping"));
      return;
    }
    answer(std::move(done), ResolveNow(name, pinned));
  });
}

void ProgramCache::Release(const std::string& lease) {
  if (lease.empty()) return;
  std::lock_guard<std::mutex> l(mu_);
  auto it = entries_.find(lease);
  if (it != entries_.end() && it->second->leases > 0) --it->second->leases;
}

Result<int> ProgramCache::ContractOf(const std::filesystem::path& exec) {
  COPSE_ASSIGN_OR_RETURN(Stamp now, StampOf(exec));
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = marks_.find(exec.string());
    if (it != marks_.end() && it->second->stamp == now) return it->second->contract;
  }
  COPSE_ASSIGN_OR_RETURN(int contract, ReadContractMark(exec));
  std::lock_guard<std::mutex> l(mu_);
  auto m = std::make_unique<Marked>();
  m->stamp = now;
  m->contract = contract;
  marks_[exec.string()] = std::move(m);
  return contract;
}

Result<ResolvedProgram> ProgramCache::ResolveNow(const std::string& name,
                                                 const std::vector<ProgramRef>& pinned) {
  for (const ProgramRef& ref : pinned) {
    if (ref.name == name) return FromStore(ref);
  }
  if (!ValidProgramName(name)) {
    return InvalidArgument(fmt::format("'{}' is not a program name", EscapeForLog(Excerpt(name))));
  }
  std::filesystem::path p = options_.apps_dir / name;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec) || ::access(p.c_str(), X_OK) != 0) {
    return NotFound(fmt::format("no program '{}' in the apps directory {} on {}", name,
                                options_.apps_dir.string(), options_.computer));
  }
  ResolvedProgram out;
  out.exec = p;
  COPSE_ASSIGN_OR_RETURN(out.contract, ContractOf(p));
  return out;
}

Result<ResolvedProgram> ProgramCache::FromStore(const ProgramRef& ref) {
  if (!IsSha256(ref.sha256)) {
    return InvalidArgument(fmt::format("program {}: a pin without a SHA-256", ref.name));
  }
  const std::string name = EntryName(ref);
  bool fetched = false;
  Entry* e = nullptr;
  {
    std::unique_lock<std::mutex> l(mu_);
    auto it = entries_.find(name);
    if (it != entries_.end()) {
      Entry& have = *it->second;
      bool good = false;
      if (have.checked) {
        good = StampsUnder(have.dir) == have.stamps;
      } else if (ref.entry.empty()) {
        // From an earlier worker: checked once against its hash.
        l.unlock();
        Result<std::string> sha = Sha256OfFile(have.dir / "program");
        l.lock();
        good = sha.ok() && *sha == ref.sha256;
        if (good) {
          SetDirectoriesWritable(have.dir, false);
          have.stamps = StampsUnder(have.dir);
          have.checked = true;
        }
      }
      if (good) {
        e = &have;
      } else if (have.leases == 0) {
        spdlog::warn("program {}: its cached copy in {} changed since it was checked; fetching it "
                     "again",
                     ref.name, have.dir.string());
        RemoveEntryDir(have.dir);
        entries_.erase(it);
      } else {
        // This computer's trouble, not the job's: the run goes elsewhere.
        return Unavailable(fmt::format(
            "program {}: its cached copy in {} changed while a run uses it", ref.name,
            have.dir.string()));
      }
    }
  }
  if (e == nullptr) {
    std::filesystem::path tmp = options_.dir / (".fetch-" + net::RandomHex(8));
    std::filesystem::path dir = options_.dir / name;
    Status s = Fetch(ref, tmp);
    std::error_code ec;
    if (s.ok()) {
      SetDirectoriesWritable(tmp, false);
      std::filesystem::rename(tmp, dir, ec);
      if (ec) s = IoError(fmt::format("cannot keep {}: {}", dir.string(), ec.message()));
    }
    if (!s.ok()) {
      RemoveEntryDir(tmp);
      return s;
    }
    auto fresh = std::make_unique<Entry>();
    fresh->sha = name;
    fresh->dir = dir;
    fresh->stamps = StampsUnder(dir);
    fresh->bytes = BytesOf(fresh->stamps);
    fresh->checked = true;
    std::lock_guard<std::mutex> l(mu_);
    e = fresh.get();
    entries_[name] = std::move(fresh);
    fetched = true;
  }
  // Which file runs is the pin's: two pins may share an archive's content.
  std::filesystem::path exec = ref.entry.empty() ? e->dir / "program" : e->dir / "tree" / ref.entry;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(exec, ec)) {
    return InvalidArgument(fmt::format(
        "program {}: its entry point '{}' is not a file of its archive", ref.name, ref.entry));
  }
  COPSE_ASSIGN_OR_RETURN(int contract, ContractOf(exec));
  std::lock_guard<std::mutex> l(mu_);
  e->used = ++clock_;
  ++e->leases;
  ResolvedProgram out{exec, contract, e->sha, fetched};
  Evict(e->sha);
  return out;
}

Status ProgramCache::Fetch(const ProgramRef& ref, const std::filesystem::path& into) {
  std::error_code ec;
  std::filesystem::create_directories(into, ec);
  if (ec) return IoError(fmt::format("cannot create {}: {}", into.string(), ec.message()));
  if (!dfs_->client) {
    dfs::DfsClientOptions o;
    o.computer = options_.computer;
    auto c = dfs::DfsClient::Connect(config_, secret_, o);
    if (!c.ok()) return Unavailable(fmt::format("program {}: {}", ref.name, c.status().message()));
    dfs_->client = std::move(*c);
  }
  dfs::DfsClient& dfs = *dfs_->client;
  Result<dfs::FileStatus> st = dfs.Stat(ref.path);
  if (!st.ok()) {
    if (st.status().code() != StatusCode::kNotFound) dfs_->client.reset();
    return Status(st.status().code() == StatusCode::kNotFound ? StatusCode::kNotFound
                                                               : StatusCode::kUnavailable,
                  fmt::format("program {}: cannot read its file {} in the DFS: {}", ref.name,
                              ref.path, st.status().message()));
  }
  const std::filesystem::path download = into / "download";
  std::ofstream out(download, std::ios::binary);
  Sha256 hash;
  uint64_t size = 0;
  for (int p = 0; p < static_cast<int>(st->partitions.size()); ++p) {
    Status s = dfs.ReadPartition(*st, p, [&](std::span<const uint8_t> b) {
      std::string_view v(reinterpret_cast<const char*>(b.data()), b.size());
      hash.Update(v);
      size += b.size();
      out.write(v.data(), static_cast<std::streamsize>(v.size()));
      return out ? Status::Ok() : IoError("cannot write " + download.string());
    });
    if (!s.ok()) {
      dfs_->client.reset();
      return Status(s.code() == StatusCode::kIoError ? StatusCode::kIoError
                                                     : StatusCode::kUnavailable,
                    fmt::format("program {}: reading {} from the DFS: {}", ref.name, ref.path,
                                s.message()));
    }
  }
  out.close();
  if (!out) return IoError("cannot write " + download.string());
  const std::string sha = hash.HexDigest();
  if (sha != ref.sha256 || size != ref.size) {
    return Corruption(fmt::format(
        "program {}: its copy in the DFS ({}) has SHA-256 {} and {} bytes, not {} and {} bytes "
        "as pinned when the job was submitted; refused",
        ref.name, ref.path, sha, size, ref.sha256, ref.size));
  }
  if (ref.entry.empty()) {
    std::filesystem::rename(download, into / "program", ec);
    if (ec) return IoError(fmt::format("cannot keep {}: {}", download.string(), ec.message()));
    ::chmod((into / "program").c_str(), ref.executable ? 0555 : 0444);
    return Status::Ok();
  }
  std::filesystem::create_directories(into / "tree", ec);
  Result<uint64_t> unpacked = ExtractTar(download, into / "tree", options_.max_bytes);
  std::filesystem::remove(download, ec);
  if (!unpacked.ok()) {
    return Status(unpacked.status().code(), fmt::format("program {}: its archive: {}", ref.name,
                                                        unpacked.status().message()));
  }
  return Status::Ok();
}

void ProgramCache::Evict(const std::string& keep) {
  uint64_t total = 0;
  for (const auto& [sha, e] : entries_) total += e->bytes;
  while (total > options_.max_bytes) {
    Entry* victim = nullptr;
    for (const auto& [sha, e] : entries_) {
      if (sha == keep || e->leases > 0) continue;
      if (victim == nullptr || e->used < victim->used) victim = e.get();
    }
    if (victim == nullptr) return;
    spdlog::info("program cache: dropping {} ({} bytes; the cache holds at most {})", victim->sha,
                 victim->bytes, options_.max_bytes);
    RemoveEntryDir(victim->dir);
    total -= victim->bytes;
    entries_.erase(victim->sha);
  }
}

}  // namespace copse::worker

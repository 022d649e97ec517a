#include "client/fs_commands.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "client/command.h"
#include "client/terminal.h"
#include "common/json.h"
#include "common/net/auth.h"
#include "dfs/chunk_memory.h"
#include "dfs/client.h"

namespace copse::client {
namespace {

int FailFs(const std::string& what, const Status& s) {
  return ReportFailure("fs " + what, Status(s.code(), s.ToString()));
}

// Where each partition of a `size`-byte file starts: at line boundaries for
// text (no line straddles two partitions), at record boundaries otherwise.
Result<std::vector<uint64_t>> SplitPoints(std::ifstream& in, uint64_t size, int partitions,
                                          uint64_t record_size, const std::string& name) {
  std::vector<uint64_t> starts(static_cast<size_t>(partitions) + 1, size);
  starts[0] = 0;
  if (record_size > 0) {
    if (size % record_size != 0) {
      return InvalidArgument(fmt::format("{} holds {} bytes, not a whole number of {}-byte records",
                                         name, size, record_size));
    }
    uint64_t records = size / record_size;
    for (int i = 1; i < partitions; ++i)
      starts[static_cast<size_t>(i)] =
          records * static_cast<uint64_t>(i) / static_cast<uint64_t>(partitions) * record_size;
    return starts;
  }
  for (int i = 1; i < partitions; ++i) {
    uint64_t target = size * static_cast<uint64_t>(i) / static_cast<uint64_t>(partitions);
    target = std::max(target, starts[static_cast<size_t>(i) - 1]);
    // The partition starts after the first newline at or after target - 1.
    uint64_t pos = target == 0 ? 0 : target - 1;
    in.clear();
    in.seekg(static_cast<std::streamoff>(pos));
    uint64_t at = pos;
    bool found = target == 0;
    char buf[65536];
    while (!found && at < size) {
      in.read(buf, sizeof(buf));
      std::streamsize n = in.gcount();
      if (n <= 0) break;
      for (std::streamsize k = 0; k < n; ++k) {
        if (buf[k] == '\n') {
          at += static_cast<uint64_t>(k) + 1;
          found = true;
          break;
        }
      }
      if (!found) at += static_cast<uint64_t>(n);
    }
    starts[static_cast<size_t>(i)] = found ? at : size;
  }
  return starts;
}

std::string PrintBytes(uint64_t n) {
  if (n >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(n) / (1ull << 30));
  if (n >= (1ull << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1ull << 20));
  if (n >= (1ull << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(n) / (1ull << 10));
  return fmt::format("{} B", n);
}

void PrintCounters(const dfs::DfsClient& client) {
  const dfs::LocalityCounters& c = client.counters();
  std::cerr << fmt::format(
      "read {} bytes: {} local ({} through the local read path), {} within the rack, {} across "
      "the core\n",
      c.total(), c.local, client.local_path_bytes(), c.rack, c.core);
}

// Streams every requested partition of `path` into `out`.
int ReadTo(const ClusterConfig& config, const FsOptions& o, const std::string& what,
           std::FILE* out) {
  auto client = ConnectDfs(config, o.computer, o.master_wait);
  if (!client.ok()) return FailFs(what, client.status());
  auto st = (*client)->Stat(o.path);
  if (!st.ok()) return FailFs(what, st.status());
  int first = 0, last = static_cast<int>(st->partitions.size()) - 1;
  if (o.partition >= 0) {
    if (o.partition > last) {
      return FailFs(what, InvalidArgument(fmt::format("{} has {} partition(s); there is no "
                                                      "partition {}",
                                                      o.path, last + 1, o.partition)));
    }
    first = last = o.partition;
  }
  for (int p = first; p <= last; ++p) {
    Status s = (*client)->ReadPartition(*st, p, [&](std::span<const uint8_t> bytes) -> Status {
      if (std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size())
        return IoError(fmt::format("writing the output: {}", std::strerror(errno)));
      return Status::Ok();
    });
    if (!s.ok()) return FailFs(what, s);
  }
  if (std::fflush(out) != 0)
    return FailFs(what, IoError(fmt::format("writing the output: {}", std::strerror(errno))));
  if (o.stats) PrintCounters(**client);
  return 0;
}

}  // namespace

Result<std::unique_ptr<dfs::DfsClient>> ConnectDfs(const ClusterConfig& config,
                                                   const std::string& computer,
                                                   std::chrono::seconds master_wait) {
  COPSE_ASSIGN_OR_RETURN(std::string secret, net::LoadSecret(config.secret_file));
  dfs::TuneHeapForChunks();
  dfs::DfsClientOptions o;
  o.computer = computer;
  o.connect_retry = MasterWait(config, master_wait);
  return dfs::DfsClient::Connect(config, secret, o);
}

int FsPut(const ClusterConfig& config, const FsOptions& o) {
  if (o.partitions < 1) return FailFs("put", InvalidArgument("--partitions must be at least 1"));
  auto mode = dfs::ParsePlacementMode(o.placement);
  if (!mode.ok()) return FailFs("put", mode.status());
  std::ifstream in(o.local, std::ios::binary);
  if (!in) {
    return FailFs("put", NotFound(fmt::format("cannot open local file '{}': {}", o.local,
                                              std::strerror(errno))));
  }
  std::error_code ec;
  uint64_t size = std::filesystem::file_size(o.local, ec);
  if (ec) return FailFs("put", IoError(fmt::format("'{}': {}", o.local, ec.message())));
  auto starts = SplitPoints(in, size, o.partitions, o.record_size, o.local);
  if (!starts.ok()) return FailFs("put", starts.status());
  auto client = ConnectDfs(config, o.computer, o.master_wait);
  if (!client.ok()) return FailFs("put", client.status());
  dfs::CreateOptions co;
  co.partitions = o.partitions;
  co.replication = o.replication;
  co.placement = *mode;
  Status s = (*client)->Create(o.path, co);
  if (!s.ok()) return FailFs("put", s);
  std::vector<uint8_t> buf(1u << 20);
  for (int p = 0; p < o.partitions; ++p) {
    s = (*client)->BeginPartition(p);
    if (!s.ok()) return FailFs("put", s);
    uint64_t at = (*starts)[static_cast<size_t>(p)];
    uint64_t end = (*starts)[static_cast<size_t>(p) + 1];
    in.clear();
    in.seekg(static_cast<std::streamoff>(at));
    while (at < end) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), end - at));
      in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(n));
      if (static_cast<size_t>(in.gcount()) != n) {
        (void)(*client)->Abandon();
        return FailFs("put", IoError(fmt::format("reading '{}' at byte {} failed", o.local, at)));
      }
      s = (*client)->Append(std::span<const uint8_t>(buf.data(), n));
      if (!s.ok()) {
        (void)(*client)->Abandon();
        return FailFs("put", s);
      }
      at += n;
    }
    auto visible = (*client)->EndPartition();
    if (!visible.ok()) {
      (void)(*client)->Abandon();
      return FailFs("put", visible.status());
    }
  }
  std::cerr << fmt::format("wrote {} ({}) to {} in {} partition(s)\n", o.local, PrintBytes(size),
                           o.path, o.partitions);
  return 0;
}

int FsGet(const ClusterConfig& config, const FsOptions& o) {
  std::string tmp = o.local + ".copse-partial";
  std::FILE* out = std::fopen(tmp.c_str(), "wb");
  if (!out) {
    return FailFs("get", IoError(fmt::format("cannot create '{}': {}", tmp, std::strerror(errno))));
  }
  int rc = ReadTo(config, o, "get", out);
  std::fclose(out);
  std::error_code ec;
  if (rc != 0) {
    std::filesystem::remove(tmp, ec);
    return rc;
  }
  std::filesystem::rename(tmp, o.local, ec);
  if (ec) return FailFs("get", IoError(fmt::format("renaming to '{}': {}", o.local, ec.message())));
  return 0;
}

int FsCat(const ClusterConfig& config, const FsOptions& o) {
  return ReadTo(config, o, "cat", stdout);
}

int FsList(const ClusterConfig& config, const FsOptions& o) {
  auto client = ConnectDfs(config, o.computer, o.master_wait);
  if (!client.ok()) return FailFs("ls", client.status());
  auto entries = (*client)->List(o.path.empty() ? "/" : o.path);
  if (!entries.ok()) return FailFs("ls", entries.status());
  if (o.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const dfs::ListEntry& e : *entries) {
      j.push_back({{"path", e.path},
                   {"dir", e.is_dir},
                   {"size", e.size},
                   {"partitions", e.partitions},
                   {"replication", e.replication},
                   {"scratch_job", e.scratch_job}});
    }
    std::cout << DumpJson(j, 2) << "\n";
    return 0;
  }
  for (const dfs::ListEntry& e : *entries) {
    if (e.is_dir) {
      std::cout << fmt::format("{:>12} {:>5} {:>3}  {}/\n", "-", "-", "-", e.path);
    } else {
      std::cout << fmt::format("{:>12} {:>5} {:>3}  {}\n", e.size, e.partitions, e.replication,
                               e.path);
    }
  }
  return 0;
}

int FsStat(const ClusterConfig& config, const FsOptions& o) {
  auto client = ConnectDfs(config, o.computer, o.master_wait);
  if (!client.ok()) return FailFs("stat", client.status());
  auto st = (*client)->Stat(o.path);
  if (!st.ok()) return FailFs("stat", st.status());
  if (o.json) {
    nlohmann::json parts = nlohmann::json::array();
    for (const dfs::PartitionLocation& p : st->partitions) {
      nlohmann::json blocks = nlohmann::json::array();
      for (const dfs::BlockLocation& b : p.blocks) {
        nlohmann::json reps = nlohmann::json::array();
        for (const dfs::ReplicaLocation& r : b.replicas)
          reps.push_back(
              {{"computer", r.where.computer}, {"rack", r.where.rack}, {"live", r.live}});
        blocks.push_back({{"id", b.id}, {"size", b.size}, {"replicas", reps}});
      }
      parts.push_back({{"committed", p.committed}, {"size", p.size}, {"blocks", blocks}});
    }
    nlohmann::json j = {{"path", st->path},
                        {"id", st->id},
                        {"size", st->size},
                        {"replication", st->replication},
                        {"placement", st->placement},
                        {"scratch_job", st->scratch_job},
                        {"block_size", st->block_size},
                        {"partitions", parts}};
    std::cout << DumpJson(j, 2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: {} bytes, {} partition(s), replication {}, placement {}{}\n",
                           st->path, st->size, st->partitions.size(), st->replication,
                           st->placement,
                           st->scratch_job.empty() ? "" : ", scratch of job " + st->scratch_job);
  for (size_t i = 0; i < st->partitions.size(); ++i) {
    const dfs::PartitionLocation& p = st->partitions[i];
    std::cout << fmt::format("  partition {}: {} bytes{}\n", i, p.size,
                             p.committed ? "" : " (not committed)");
    for (const dfs::BlockLocation& b : p.blocks) {
      std::string reps;
      for (const dfs::ReplicaLocation& r : b.replicas) {
        reps += fmt::format(" {}({}{})", r.where.computer, r.where.rack, r.live ? "" : ", dead");
      }
      std::cout << fmt::format("    block {}: {} bytes on{}\n", b.id, b.size, reps);
    }
  }
  return 0;
}

int FsRemove(const ClusterConfig& config, const FsOptions& o) {
  auto client = ConnectDfs(config, o.computer, o.master_wait);
  if (!client.ok()) return FailFs("rm", client.status());
  Status s = (*client)->Delete(o.path);
  if (!s.ok()) return FailFs("rm", s);
  return 0;
}

}  // namespace copse::client

namespace copse::client {

void AddFsCommands(CLI::App& app, Commands& commands) {
  FsOptions& o = commands.Own<FsOptions>();
  const GlobalOptions& g = commands.global();
  auto* fs = app.add_subcommand("fs", "the distributed file system");
  fs->require_subcommand(1);
  fs->fallthrough();
  auto add_computer = [&](CLI::App* c) {
    c->add_option("--computer", o.computer,
                  "the computer this runs on (default: outside the cluster)");
    c->fallthrough();
  };
  auto add = [&](CLI::App* c, int (*run)(const ClusterConfig&, const FsOptions&)) {
    commands.Add(c, [&o, &g, run] {
      o.master_wait = g.master_wait();
      return WithConfig(g, o.computer, true, [&](const ClusterConfig& cfg) { return run(cfg, o); });
    });
  };
  auto* put = fs->add_subcommand("put", "write a local file into the DFS");
  put->add_option("LOCAL", o.local, "local file")->required();
  put->add_option("PATH", o.path, "DFS path")->required();
  put->add_option("--partitions", o.partitions, "partitions (split at line ends)")
      ->check(CLI::Range(1, 1 << 20));
  put->add_option("--replication", o.replication, "replicas (default: the config's)")
      ->check(CLI::Range(1, 64));
  put->add_option("--placement", o.placement,
                  "writer | random | 'colocate PATH' | 'confine N RACK'");
  put->add_option("--record-size", o.record_size,
                  "split fixed-size binary records of B bytes instead of lines")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  add_computer(put);
  add(put, FsPut);
  auto* get = fs->add_subcommand("get", "copy a DFS file to a local file");
  get->add_option("PATH", o.path, "DFS path")->required();
  get->add_option("LOCAL", o.local, "local file")->required();
  get->add_flag("--stats", o.stats, "print bytes read per locality level to stderr");
  add_computer(get);
  add(get, FsGet);
  auto* cat = fs->add_subcommand("cat", "write a DFS file to stdout");
  cat->add_option("PATH", o.path, "DFS path")->required();
  cat->add_option("--partition", o.partition, "only this partition")->check(CLI::Range(0, 1 << 20));
  cat->add_flag("--stats", o.stats, "print bytes read per locality level to stderr");
  add_computer(cat);
  add(cat, FsCat);
  auto* ls = fs->add_subcommand("ls", "list files");
  ls->add_option("PATH", o.path, "DFS directory or file (default /)");
  ls->add_flag("--json", o.json, "print one JSON document");
  ls->fallthrough();
  add(ls, FsList);
  auto* stat = fs->add_subcommand("stat", "partitions, blocks and replicas of a file");
  stat->add_option("PATH", o.path, "DFS path")->required();
  stat->add_flag("--json", o.json, "print one JSON document");
  stat->fallthrough();
  add(stat, FsStat);
  auto* rm = fs->add_subcommand("rm", "delete a file");
  rm->add_option("PATH", o.path, "DFS path")->required();
  rm->fallthrough();
  add(rm, FsRemove);
}

}  // namespace copse::client

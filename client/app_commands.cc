#include "client/app_commands.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "apps/generate.h"
#include "apps/instances.h"
#include "client/command.h"
#include "client/fs_commands.h"
#include "client/terminal.h"
#include "dfs/client.h"
#include "dfs/placement.h"

namespace copse::client {
namespace {

int FailGen(const Status& s) { return ReportFailure("gen", s); }

using Generator = Status (*)(const apps::GenPartition&, const apps::ChunkSink&);

Generator GeneratorOf(const std::string& app) {
  if (app == "prime") return apps::GeneratePrime;
  if (app == "wordcount") return apps::GenerateWordCount;
  if (app == "sort") return apps::GenerateSort;
  if (app == "databasejoin") return apps::GenerateDatabaseJoin;
  if (app == "pagerank") return apps::GeneratePageRank;
  return nullptr;
}

// Writes file `file` of the app's input, partition by partition.
Status WriteFile(dfs::DfsClient& client, const std::string& path, const dfs::CreateOptions& co,
                 Generator generate, apps::GenPartition p) {
  COPSE_RETURN_IF_ERROR(client.Create(path, co));
  for (int i = 0; i < co.partitions; ++i) {
    p.partition = i;
    Status s = client.BeginPartition(i);
    if (s.ok()) {
      s = generate(p, [&](std::string_view piece) {
        return client.Append(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(piece.data()), piece.size()));
      });
    }
    if (s.ok()) s = client.EndPartition().status();
    if (!s.ok()) {
      (void)client.Abandon();
      return s.WithContext(fmt::format("{} partition {}", path, i));
    }
  }
  return Status::Ok();
}

}  // namespace

int Gen(const ClusterConfig& config, const GenOptions& o) {
  const std::string kind = o.app == "prime" ? "prime_small" : o.app;
  if (o.partitions < 1) return FailGen(InvalidArgument("--partitions must be at least 1"));
  if (!(o.scale > 0) || !std::isfinite(o.scale)) {
    return FailGen(InvalidArgument(fmt::format("--scale must be a number > 0, not {}", o.scale)));
  }
  if (o.output.empty() || o.output.front() != '/') {
    return FailGen(
        InvalidArgument("--output must be an absolute DFS path, not '" + o.output + "'"));
  }
  Result<apps::InputModel> model = apps::PaperInputs(kind, o.partitions);
  if (!model.ok()) return FailGen(model.status());
  Generator generate = GeneratorOf(model->app);
  // The paper's DatabaseJoin5 names 5 computers of a rack; on a smaller
  // rack it spreads over all of the rack's, or over the cluster when the
  // rack cannot hold the replicas (apps::FitPlacement).
  const std::string placement = apps::FitPlacement(o.placement, config, o.replication);
  if (placement != o.placement) {
    std::cerr << fmt::format(
        "copse gen: --placement '{}': the rack has fewer computers; spreading "
        "over more instead: '{}'\n",
        o.placement, placement);
  }
  auto first_mode = dfs::ParsePlacementMode(placement);
  if (!first_mode.ok()) return FailGen(first_mode.status().WithContext("--placement"));

  apps::GenPartition p;
  p.partitions = o.partitions;
  p.seed = o.seed;
  for (int64_t bytes : model->partition_bytes) {
    p.file_bytes.push_back(std::llround(static_cast<double>(bytes) * o.scale));
  }
  // One file: OUTPUT itself; several (DatabaseJoin's tables): OUTPUT/<name>.
  std::vector<std::string> paths;
  for (const std::string& f : model->files) {
    paths.push_back(model->files.size() == 1 ? o.output : o.output + "/" + f);
  }
  auto client = ConnectDfs(config, o.computer, o.master_wait);
  if (!client.ok()) return FailGen(client.status());
  int64_t total = 0;
  for (size_t f = 0; f < paths.size(); ++f) {
    dfs::CreateOptions co;
    co.partitions = o.partitions;
    co.replication = o.replication;
    co.placement = *first_mode;
    if (f > 0) {
      auto mode = dfs::ParsePlacementMode("colocate " + paths[0]);
      if (!mode.ok()) return FailGen(mode.status());
      co.placement = *mode;
    }
    p.file = static_cast<int>(f);
    Status s = WriteFile(**client, paths[f], co, generate, p);
    if (!s.ok()) return FailGen(s);
    auto st = (*client)->Stat(paths[f]);
    if (!st.ok()) return FailGen(st.status());
    total += static_cast<int64_t>(st->size);
    std::cerr << fmt::format("wrote {}: {} partition(s), {} bytes, placement {}\n", paths[f],
                             o.partitions, st->size, st->placement);
  }
  std::cerr << fmt::format("generated {} input (scale {}, seed {}): {} bytes\n", kind, o.scale,
                           o.seed, total);
  return 0;
}

}  // namespace copse::client

namespace copse::client {

void AddGenCommands(CLI::App& app, Commands& commands) {
  GenOptions& o = commands.Own<GenOptions>();
  const GlobalOptions& g = commands.global();
  auto* gen = app.add_subcommand("gen", "write a sample app's generated input into the DFS");
  gen->add_option("APP", o.app,
                  "sort, databasejoin, pagerank, wordcount, prime_small (or prime), prime_large")
      ->required();
  gen->add_option("--output", o.output,
                  "the DFS file to write (databasejoin: OUTPUT/small and OUTPUT/big)")
      ->required();
  gen->add_option("--partitions", o.partitions, "partitions (default 4)");
  gen->add_option("--scale", o.scale,
                  "partition size as a share of the paper's (default 0.001: Sort 4 MB, "
                  "PageRank 1 MB, WordCount 50 kB)");
  gen->add_option("--seed", o.seed, "the generator's seed (default 1)");
  gen->add_option("--placement", o.placement,
                  "random (default) | writer | 'confine N RACK' (databasejoin: of the small table; "
                  "the big one is co-located with it)");
  gen->add_option("--replication", o.replication, "replicas (default: the config's)")
      ->check(CLI::Range(1, 64));
  gen->add_option("--computer", o.computer,
                  "the computer this runs on (default: outside the cluster)");
  gen->fallthrough();
  commands.Add(gen, [&o, &g] {
    o.master_wait = g.master_wait();
    return WithConfig(g, "", true, [&](const ClusterConfig& c) { return Gen(c, o); });
  });
}

}  // namespace copse::client

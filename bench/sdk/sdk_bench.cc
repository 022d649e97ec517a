// copse-bench-sdk (`copse bench sdk`): what your own code costs on a Copse
// cluster (docs/sdk.md "Measurements").
//
//   copse-bench-sdk [--corpus-mb M] [--partitions P] [--reducers R]
//                   [--repeats N] [--launches L] [--json] [--keep]
//
// Streaming. On a cluster of its own (the shape of
// cluster-configs/local.toml: two racks of three computers, two slots
// each), it writes a corpus of M MB (default 30) of words drawn from a
// skewed vocabulary, in P partitions (default 12), puts the Python WordCount
// of examples/wordcount-python with `copse app put`, and, N times (default
// 5), alternating which goes first, times
//   Copse     `copse run streaming --mapper wc-map --reducer wc-reduce
//             --reducers R --wait`, from the command's start to its end;
//   pipeline  the same mapper and reducer on this machine, on a local copy:
//             cat CORPUS | mapper.py | LC_ALL=C sort | reducer.py > OUT;
// and checks that both outputs hold the same lines. Target: Copse no slower
// than the pipeline: the median of the pairs' ratios <= 1 (each pair ran
// back to back, which the machine's drift disturbs least). What the adapter
// itself costs: a job of one stage whose program is `cat` (a streaming
// identity), its records per second of job time. The reducers are R
// (default 2, one per core of a two-core machine: more only add processes).
// Both sides run with the environment Copse gives a streaming program
// (ProgramEnvironment, common/process.h).
//
// Launch. On a cluster of one computer, L times (default 5) each, one-vertex
// jobs of: `noop` from the apps directory; a copy of noop shipped with
// `copse app put` under a fresh version (its first run on the computer:
// fetched through the DFS, checked, cached); the same version again (cached).
// It reports each one's launch latency (launch received by the worker -> the
// program's first line, as the job's history records it): median and max.
// Exit 0 when everything ran and the outputs matched, 1 otherwise, 2 on bad
// usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "bench/sim/metrics.h"
#include "client/loopback_cluster.h"
#include "common/json.h"
#include "common/process.h"
#include "common/subprocess.h"

namespace copse::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

const fs::path kSource = COPSE_SOURCE_DIR;

struct Options {
  int corpus_mb = 30;
  int partitions = 12;
  int reducers = 2;
  int repeats = 5;
  int launches = 5;
  bool json = false;
  bool keep = false;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

Result<std::string> Copse(const fs::path& config, std::vector<std::string> args) {
  return client::RunCopse(ExecutableDir(), config, std::move(args), std::chrono::seconds(3600));
}

Result<std::string> Shell(const std::string& script, std::vector<std::string> args) {
  SpawnOptions o;
  // What the adapter gives a streaming program (common/process.h): the
  // same programs with the same settings on both sides.
  o.env = ProgramEnvironment();
  o.program = "/bin/sh";
  o.args = {"-c", script};
  o.args.insert(o.args.end(), args.begin(), args.end());
  o.out = SpawnOptions::Output::kPipe;
  COPSE_ASSIGN_OR_RETURN(ProcessResult r,
                         RunProcess(std::move(o), std::chrono::hours(1), 1u << 26));
  if (!r.status.ok())
    return Internal(fmt::format("{}: {}: {}", script, r.status.ToString(), r.err));
  return r.out;
}

std::string SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Words from a vocabulary of 50,000 with Zipf-like frequencies (a few very
// common, a long tail), lines of 8-16 words: what a reducer of a real text
// sees.
Status WriteCorpus(const fs::path& path, size_t bytes) {
  std::mt19937_64 rng(17);
  std::vector<double> weights(50'000);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 1.0 / static_cast<double>(i + 1);
  std::discrete_distribution<size_t> word(weights.begin(), weights.end());
  std::ofstream out(path, std::ios::binary);
  std::string line;
  size_t written = 0;
  while (written < bytes) {
    line.clear();
    int n = 8 + static_cast<int>(rng() % 9);
    for (int i = 0; i < n; ++i) {
      size_t w = word(rng);
      line += fmt::format("{}w{}", static_cast<char>('a' + w % 26), w);
      line += i + 1 < n ? ' ' : '\n';
    }
    out << line;
    written += line.size();
  }
  return out ? Status::Ok() : IoError("cannot write " + path.string());
}

Result<Json> JobStatus(const fs::path& config, const std::string& id) {
  COPSE_ASSIGN_OR_RETURN(std::string doc, Copse(config, {"job", "status", id, "--json"}));
  return ParseJson(doc, "a job status");
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// ---- streaming ----------------------------------------------------------------

Result<Json> Streaming(const Options& o, const fs::path& dir, bool* matched) {
  fs::create_directories(dir / "streaming");
  COPSE_ASSIGN_OR_RETURN(
      auto cluster,
      client::LoopbackCluster::Start(
          dir / "streaming", client::LocalShape("bench-sdk", 2, "QFP", "info"), ExecutableDir()));
  const fs::path& config = cluster->config_path();
  const fs::path corpus = dir / "corpus.txt";
  COPSE_RETURN_IF_ERROR(WriteCorpus(corpus, static_cast<size_t>(o.corpus_mb) << 20));
  COPSE_RETURN_IF_ERROR(Copse(config, {"fs", "put", corpus.string(), "/corpus", "--partitions",
                                       std::to_string(o.partitions), "--placement", "random"})
                            .status());
  const fs::path py = kSource / "examples" / "wordcount-python";
  COPSE_RETURN_IF_ERROR(
      Copse(config, {"app", "put", "wc-map", (py / "mapper.py").string()}).status());
  COPSE_RETURN_IF_ERROR(
      Copse(config, {"app", "put", "wc-reduce", (py / "reducer.py").string()}).status());
  const fs::path cat = dir / "cat.sh";
  {
    std::ofstream(cat) << "#!/bin/sh\nexec cat\n";
    fs::permissions(cat, fs::perms::owner_all);
  }
  COPSE_RETURN_IF_ERROR(Copse(config, {"app", "put", "identity", cat.string()}).status());

  std::vector<double> copse_s, pipeline_s, job_s;
  std::string copse_out, pipeline_out;
  for (int r = 0; r < o.repeats; ++r) {
    for (int side = 0; side < 2; ++side) {
      bool copse_side = (side == 0) == (r % 2 == 0);
      auto start = Clock::now();
      if (copse_side) {
        std::string out_path = fmt::format("/counts{}", r);
        COPSE_ASSIGN_OR_RETURN(
            std::string said,
            Copse(config, {"run", "streaming", "--mapper", "wc-map", "--reducer", "wc-reduce",
                           "--input", "/corpus", "--output", out_path, "--reducers",
                           std::to_string(o.reducers), "--wait"}));
        copse_s.push_back(Seconds(Clock::now() - start));
        COPSE_ASSIGN_OR_RETURN(Json st, JobStatus(config, FirstLine(said)));
        job_s.push_back(st.value("elapsed_s", 0.0));
        if (r == 0) {
          COPSE_ASSIGN_OR_RETURN(copse_out, Copse(config, {"fs", "cat", out_path}));
        }
      } else {
        COPSE_ASSIGN_OR_RETURN(
            std::string out,
            Shell("cat \"$0\" | \"$1/mapper.py\" | LC_ALL=C sort | \"$1/reducer.py\"",
                  {corpus.string(), py.string()}));
        pipeline_s.push_back(Seconds(Clock::now() - start));
        if (r == 0) pipeline_out = std::move(out);
      }
    }
  }
  *matched = SortedLines(copse_out) == SortedLines(pipeline_out) && !copse_out.empty();

  // The adapter alone: a one-stage job of `cat`, records in = lines.
  Json spec = {{"name", "identity"},
               {"stages",
                {{{"name", "cat"},
                  {"program", "identity"},
                  {"inputs", {{{"file", "/corpus"}}}},
                  {"output", "/identity"}}}}};
  const fs::path spec_file = dir / "identity.json";
  std::ofstream(spec_file) << DumpJson(spec);
  COPSE_ASSIGN_OR_RETURN(std::string said,
                         Copse(config, {"job", "submit", spec_file.string(), "--wait"}));
  COPSE_ASSIGN_OR_RETURN(Json st, JobStatus(config, FirstLine(said)));
  const double lines = st["counters"].value("stream.records_in", 0.0);
  const double identity_s = st.value("elapsed_s", 0.0);
  double vertex_s = 0;
  COPSE_ASSIGN_OR_RETURN(std::string hist,
                         Copse(config, {"job", "history", FirstLine(said), "--json"}));
  COPSE_ASSIGN_OR_RETURN(Json runs, ParseJson(hist, "a job history"));
  for (const Json& run : runs["runs"]) {
    if (run.value("state", "") == "completed" && run.value("label", "") != "root") {
      vertex_s +=
          (run.value("ended_ms", int64_t{0}) - run.value("launched_ms", int64_t{0})) / 1000.0;
    }
  }
  // Each pair ran back to back (alternating which went first): the ratio of
  // a pair is what drift of the machine's speed disturbs least.
  std::vector<double> pair_ratios;
  for (size_t i = 0; i < copse_s.size() && i < pipeline_s.size(); ++i) {
    pair_ratios.push_back(copse_s[i] / pipeline_s[i]);
  }
  Json out = {{"corpus_mb", o.corpus_mb},
              {"partitions", o.partitions},
              {"reducers", o.reducers},
              {"copse_s", copse_s},
              {"job_elapsed_s", job_s},
              {"pipeline_s", pipeline_s},
              {"copse_median_s", Median(copse_s)},
              {"pipeline_median_s", Median(pipeline_s)},
              {"ratio", Median(pair_ratios)},
              {"pair_ratios", pair_ratios},
              {"ratio_of_medians", Median(copse_s) / Median(pipeline_s)},
              {"outputs_match", *matched},
              {"identity_records", lines},
              {"identity_job_s", identity_s},
              {"identity_records_per_s", identity_s > 0 ? lines / identity_s : 0.0},
              {"identity_records_per_vertex_s", vertex_s > 0 ? lines / vertex_s : 0.0}};
  return out;
}

// ---- launch latency -------------------------------------------------------------

Result<int64_t> LaunchOf(const fs::path& config, const std::string& program,
                         const std::string& output) {
  Json spec = {
      {"name", "launch"},
      {"stages", {{{"name", "one"}, {"program", program}, {"vertices", 1}, {"output", output}}}}};
  const fs::path file = config.parent_path() / (output.substr(1) + ".json");
  std::ofstream(file) << DumpJson(spec);
  COPSE_ASSIGN_OR_RETURN(std::string said,
                         Copse(config, {"job", "submit", file.string(), "--wait"}));
  COPSE_ASSIGN_OR_RETURN(std::string hist,
                         Copse(config, {"job", "history", FirstLine(said), "--json"}));
  COPSE_ASSIGN_OR_RETURN(Json runs, ParseJson(hist, "a job history"));
  for (const Json& run : runs["runs"]) {
    if (run.value("label", "") != "root") return run.value("launch_us", int64_t{-1});
  }
  return Internal("the job's history has no vertex run");
}

Result<Json> Launch(const Options& o, const fs::path& dir) {
  client::LoopbackSpec spec;
  spec.name = "bench-sdk-launch";
  spec.racks = {1};
  spec.slots = 2;
  spec.max_running_jobs = 1;
  spec.log_level = "info";
  spec.extra_cluster_keys = "replication = 1\n";
  fs::create_directories(dir / "launch");
  COPSE_ASSIGN_OR_RETURN(auto cluster,
                         client::LoopbackCluster::Start(dir / "launch", spec, ExecutableDir()));
  const fs::path& config = cluster->config_path();
  const fs::path noop = cluster->config().apps_dir.empty()
                            ? ExecutableDir().parent_path() / "apps" / "noop"
                            : cluster->config().apps_dir / "noop";
  std::vector<double> apps_dir, first, cached;
  for (int i = 0; i < o.launches; ++i) {
    // A fresh content each round (noop with bytes after its end): a fresh hash.
    const fs::path copy = dir / fmt::format("shipped-{}", i);
    fs::copy_file(noop, copy, fs::copy_options::overwrite_existing);
    std::ofstream(copy, std::ios::app) << fmt::format("round {}\n", i);
    fs::permissions(copy, fs::perms::owner_all);
    COPSE_RETURN_IF_ERROR(Copse(config, {"app", "put", "shipped", copy.string()}).status());
    const std::string version = fmt::format("shipped@{}", i + 1);
    COPSE_ASSIGN_OR_RETURN(int64_t a, LaunchOf(config, "noop", fmt::format("/a{}", i)));
    COPSE_ASSIGN_OR_RETURN(int64_t f, LaunchOf(config, version, fmt::format("/f{}", i)));
    COPSE_ASSIGN_OR_RETURN(int64_t c, LaunchOf(config, version, fmt::format("/c{}", i)));
    apps_dir.push_back(a / 1000.0);
    first.push_back(f / 1000.0);
    cached.push_back(c / 1000.0);
  }
  auto summary = [](const std::vector<double>& v) {
    return Json{
        {"median_ms", Median(v)}, {"max_ms", *std::max_element(v.begin(), v.end())}, {"ms", v}};
  };
  return Json{{"program_bytes", fs::file_size(noop)},
              {"apps_directory", summary(apps_dir)},
              {"shipped_first_run", summary(first)},
              {"shipped_cached", summary(cached)}};
}

int Main(const Options& o) {
  auto dir = client::RunDir::Create("copse-bench-sdk", o.keep);
  if (!dir.ok()) return (std::cerr << "copse-bench-sdk: " << dir.status().ToString() << "\n", 1);
  bool matched = false;
  Result<Json> streaming = Streaming(o, (*dir)->path(), &matched);
  if (!streaming.ok()) return (*dir)->Failed("copse-bench-sdk", streaming.status());
  Result<Json> launch = Launch(o, (*dir)->path());
  if (!launch.ok()) return (*dir)->Failed("copse-bench-sdk", launch.status());
  Json all = {{"streaming", *streaming}, {"launch", *launch}};
  if (o.json) {
    std::cout << DumpJson(all, 2) << "\n";
  } else {
    const Json& s = *streaming;
    std::cout << fmt::format(
        "streaming WordCount, {} MB in {} partitions, {} reducers ({} runs each, alternating):\n"
        "  Copse     median {:.2f} s (job elapsed {:.2f} s)\n"
        "  pipeline  median {:.2f} s (cat | mapper.py | sort | reducer.py, one machine)\n"
        "  ratio     {:.2f}, the median of the pairs' (target <= 1; of the medians {:.2f}); "
        "outputs {}\n"
        "  adapter   {:.0f} records/s of job time through `cat` ({:.0f} records/s per vertex)\n",
        s["corpus_mb"].get<int>(), s["partitions"].get<int>(), s["reducers"].get<int>(),
        s["copse_s"].size(), s["copse_median_s"].get<double>(),
        Median(s["job_elapsed_s"].get<std::vector<double>>()), s["pipeline_median_s"].get<double>(),
        s["ratio"].get<double>(), s["ratio_of_medians"].get<double>(), matched ? "match" : "DIFFER",
        s["identity_records_per_s"].get<double>(),
        s["identity_records_per_vertex_s"].get<double>());
    const Json& l = *launch;
    std::cout << fmt::format(
        "launch latency ({} one-vertex jobs each, program {} bytes):\n"
        "  apps directory      median {:.1f} ms, max {:.1f} ms\n"
        "  shipped, first run  median {:.1f} ms, max {:.1f} ms (fetched, checked, cached)\n"
        "  shipped, cached     median {:.1f} ms, max {:.1f} ms\n",
        l["apps_directory"]["ms"].size(), l["program_bytes"].get<uint64_t>(),
        l["apps_directory"]["median_ms"].get<double>(), l["apps_directory"]["max_ms"].get<double>(),
        l["shipped_first_run"]["median_ms"].get<double>(),
        l["shipped_first_run"]["max_ms"].get<double>(),
        l["shipped_cached"]["median_ms"].get<double>(),
        l["shipped_cached"]["max_ms"].get<double>());
  }
  return matched ? 0 : 1;
}

}  // namespace
}  // namespace copse::bench

int main(int argc, char** argv) {
  CLI::App app{"copse-bench-sdk: streaming vertices and shipped programs, measured"};
  copse::bench::Options o;
  app.add_option("--corpus-mb", o.corpus_mb, "the WordCount corpus, in MB (default 30)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--partitions", o.partitions, "its partitions (default 12)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--reducers", o.reducers,
                 "reduce vertices (default 2: one per core of a two-core machine)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--repeats", o.repeats, "runs of each side (default 5)")
      ->check(CLI::Range(1, 100));
  app.add_option("--launches", o.launches, "one-vertex jobs of each kind (default 5)")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--json", o.json, "print one JSON document");
  app.add_flag("--keep", o.keep, "keep the temporary cluster directories");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return copse::bench::Main(o);
}

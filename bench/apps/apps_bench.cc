// copse-bench-apps (`copse bench apps`): each sample app end to end on a
// local cluster, beside a single-process tool doing the same work on the
// same data in the same run.
//
//   copse-bench-apps [--apps LIST] [--sort-mb M] [--join-scale X]
//                    [--wordcount-mb M] [--prime-integers N] [--pagerank-mb M]
//                    [--repeats R] [--slots S] [--quick] [--json] [--keep]
//
// For each app it brings up a cluster of its own on loopback with `copse
// cluster up` (the shape of cluster-configs/local.toml: two racks of three
// computers, two slots each unless --slots says otherwise, K = 4) in a
// temporary directory, from the executables beside it; writes the app's
// input with `copse gen` (8 partitions, the scale chosen for the size asked)
// and copies it to a local file with `copse fs get` (neither timed). Then,
// R times, alternating which goes first, it times
//   Copse  `copse run APP --input ... --output ... --wait`, from the command's
//          start to its end (the job's elapsed time as the master records it
//          is kept beside it)
//   tool   the single-process tool on the local copy:
//            sort          LC_ALL=C sort -S 2G -o OUT IN; sync OUT
//            databasejoin  sqlite3 importing both tables into :memory: and
//                          running the documented query (docs/apps/
//                          databasejoin.md); the query alone is timed too
//            wordcount     the coreutils pipeline the tests check against
//            prime         a count here, one thread, by trial division by
//                          every d from 2 to n - 1 (the paper's naive test)
//            pagerank      a computation here, one thread: the graph parsed
//                          into CSR arrays, 3 iterations, damping 0.85
//                          (docs/apps/pagerank.md), written as the app writes
// and checks Copse's output against the tool's: byte for byte (sort,
// databasejoin, wordcount), the count (prime), every rank within a relative
// 1e-9 (pagerank). It reports the min and median of each side and their
// ratio. Target: every app within 3x of its tool; reported, not
// enforced. Exit 0 when everything ran and every output matched, 1
// otherwise, 2 on bad usage.
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "bench/sim/metrics.h"
#include "client/loopback_cluster.h"
#include "client/master_client.h"
#include "common/config.h"
#include "common/json.h"
#include "common/process.h"
#include "common/subprocess.h"

namespace copse::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

constexpr int kPartitions = 8;
constexpr double kTarget = 3.0;  // Copse within 3x of the tool
const std::vector<std::string> kApps = {"sort", "databasejoin", "wordcount", "prime", "pagerank"};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Status WriteFile(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return IoError("cannot write " + path.string());
  return Status::Ok();
}

// Runs PROGRAM ARGS... to completion; its stdout, or an error with its stderr.
Result<std::string> Run(const fs::path& program, std::vector<std::string> args,
                        std::chrono::seconds bound) {
  SpawnOptions o;
  o.program = program;
  o.args = std::move(args);
  COPSE_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(std::move(o), bound, 1u << 26));
  if (!r.status.ok()) {
    return Internal(fmt::format("{}: {}: {}", program.string(), r.status.ToString(), r.err));
  }
  return r.out;
}

// Runs `copse --config CONFIG ARGS...` from beside this executable.
Result<std::string> Copse(const fs::path& config, std::vector<std::string> args,
                          std::chrono::seconds bound = std::chrono::seconds(3600)) {
  return client::RunCopse(ExecutableDir(), config, std::move(args), bound);
}

// Runs a /bin/sh script with $0, $1, ... bound to `args`.
Result<std::string> Shell(const std::string& script, std::vector<std::string> args) {
  args.insert(args.begin(), {"-c", script});
  return Run("/bin/sh", std::move(args), std::chrono::seconds(3600));
}

// ---- the tools -------------------------------------------------------------------

struct ToolRun {
  double seconds = 0;
  double query_seconds = -1;  // databasejoin: the query alone, as sqlite3 times it
};

// GNU sort as the paper's Sort would be done on one computer, synced to disk.
Result<ToolRun> SortTool(const std::vector<fs::path>& in, const fs::path& out) {
  auto start = Clock::now();
  COPSE_RETURN_IF_ERROR(
      Shell("LC_ALL=C sort -S 2G -o \"$1\" \"$0\" && sync \"$1\"", {in[0], out}).status());
  return ToolRun{Seconds(Clock::now() - start)};
}

// sqlite3 importing both tables (in[0] small, in[1] big) and running the
// query into `out`; the query's own time from sqlite3's `.timer`.
Result<ToolRun> JoinTool(const std::vector<fs::path>& in, const fs::path& out) {
  const fs::path script = out.string() + ".sql";
  COPSE_RETURN_IF_ERROR(WriteFile(
      script, fmt::format("CREATE TABLE small(key INTEGER, tag TEXT);\n"
                          "CREATE TABLE big(key INTEGER, ref INTEGER, payload TEXT);\n"
                          ".mode list\n.separator |\n"
                          ".import '{}' small\n.import '{}' big\n.output '{}'\n.timer on\n"
                          "SELECT b2.key, s.key, s.tag, b2.payload\n"
                          "FROM small s JOIN big b1 ON b1.key = s.key "
                          "JOIN big b2 ON b2.key = b1.ref\n"
                          "ORDER BY b2.key, s.key, s.tag, b2.payload;\n",
                          in[0].string(), in[1].string(), out.string())));
  auto start = Clock::now();
  COPSE_ASSIGN_OR_RETURN(std::string said, Shell("sqlite3 -batch :memory: < \"$0\"", {script}));
  ToolRun run{Seconds(Clock::now() - start)};
  const std::string mark = "Run Time: real ";
  size_t at = said.find(mark);
  if (at == std::string::npos) return Internal("sqlite3 printed no timing: " + said);
  run.query_seconds = std::strtod(said.c_str() + at + mark.size(), nullptr);
  return run;
}

// The coreutils word count the tests check WordCount against
// (tests/harness/cluster_fixture.h).
Result<ToolRun> WordCountTool(const std::vector<fs::path>& in, const fs::path& out) {
  auto start = Clock::now();
  COPSE_RETURN_IF_ERROR(
      Shell("LC_ALL=C tr -s ' \\t\\n\\v\\f\\r' '\\n\\n\\n\\n\\n\\n' < \"$0\" | LC_ALL=C grep -v "
            "'^$' | LC_ALL=C sort | LC_ALL=C uniq -c | LC_ALL=C awk '{print $2 \"\\t\" $1}' | "
            "LC_ALL=C sort -t \"$(printf '\\t')\" -k2,2nr -k1,1 > \"$1\"",
            {in[0], out})
          .status());
  return ToolRun{Seconds(Clock::now() - start)};
}

// The paper's naive primality test: trial division by every d in [2, n),
// in 32-bit arithmetic where n fits (as the app does: its division is
// several times faster, and the tool should not be handicapped).
template <typename T>
bool TrialDivision(T n) {
  for (T d = 2; d < n; ++d) {
    if (n % d == 0) return false;
  }
  return n >= 2;
}

bool NaivePrime(uint64_t n) {
  return n <= UINT32_MAX ? TrialDivision(static_cast<uint32_t>(n)) : TrialDivision(n);
}

// Reads one decimal integer a line and writes the number of primes.
Result<ToolRun> PrimeTool(const std::vector<fs::path>& in, const fs::path& out) {
  auto start = Clock::now();
  COPSE_ASSIGN_OR_RETURN(std::string text, ReadFile(in[0]));
  int64_t primes = 0;
  for (const char *p = text.data(), *end = p + text.size(); p < end;) {
    const char* eol = std::find(p, end, '\n');
    uint64_t n = 0;
    if (eol > p) {
      auto [ptr, ec] = std::from_chars(p, eol, n);
      if (ec != std::errc() || ptr != eol) return InvalidArgument("prime input: a bad line");
      primes += NaivePrime(n) ? 1 : 0;
    }
    p = eol + 1;
  }
  COPSE_RETURN_IF_ERROR(WriteFile(out, fmt::format("{}\n", primes)));
  return ToolRun{Seconds(Clock::now() - start)};
}

// A graph as compressed sparse rows: vertex v's targets are
// targets[first[v] .. first[v + 1]).
struct Graph {
  std::vector<uint64_t> first;
  std::vector<uint32_t> targets;
};

// Parses `v<TAB>t1 t2 ...` lines (any order, every id 0..V-1 once).
Result<Graph> ParseGraph(std::string_view text) {
  std::vector<uint32_t> line_vertex;
  std::vector<uint64_t> line_end;  // into `flat`, per line
  std::vector<uint32_t> flat;
  for (const char *p = text.data(), *end = p + text.size(); p < end;) {
    const char* eol = std::find(p, end, '\n');
    uint32_t v = 0;
    auto r = std::from_chars(p, eol, v);
    if (r.ec != std::errc() || r.ptr == eol || *r.ptr != '\t') {
      return InvalidArgument("pagerank input: a bad line");
    }
    for (const char* q = r.ptr + 1; q < eol;) {
      uint32_t t = 0;
      auto rt = std::from_chars(q, eol, t);
      if (rt.ec != std::errc()) return InvalidArgument("pagerank input: a bad target");
      flat.push_back(t);
      q = rt.ptr < eol ? rt.ptr + 1 : eol;
    }
    line_vertex.push_back(v);
    line_end.push_back(flat.size());
    p = eol + 1;
  }
  const size_t n = line_vertex.size();
  Graph g;
  g.first.assign(n + 1, 0);
  std::vector<uint64_t> line_of(n, UINT64_MAX);
  for (size_t i = 0; i < n; ++i) {
    uint32_t v = line_vertex[i];
    if (v >= n || line_of[v] != UINT64_MAX) return InvalidArgument("pagerank input: bad ids");
    line_of[v] = i;
    g.first[v + 1] = line_end[i] - (i == 0 ? 0 : line_end[i - 1]);
  }
  for (size_t v = 0; v < n; ++v) g.first[v + 1] += g.first[v];
  g.targets.resize(flat.size());
  for (size_t v = 0; v < n; ++v) {
    uint64_t from = line_of[v] == 0 ? 0 : line_end[line_of[v] - 1];
    std::copy(flat.begin() + static_cast<int64_t>(from),
              flat.begin() + static_cast<int64_t>(line_end[line_of[v]]),
              g.targets.begin() + static_cast<int64_t>(g.first[v]));
  }
  for (uint32_t t : g.targets) {
    if (t >= n) return InvalidArgument("pagerank input: an edge to a vertex without a line");
  }
  return g;
}

// r_{t+1}(v) = (1-d)/V + d (sum over u->v of r_t(u)/outdeg(u) + D_t/V).
std::vector<double> PageRanks(const Graph& g, int iterations, double d) {
  const size_t n = g.first.size() - 1;
  const double vn = static_cast<double>(n);
  std::vector<double> rank(n, 1.0 / vn), next(n);
  for (int it = 0; it < iterations; ++it) {
    std::fill(next.begin(), next.end(), 0.0);
    double dangling = 0;
    for (size_t u = 0; u < n; ++u) {
      uint64_t b = g.first[u], e = g.first[u + 1];
      if (b == e) {
        dangling += rank[u];
        continue;
      }
      double share = rank[u] / static_cast<double>(e - b);
      for (uint64_t i = b; i < e; ++i) next[g.targets[i]] += share;
    }
    for (size_t v = 0; v < n; ++v) next[v] = (1 - d) / vn + d * (next[v] + dangling / vn);
    rank.swap(next);
  }
  return rank;
}

// The graph's ranks after 3 iterations, written as the app writes them: the
// output's partitions (vertices v mod P) in order, `v<TAB>%.17g` lines.
Result<ToolRun> PageRankTool(const std::vector<fs::path>& in, const fs::path& out) {
  auto start = Clock::now();
  COPSE_ASSIGN_OR_RETURN(std::string text, ReadFile(in[0]));
  COPSE_ASSIGN_OR_RETURN(Graph g, ParseGraph(text));
  std::vector<double> rank = PageRanks(g, 3, 0.85);
  std::string lines;
  char buf[64];
  for (size_t p = 0; p < kPartitions; ++p) {
    for (size_t v = p; v < rank.size(); v += kPartitions) {
      int len = std::snprintf(buf, sizeof buf, "%zu\t%.17g\n", v, rank[v]);
      lines.append(buf, static_cast<size_t>(len));
    }
  }
  COPSE_RETURN_IF_ERROR(WriteFile(out, lines));
  return ToolRun{Seconds(Clock::now() - start)};
}

// ---- comparing outputs --------------------------------------------------------------

// Empty when the outputs match; else what differs.
using Verdict = std::string;

Result<Verdict> SameBytes(const fs::path& a, const fs::path& b) {
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  if (!x || !y) return IoError("cannot open " + a.string() + " or " + b.string());
  std::vector<char> bx(1 << 20), by(1 << 20);
  for (uint64_t at = 0;;) {
    x.read(bx.data(), static_cast<std::streamsize>(bx.size()));
    y.read(by.data(), static_cast<std::streamsize>(by.size()));
    size_t nx = static_cast<size_t>(x.gcount()), ny = static_cast<size_t>(y.gcount());
    size_t common = std::min(nx, ny);
    auto diff = std::mismatch(bx.begin(), bx.begin() + static_cast<int64_t>(common), by.begin());
    if (diff.first != bx.begin() + static_cast<int64_t>(common) || nx != ny) {
      return fmt::format("first difference at byte {} (sizes {} and {})",
                         at + static_cast<uint64_t>(diff.first - bx.begin()), fs::file_size(a),
                         fs::file_size(b));
    }
    if (nx == 0) return Verdict();
    at += nx;
  }
}

Result<Verdict> SameCount(const fs::path& a, const fs::path& b) {
  COPSE_ASSIGN_OR_RETURN(std::string x, ReadFile(a));
  COPSE_ASSIGN_OR_RETURN(std::string y, ReadFile(b));
  auto number = [](const std::string& s) {
    int64_t n = -1;
    auto r = std::from_chars(s.data(), s.data() + s.size(), n);
    return r.ec == std::errc() && std::string_view(r.ptr) == "\n" ? n : -1;
  };
  if (number(x) < 0 || number(x) != number(y)) {
    return fmt::format("Copse counted '{}', the tool '{}'", x, y);
  }
  return Verdict();
}

// Both files list the same vertices in the same order, every rank within a
// relative 1e-9.
Result<Verdict> SameRanks(const fs::path& a, const fs::path& b) {
  std::ifstream x(a), y(b);
  std::string lx, ly;
  for (int64_t line = 1;; ++line) {
    bool gx = static_cast<bool>(std::getline(x, lx)), gy = static_cast<bool>(std::getline(y, ly));
    if (!gx || !gy) {
      return gx == gy ? Verdict() : fmt::format("line counts differ (at line {})", line);
    }
    size_t tx = lx.find('\t'), ty = ly.find('\t');
    if (tx == std::string::npos || lx.substr(0, tx) != ly.substr(0, ty)) {
      return fmt::format("line {}: vertices differ ('{}' and '{}')", line, lx, ly);
    }
    double rx = std::strtod(lx.c_str() + tx + 1, nullptr);
    double ry = std::strtod(ly.c_str() + ty + 1, nullptr);
    if (!(std::fabs(rx - ry) <= 1e-9 * std::fabs(ry))) {
      return fmt::format("line {}: ranks differ ('{}' and '{}')", line, lx, ly);
    }
  }
}

// ---- one app ------------------------------------------------------------------------

struct Options {
  std::vector<std::string> apps = kApps;
  int sort_mb = 500;
  double join_scale = 0.005;
  int wordcount_mb = 200;
  int prime_integers = 200'000;
  int pagerank_mb = 200;
  int repeats = 2;
  int slots = 2;  // per computer
  bool quick = false;
  bool json = false;
  bool keep = false;
};

// What `copse gen` makes for an app, and the tool that does its work.
struct AppPlan {
  std::string gen_kind;
  double scale = 0;
  std::vector<std::string> inputs;  // DFS files `copse gen --output /in` writes
  Result<ToolRun> (*tool)(const std::vector<fs::path>&, const fs::path&);
  Result<Verdict> (*compare)(const fs::path& copse, const fs::path& tool);
};

AppPlan PlanFor(const std::string& app, const Options& o) {
  const double p = kPartitions;
  if (app == "sort") {  // 4 GB a partition at scale 1
    return {"sort", o.sort_mb * 1e6 / (p * 4e9), {"/in"}, SortTool, SameBytes};
  }
  if (app == "databasejoin") {
    return {"databasejoin", o.join_scale, {"/in/small", "/in/big"}, JoinTool, SameBytes};
  }
  if (app == "wordcount") {  // 50 MB a partition at scale 1
    return {"wordcount", o.wordcount_mb * 1e6 / (p * 50e6), {"/in"}, WordCountTool, SameBytes};
  }
  if (app == "prime") {  // 40,000 integers a partition at scale 1
    return {"prime_small", o.prime_integers / (p * 40'000), {"/in"}, PrimeTool, SameCount};
  }
  return {"pagerank", o.pagerank_mb * 1e6 / (p * 1e9), {"/in"}, PageRankTool, SameRanks};
}

struct Trial {
  double copse_s = 0;
  double job_s = 0;  // the master's elapsed time of the job
  ToolRun tool;
  Verdict verdict;
};

// One timed `copse run --wait`, its output fetched and compared with the
// tool's.
Result<Trial> CopseRun(const std::string& app, const AppPlan& plan, const fs::path& config,
                       client::MasterClient& master, const fs::path& dir, int r) {
  Trial t;
  std::string inputs;
  for (const std::string& in : plan.inputs) inputs += (inputs.empty() ? "" : ",") + in;
  const std::string out = fmt::format("/out{}", r);
  auto start = Clock::now();
  COPSE_ASSIGN_OR_RETURN(std::string said,
                         Copse(config, {"run", app, "--input", inputs, "--output", out, "--wait"}));
  t.copse_s = Seconds(Clock::now() - start);
  uint64_t job = std::strtoull(said.c_str(), nullptr, 10);
  COPSE_ASSIGN_OR_RETURN(std::string status, master.JobStatus(job));
  t.job_s = Json::parse(status).value("elapsed_s", 0.0);
  COPSE_RETURN_IF_ERROR(Copse(config, {"fs", "get", out, (dir / "copse.out").string()}).status());
  COPSE_RETURN_IF_ERROR(Copse(config, {"fs", "rm", out}).status());
  return t;
}

uint64_t CountLines(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  uint64_t n = 0;
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    n += static_cast<uint64_t>(
        std::count(buf.begin(), buf.begin() + static_cast<int64_t>(in.gcount()), '\n'));
  }
  return n;
}

// The app's line of the report: sizes, each side's times, the ratio of the
// medians, whether every output matched.
Json Summarize(const std::string& app, const AppPlan& plan, const std::vector<fs::path>& local,
               const std::vector<Trial>& trials) {
  Json j = {{"app", app}, {"partitions", kPartitions}, {"scale", plan.scale}};
  uint64_t bytes = 0;
  for (const fs::path& f : local) {
    j["input_bytes"].push_back(fs::file_size(f));
    bytes += fs::file_size(f);
  }
  if (app == "databasejoin") {
    j["size"] = fmt::format("{:.1f}+{:.1f} MB", fs::file_size(local[0]) / 1e6,
                            fs::file_size(local[1]) / 1e6);
  } else if (app == "prime") {
    j["size"] = fmt::format("{} integers", CountLines(local[0]));
  } else if (app == "pagerank") {
    j["size"] = fmt::format("{:.1f} MB, {} vertices", bytes / 1e6, CountLines(local[0]));
  } else {
    j["size"] = fmt::format("{:.1f} MB", bytes / 1e6);
  }
  std::vector<double> copse, job, tool, query;
  bool matched = true;
  for (const Trial& t : trials) {
    copse.push_back(t.copse_s);
    job.push_back(t.job_s);
    tool.push_back(t.tool.seconds);
    if (t.tool.query_seconds >= 0) query.push_back(t.tool.query_seconds);
    if (!t.verdict.empty()) {
      matched = false;
      j["mismatch"] = t.verdict;
    }
  }
  auto side = [](const std::vector<double>& v) {
    return Json{
        {"runs_s", v}, {"min_s", *std::min_element(v.begin(), v.end())}, {"median_s", Median(v)}};
  };
  j["copse"] = side(copse);
  j["job_elapsed"] = side(job);
  j["tool"] = side(tool);
  j["ratio"] = Median(copse) / Median(tool);
  j["ratio_of_mins"] = j["copse"]["min_s"].get<double>() / j["tool"]["min_s"].get<double>();
  if (!query.empty()) {
    j["tool_query_alone"] = side(query);
    j["ratio_query_alone"] = Median(copse) / Median(query);
  }
  j["within_3x"] = j["ratio"].get<double>() <= kTarget;
  j["matched"] = matched;
  return j;
}

// Generates the input, fetches it, and runs both sides `repeats` times.
Result<Json> BenchApp(const std::string& app, const Options& o, const fs::path& dir) {
  const AppPlan plan = PlanFor(app, o);
  const client::LoopbackSpec spec = client::LocalShape("bench-apps", o.slots, "QFP", "info");
  COPSE_ASSIGN_OR_RETURN(auto cluster, client::LoopbackCluster::Start(dir, spec, ExecutableDir()));
  const fs::path config = cluster->config_path();
  COPSE_ASSIGN_OR_RETURN(
      auto master, client::MasterClient::Connect(cluster->config(), std::chrono::seconds(30)));
  COPSE_RETURN_IF_ERROR(
      Copse(config, {"gen", plan.gen_kind, "--output", "/in", "--partitions",
                     std::to_string(kPartitions), "--scale", fmt::format("{:.9g}", plan.scale)})
          .status());
  std::vector<fs::path> local;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    local.push_back(dir / fmt::format("input{}.txt", i));
    COPSE_RETURN_IF_ERROR(Copse(config, {"fs", "get", plan.inputs[i], local.back()}).status());
  }
  std::vector<Trial> trials;
  for (int r = 0; r < o.repeats; ++r) {
    Trial t;
    auto tool = [&]() -> Status {
      COPSE_ASSIGN_OR_RETURN(t.tool, plan.tool(local, dir / "tool.out"));
      return Status::Ok();
    };
    if (r % 2 == 1) COPSE_RETURN_IF_ERROR(tool());
    COPSE_ASSIGN_OR_RETURN(Trial c, CopseRun(app, plan, config, *master, dir, r));
    t.copse_s = c.copse_s;
    t.job_s = c.job_s;
    if (r % 2 == 0) COPSE_RETURN_IF_ERROR(tool());
    COPSE_ASSIGN_OR_RETURN(t.verdict, plan.compare(dir / "copse.out", dir / "tool.out"));
    trials.push_back(t);
  }
  return Summarize(app, plan, local, trials);
}

// ---- the whole run -------------------------------------------------------------------

void PrintTable(const Json& out) {
  std::cout << fmt::format(
      "copse bench apps: {} partitions, {} slots, {} repeats (Copse: `copse run --wait`; "
      "ratio: median Copse / median tool)\n",
      kPartitions, out["slots"].get<int>(), out["repeats"].get<int>());
  std::cout << fmt::format("  {:<13} {:<26} {:>17} {:>17} {:>7}  {:<9} {}\n", "app", "size",
                           "Copse min/med s", "tool min/med s", "ratio", "target<=3x", "output");
  for (const Json& a : out["apps"]) {
    if (a.contains("error")) {
      std::cout << fmt::format("  {:<13} FAILED: {}\n", a["app"].get<std::string>(),
                               a["error"].get<std::string>());
      continue;
    }
    auto times = [](const Json& s) {
      return fmt::format("{:.2f}/{:.2f}", s["min_s"].get<double>(), s["median_s"].get<double>());
    };
    std::cout << fmt::format(
        "  {:<13} {:<26} {:>17} {:>17} {:>6.2f}x  {:<10} {}\n", a["app"].get<std::string>(),
        a["size"].get<std::string>(), times(a["copse"]), times(a["tool"]), a["ratio"].get<double>(),
        a["within_3x"].get<bool>() ? "met" : "NOT met",
        a["matched"].get<bool>() ? "matched" : "MISMATCH: " + a["mismatch"].get<std::string>());
    if (a.contains("tool_query_alone")) {
      std::cout << fmt::format(
          "  {:<13} {:<26} {:>17} {:>17} {:>6.2f}x  (sqlite3's query alone, without the "
          "import; the headline counts import + query)\n",
          "", "", "", times(a["tool_query_alone"]), a["ratio_query_alone"].get<double>());
    }
  }
}

int RunAll(const Options& o) {
  auto run_dir = client::RunDir::Create("copse-bench-apps", o.keep);
  if (!run_dir.ok()) {
    std::cerr << "copse-bench-apps: " << run_dir.status().ToString() << "\n";
    return 1;
  }
  Json out = {{"partitions", kPartitions},
              {"slots", 6 * o.slots},
              {"repeats", o.repeats},
              {"apps", Json::array()}};
  bool ok = true;
  for (const std::string& app : o.apps) {
    const fs::path dir = (*run_dir)->path() / app;
    fs::create_directories(dir);
    if (!o.json) std::cerr << "copse-bench-apps: " << app << "...\n";
    Result<Json> r = BenchApp(app, o, dir);
    if (!r.ok()) {
      std::cerr << "copse-bench-apps: " << app << ": " << r.status().ToString() << " (logs in "
                << dir.string() << ")\n";
      (*run_dir)->Keep();
      out["apps"].push_back({{"app", app}, {"error", r.status().ToString()}});
      ok = false;
      continue;
    }
    ok = ok && (*r)["matched"].get<bool>();
    out["apps"].push_back(*r);
  }
  out["all_matched"] = ok;
  if (o.json) {
    std::cout << DumpJson(out, 2) << "\n";
  } else {
    PrintTable(out);
  }
  return ok ? 0 : 1;
}

// Checks --apps; an error naming the bad entry, or empty.
std::string CheckApps(const std::vector<std::string>& apps) {
  if (apps.empty()) return "--apps: name at least one app";
  std::set<std::string> seen;
  for (const std::string& a : apps) {
    if (std::find(kApps.begin(), kApps.end(), a) == kApps.end()) {
      return fmt::format("--apps: unknown app '{}' (expected {})", a, fmt::join(kApps, ", "));
    }
    if (!seen.insert(a).second) return fmt::format("--apps: '{}' named twice", a);
  }
  return "";
}

}  // namespace
}  // namespace copse::bench

int main(int argc, char** argv) {
  CLI::App app{"copse-bench-apps: each sample app end to end against a single-process tool"};
  copse::bench::Options o;
  app.add_option("--apps", o.apps, "apps to run, comma-separated (default: all five)")
      ->delimiter(',');
  auto* sort_mb = app.add_option("--sort-mb", o.sort_mb, "Sort's input, in MB (default 500)")
                      ->check(CLI::Range(1, 100000));
  auto* join = app.add_option("--join-scale", o.join_scale,
                              "DatabaseJoin's `copse gen --scale` (default 0.005: tables of "
                              "59 and 209 MB)")
                   ->check(CLI::Range(1e-6, 1.0));
  auto* wc =
      app.add_option("--wordcount-mb", o.wordcount_mb, "WordCount's input, in MB (default 200)")
          ->check(CLI::Range(1, 100000));
  auto* prime = app.add_option("--prime-integers", o.prime_integers,
                               "Prime's input, in integers (default 200000)")
                    ->check(CLI::Range(8, 100'000'000));
  auto* pr = app.add_option("--pagerank-mb", o.pagerank_mb, "PageRank's graph, in MB (default 200)")
                 ->check(CLI::Range(1, 100000));
  app.add_option("--repeats", o.repeats, "runs of each side (default 2)")
      ->check(CLI::Range(1, 100));
  app.add_option("--slots", o.slots, "slots on each of the 6 computers")->check(CLI::Range(1, 64));
  app.add_flag("--quick", o.quick,
               "small sizes (sort 20 MB, join scale 0.0005, wordcount 20 MB, prime 10000, "
               "pagerank 20 MB) unless given");
  app.add_flag("--json", o.json, "print one JSON document");
  app.add_flag("--keep", o.keep, "keep the temporary cluster directories");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (std::string bad = copse::bench::CheckApps(o.apps); !bad.empty()) {
    std::cerr << "copse-bench-apps: " << bad << "\n";
    return 2;
  }
  if (o.quick) {
    if (sort_mb->count() == 0) o.sort_mb = 20;
    if (join->count() == 0) o.join_scale = 0.0005;
    if (wc->count() == 0) o.wordcount_mb = 20;
    if (prime->count() == 0) o.prime_integers = 10'000;
    if (pr->count() == 0) o.pagerank_mb = 20;
  }
  ::signal(SIGPIPE, SIG_IGN);
  return copse::bench::RunAll(o);
}

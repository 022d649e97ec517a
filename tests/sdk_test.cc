// Your own code on the cluster (docs/sdk.md), end to end on a real local
// cluster: the install and the out-of-tree examples built against it (CMake
// and pkg-config), programs shipped with `copse app put` and pinned by hash,
// the worker's program cache, streaming vertices in Python and shell, and
// every way a shipped or streaming program can be refused or fail.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "client/master_client.h"
#include "common/net/auth.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "dfs/client.h"
#include "tests/harness/cluster_fixture.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

const std::filesystem::path kSource = COPSE_SOURCE_DIR;

// The sanitizers the tree was built with: a program built against its
// libraries is built with them too.
std::string SanitizerFlags() { return COPSE_TREE_SANITIZED ? "-fsanitize=address,undefined" : ""; }

std::string Lines(std::string text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

std::string Words(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  static const char* kWords[] = {"copse", "dryad", "quincy", "rack", "flow", "vertex",
                                 "stage", "job",   "error",  "warn", "info", "worker"};
  std::string s;
  while (s.size() < bytes) {
    s += kWords[rng() % 12];
    s += std::to_string(rng() % 400);
    s += rng() % 9 == 0 ? '\n' : ' ';
  }
  return s + "\n";
}

class SdkTest : public ClusterTest {
 protected:
  void SetUp() override {
    LocalClusterSpec spec;
    spec.extra_tables += "[streaming]\nsort_memory_mb = 1\nmax_record_bytes = 4096\n";
    spec.extra_tables += "[apps]\nmax_program_mb = 64\n";
    Start(spec, "QFP", "program_cache_mb = 64\n");
  }

  // `copse app put NAME FILE [extra...]`.
  CommandResult AppPut(const std::string& name, const std::filesystem::path& file,
                       std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"app", "put", name, file.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return Copse(args);
  }

  std::filesystem::path Script(const std::string& name, const std::string& text,
                               mode_t mode = 0755) {
    std::filesystem::path p = Local(name, text);
    ::chmod(p.c_str(), mode);
    return p;
  }

  // Submits a spec and waits for it; its final status.
  json RunSpec(const json& spec) { return Wait(Submit(spec)); }

  // Counts of each pattern's lines in `text`, as grep-count writes them.
  static std::string DirectGrepCount(const std::string& text,
                                     const std::vector<std::string>& pats) {
    std::map<std::string, int> n;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      for (const std::string& p : pats) n[p] += line.find(p) != std::string::npos;
    }
    std::string out;
    for (const auto& [p, c] : n) out += p + "\t" + std::to_string(c) + "\n";
    return out;
  }
};

TEST_F(SdkTest, OutOfTreeProgramsBuiltAgainstAnInstallRunInJobsBuiltInCppAndInJson) {
  const std::filesystem::path build = BinDir().parent_path();
  const std::filesystem::path prefix = dir_.path() / "prefix";
  CommandResult install =
      Exec("/usr/bin/cmake", {"--install", build.string(), "--prefix", prefix.string()});
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  for (const char* f :
       {"bin/copse", "bin/copse-master", "bin/copse-worker", "bin/copse-rootjob",
        "bin/copse-stream", "lib/copse/apps/wordcount", "include/copse/vertex.h",
        "include/copse/status.h", "include/copse/job.h", "include/copse/client.h",
        "lib/libcopse-vertex.so", "lib/libcopse-client.so", "lib/cmake/Copse/CopseConfig.cmake",
        "lib/cmake/Copse/CopseConfigVersion.cmake", "lib/pkgconfig/copse-vertex.pc",
        "lib/pkgconfig/copse-client.pc", "share/copse/dashboard/index.html"}) {
    EXPECT_TRUE(std::filesystem::exists(prefix / f)) << f;
  }
  // The public headers include only each other and the standard library.
  for (const auto& e : std::filesystem::directory_iterator(prefix / "include" / "copse")) {
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("#include", 0) != 0) continue;
      EXPECT_TRUE(line.find("<copse/") != std::string::npos || line.find('"') == std::string::npos)
          << e.path().filename() << ": " << line;
      EXPECT_EQ(line.find("common/"), std::string::npos) << line;
    }
  }

  // The examples, configured with find_package(Copse) against the install.
  const std::filesystem::path out = dir_.path() / "grep-build";
  std::vector<std::string> configure = {
      "-S",    (kSource / "examples" / "grep").string(), "-B", out.string(), "-G",
      "Ninja", "-DCMAKE_PREFIX_PATH=" + prefix.string()};
  if (!SanitizerFlags().empty()) configure.push_back("-DCMAKE_CXX_FLAGS=" + SanitizerFlags());
  CommandResult cfg = Exec("/usr/bin/cmake", configure);
  ASSERT_EQ(cfg.exit_code, 0) << cfg.out << cfg.err;
  CommandResult built = Exec("/usr/bin/cmake", {"--build", out.string()});
  ASSERT_EQ(built.exit_code, 0) << built.out << built.err;
  // The vertex once more with pkg-config alone.
  CommandResult pc = Exec(
      "/bin/sh",
      {"-c",
       fmt::format("export PKG_CONFIG_PATH={}/lib/pkgconfig; c++ {} {}/examples/grep/grep_count.cc "
                   "$(pkg-config --cflags --libs copse-vertex) -o {}/grep-count-pc",
                   prefix.string(), SanitizerFlags(), kSource.string(), dir_.path().string())});
  ASSERT_EQ(pc.exit_code, 0) << pc.out << pc.err;

  // Shipped through the DFS, with the installed tool.
  CommandResult put =
      Exec((prefix / "bin" / "copse").string(), {"--config", config_path_.string(), "app", "put",
                                                 "grep-count", (out / "grep-count").string()});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  EXPECT_NE(put.out.find("grep-count@1"), std::string::npos) << put.out;
  ASSERT_EQ(AppPut("grep-count-pc", dir_.path() / "grep-count-pc").exit_code, 0);

  const std::string text = Words(200'000, 11);
  Put(Local("logs.txt", text), "/logs", 3);
  const std::vector<std::string> patterns = {"error", "warn", "copse1"};
  const std::string want = DirectGrepCount(text, patterns);

  // The job built in C++.
  CommandResult job =
      Exec((out / "grep-job").string(),
           {"--config", config_path_.string(), "--program", "grep-count", "--input", "/logs",
            "--output", "/matches", "--patterns", "error,warn,copse1", "--sums", "2"});
  ASSERT_EQ(job.exit_code, 0) << job.out << job.err;
  EXPECT_EQ(Lines(job.out), want);
  EXPECT_NE(job.err.find("vertices done"), std::string::npos) << job.err;

  // The same graph as a JSON spec, with the pkg-config build.
  json spec = {{"name", "grep-json"},
               {"stages",
                {{{"name", "match"},
                  {"program", "grep-count-pc@1"},
                  {"params", {{"role", "match"}, {"patterns", "error,warn,copse1"}}},
                  {"inputs", {{{"file", "/logs"}}}}},
                 {{"name", "sum"},
                  {"program", "grep-count-pc"},
                  {"vertices", 2},
                  {"params", {{"role", "sum"}}},
                  {"inputs", {{{"stage", "match"}, {"connection", "all-to-all"}}}},
                  {"output", "/matches-json"}}}}};
  json st = RunSpec(spec);
  ASSERT_EQ(st["state"], "succeeded") << st.dump(2);
  EXPECT_EQ(Lines(Cat("/matches-json")), want);
  // Pinned: every stage names the version and hash it ran.
  const std::string sha = *Sha256OfFile(dir_.path() / "grep-count-pc");
  for (const json& p : st["programs"]) {
    EXPECT_EQ(p["program"], "grep-count-pc@1") << st["programs"];
    EXPECT_EQ(p["source"], "store");
    EXPECT_EQ(p["sha256"], sha);
  }
  // The program's own counters, summed over the job.
  size_t lines = std::count(text.begin(), text.end(), '\n');
  EXPECT_EQ(st["counters"]["lines_read"], lines) << st["counters"];
}

TEST_F(SdkTest, StreamingWordCountInPythonAndShellMatchesADirectCount) {
  // Big enough that a reducer's sort spills past 1 MiB.
  const std::string text = Words(3'000'000, 5);
  const std::filesystem::path local = Local("books.txt", text);
  Put(local, "/books", 4);
  const std::string want = Lines(CoreutilsWordCount(local));
  const std::filesystem::path py = kSource / "examples" / "wordcount-python";
  const std::filesystem::path sh = kSource / "examples" / "wordcount-shell";
  ASSERT_EQ(AppPut("wc-map", py / "mapper.py").exit_code, 0);
  ASSERT_EQ(AppPut("wc-reduce", py / "reducer.py").exit_code, 0);
  ASSERT_EQ(AppPut("wc-map-sh", sh / "mapper.sh").exit_code, 0);
  ASSERT_EQ(AppPut("wc-reduce-sh", sh / "reducer.sh").exit_code, 0);

  CommandResult python =
      Copse({"run", "streaming", "--mapper", "wc-map", "--reducer", "wc-reduce", "--input",
             "/books", "--output", "/counts-py", "--reducers", "2", "--wait"},
            seconds(240));
  ASSERT_EQ(python.exit_code, 0) << python.err;
  EXPECT_EQ(Lines(Cat("/counts-py")), want);
  json st = Status(IdOf(python));
  EXPECT_GT(st["counters"].value("stream.spilled_bytes", 0), 0) << st["counters"];

  // The shell pipeline, with a combiner: fewer records cross the shuffle.
  CommandResult shell = Copse(
      {"run", "streaming", "--mapper", "wc-map-sh", "--reducer", "wc-reduce-sh", "--combiner",
       "wc-reduce-sh", "--input", "/books", "--output", "/counts-sh", "--reducers", "3", "--wait"},
      seconds(240));
  ASSERT_EQ(shell.exit_code, 0) << shell.err;
  EXPECT_EQ(Lines(Cat("/counts-sh")), want);
  json combined = Status(IdOf(shell));
  EXPECT_LT(combined["counters"].value("stream.records_in", int64_t{0}),
            st["counters"].value("stream.records_in", int64_t{0}))
      << combined["counters"] << st["counters"];

  // Range-partitioned: each reducer's partition holds its own range, in order.
  CommandResult ranged =
      Copse({"run", "streaming", "--mapper", "wc-map", "--reducer", "wc-reduce", "--input",
             "/books", "--output", "/counts-ranged", "--reducers", "2", "--range", "m", "--wait"},
            seconds(240));
  ASSERT_EQ(ranged.exit_code, 0) << ranged.err;
  std::string all = Cat("/counts-ranged");
  EXPECT_EQ(Lines(all), want);
  std::string sorted_copy = all;
  EXPECT_EQ(Lines(all), Lines(sorted_copy));
  std::vector<std::string> keys;
  std::istringstream in(all);
  for (std::string l; std::getline(in, l);) keys.push_back(l.substr(0, l.find('\t')));
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end())) << "partitions not in key order";
}

TEST_F(SdkTest, AJobKeepsTheVersionItWasPinnedToWhileAnotherIsPut) {
  Put(Local("in.txt", "alpha\nbeta\n"), "/in", 1);
  ASSERT_EQ(AppPut("tag", Script("tag1.sh", "#!/bin/sh\nsed 's/^/v1 /'\n")).exit_code, 0);
  // The second stage waits 3 s (delay_s), long enough to put v2 meanwhile.
  auto spec = [](const std::string& out) {
    return json{{"name", "tagging"},
                {"stages",
                 {{{"name", "first"}, {"program", "tag"}, {"inputs", {{{"file", "/in"}}}}},
                  {{"name", "second"},
                   {"program", "tag"},
                   {"params", {{"delay_s", 3}}},
                   {"inputs", {{{"stage", "first"}}}},
                   {"output", out}}}}};
  };
  uint64_t first = Submit(spec("/tagged1"));
  ASSERT_EQ(AppPut("tag", Script("tag2.sh", "#!/bin/sh\nsed 's/^/v2 /'\n")).exit_code, 0);
  uint64_t second = Submit(spec("/tagged2"));
  json s1 = Wait(first), s2 = Wait(second);
  ASSERT_EQ(s1["state"], "succeeded") << s1.dump(2);
  ASSERT_EQ(s2["state"], "succeeded") << s2.dump(2);
  EXPECT_EQ(Cat("/tagged1"), "v1 v1 alpha\nv1 v1 beta\n");
  EXPECT_EQ(Cat("/tagged2"), "v2 v2 alpha\nv2 v2 beta\n");
  EXPECT_EQ(s1["programs"][0]["program"], "tag@1");
  EXPECT_EQ(s2["programs"][0]["program"], "tag@2");
  // Removing a version: refused while a job that has not ended uses it.
  uint64_t slow = Submit(json{{"name", "slow"},
                              {"stages",
                               {{{"name", "only"},
                                 {"program", "tag@1"},
                                 {"params", {{"delay_s", 30}}},
                                 {"inputs", {{{"file", "/in"}}}},
                                 {"output", "/slow"}}}}});
  CommandResult rm = Copse({"app", "rm", "tag@1"});
  EXPECT_EQ(rm.exit_code, 1);
  EXPECT_NE(rm.err.find(fmt::format("pinned by job {}", slow)), std::string::npos) << rm.err;
  ASSERT_EQ(Copse({"job", "kill", std::to_string(slow)}).exit_code, 0);
  rm = Copse({"app", "rm", "tag@1"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  CommandResult ls = Copse({"app", "ls", "--json"});
  ASSERT_EQ(ls.exit_code, 0);
  json programs = json::parse(ls.out)["programs"];
  ASSERT_EQ(programs.size(), 1u) << programs;
  EXPECT_EQ(programs[0]["version"], "2");
}

TEST_F(SdkTest, ACorruptCachedProgramIsFetchedAgainAndABadDfsCopyIsRefused) {
  Put(Local("in.txt", "one\ntwo\n"), "/in", 1);
  ASSERT_EQ(AppPut("upper", Script("upper.sh", "#!/bin/sh\ntr a-z A-Z\n")).exit_code, 0);
  auto spec = [](const std::string& out) {
    return json{{"name", "upper"},
                {"stages",
                 {{{"name", "only"},
                   {"program", "upper"},
                   {"inputs", {{{"file", "/in"}}}},
                   {"output", out}}}}};
  };
  ASSERT_EQ(RunSpec(spec("/u1"))["state"], "succeeded");
  const std::string sha = *Sha256OfFile(dir_.path() / "upper.sh");
  // Every cached copy, made wrong.
  int corrupted = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_.path() / "data")) {
    if (e.path().filename() == "program" && e.path().parent_path().filename() == sha) {
      ::chmod(e.path().c_str(), 0755);
      std::ofstream(e.path(), std::ios::binary) << "#!/bin/sh\necho tampered\n";
      ++corrupted;
    }
  }
  ASSERT_GT(corrupted, 0);
  json st = RunSpec(spec("/u2"));
  ASSERT_EQ(st["state"], "succeeded") << st.dump(2);
  EXPECT_EQ(Cat("/u2"), "ONE\nTWO\n");

  // A put whose commit names another content's hash (a client that lies,
  // or a file changed in the DFS): every worker refuses to run it.
  auto master = client::MasterClient::Connect(config_, seconds(10));
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  const std::string content = "#!/bin/sh\ncat\n";
  client::MasterClient::AppPutRequest req;
  req.name = "liar";
  req.size = content.size();
  auto prepared = (*master)->AppPut(req);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  req.version = json::parse(*prepared)["version"];
  auto secret = net::LoadSecret(config_.secret_file);
  ASSERT_TRUE(secret.ok());
  auto dfs = dfs::DfsClient::Connect(config_, *secret, {});
  ASSERT_TRUE(dfs.ok()) << dfs.status().ToString();
  dfs::CreateOptions co;
  co.program_store = true;
  ASSERT_TRUE((*dfs)->Create("/.apps/liar/" + req.version, co).ok());
  ASSERT_TRUE((*dfs)->BeginPartition(0).ok());
  ASSERT_TRUE(
      (*dfs)->Append({reinterpret_cast<const uint8_t*>(content.data()), content.size()}).ok());
  ASSERT_TRUE((*dfs)->EndPartition().ok());
  req.sha256 = Sha256Hex("content that nobody put\n");
  req.commit = true;
  ASSERT_TRUE((*master)->AppPut(req).ok());
  json lie = RunSpec(json{{"name", "liar"},
                          {"settings", {{"attempts", 1}}},
                          {"stages",
                           {{{"name", "only"},
                             {"program", "liar"},
                             {"inputs", {{{"file", "/in"}}}},
                             {"output", "/lie"}}}}});
  EXPECT_EQ(lie["state"], "failed");
  EXPECT_NE(lie["failure"].get<std::string>().find("refused"), std::string::npos) << lie;
  EXPECT_NE(lie["failure"].get<std::string>().find(req.sha256), std::string::npos) << lie;
}

TEST_F(SdkTest, PutsAreRefusedWithoutTheCredentialOverTheLimitOrWithABadName) {
  std::filesystem::path ok = Script("ok.sh", "#!/bin/sh\ncat\n");
  // Another cluster's secret: the master refuses the connection.
  std::filesystem::path other = dir_.path() / "other.toml";
  {
    std::ifstream in(config_path_);
    std::stringstream text;
    text << in.rdbuf();
    std::string c = text.str();
    size_t at = c.find("[cluster]\n");
    ASSERT_NE(at, std::string::npos) << c;
    c.insert(at + 10,
             fmt::format("secret_file = \"{}\"\n", (dir_.path() / "wrong.secret").string()));
    std::ofstream(other) << c;
    std::ofstream(dir_.path() / "wrong.secret") << std::string(64, 'f');
  }
  CommandResult denied = RunCopse("copse", {"--config", other.string(), "--master-wait", "0", "app",
                                            "put", "okp", ok.string()});
  EXPECT_EQ(denied.exit_code, 1);
  EXPECT_NE(denied.err.find("secret"), std::string::npos) << denied.err;
  // Over [apps] max_program_mb (64 here).
  std::filesystem::path big = dir_.path() / "big";
  std::filesystem::resize_file(Local("big", ""), (64u << 20) + 1);
  CommandResult too_big = AppPut("big", big);
  EXPECT_EQ(too_big.exit_code, 2) << too_big.err;
  EXPECT_NE(too_big.err.find("over the limit"), std::string::npos) << too_big.err;
  for (const std::string& bad : {std::string("Bad"), std::string("../x"), std::string("a b"),
                                 std::string("x@1"), std::string(70, 'a')}) {
    CommandResult r = AppPut(bad, ok);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
  }
  CommandResult shadow = AppPut("wordcount", ok);
  EXPECT_EQ(shadow.exit_code, 1) << shadow.err;
  EXPECT_NE(shadow.err.find("--shadow"), std::string::npos) << shadow.err;
  // Nothing of the refused puts is stored.
  CommandResult ls = Copse({"app", "ls", "--json"});
  EXPECT_TRUE(json::parse(ls.out)["programs"].empty()) << ls.out;
  // The store's area is the program store's alone.
  CommandResult sneak = Copse({"fs", "put", ok.string(), "/.apps/okp/1"});
  EXPECT_NE(sneak.exit_code, 0);
  EXPECT_NE(sneak.err.find("copse app put"), std::string::npos) << sneak.err;
}

TEST_F(SdkTest, StreamingProgramsThatCannotRunFailTheirJobSayingWhy) {
  Put(Local("in.txt", "a\nb\nc\n"), "/in", 1);
  struct Case {
    std::string name, script, why;
    mode_t mode = 0755;
  } cases[] = {
      {"noexec", "#!/bin/sh\ncat\n", "not executable", 0644},
      {"badinterp", "#!/nonexistent/python9\nprint(1)\n", "interpreter line"},
      {"crash", "#!/bin/sh\nkill -SEGV $$\n", "killed by signal 11"},
      {"longline", "#!/bin/sh\nhead -c 10000 /dev/zero | tr '\\0' x; echo\n",
       "longer than the limit"},
      {"exits", "#!/bin/sh\necho 'bad input, giving up' >&2; exit 3\n", "exit code 3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CommandResult put = AppPut(c.name, Script(c.name + ".sh", c.script, c.mode));
    ASSERT_EQ(put.exit_code, 0) << put.err;
    json st = RunSpec(json{{"name", c.name},
                           {"settings", {{"attempts", 2}}},
                           {"stages",
                            {{{"name", "only"},
                              {"program", c.name},
                              {"inputs", {{{"file", "/in"}}}},
                              {"output", "/out-" + c.name}}}}});
    EXPECT_EQ(st["state"], "failed") << st.dump(2);
    EXPECT_NE(st["failure"].get<std::string>().find(c.why), std::string::npos) << st["failure"];
  }
  CommandResult put = AppPut("noexec2", Script("noexec2.sh", "x", 0644));
  EXPECT_NE(put.err.find("no execute bit"), std::string::npos) << put.err;
}

// Length-prefixed records, as the binary framing lays them out.
std::string Frames(const std::vector<std::pair<std::string, std::string>>& records) {
  std::string out;
  auto len = [&out](size_t n) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>((n >> shift) & 0xff));
  };
  for (const auto& [k, v] : records) {
    len(k.size());
    out += k;
    len(v.size());
    out += v;
  }
  return out;
}

TEST_F(SdkTest, BinaryRecordsCarryKeysAndValuesThatTextCannot) {
  // Keys with a TAB, a newline and a NUL byte, which only the binary
  // framing holds: a mapper that reverses each key, a reducer that sums
  // each key's values, both reading and writing binary records.
  const std::string in =
      Frames({{"a\tb", "1"}, {"x\ny", "2"}, {std::string("\0z", 2), "3"}, {"a\tb", "4"}});
  Put(Local("frames.bin", in), "/frames", 1);
  const std::string read_records =
      "#!/usr/bin/python3\n"
      "import struct, sys\n"
      "inp, out = sys.stdin.buffer, sys.stdout.buffer\n"
      "def records():\n"
      "    while True:\n"
      "        h = inp.read(4)\n"
      "        if not h: return\n"
      "        k = inp.read(struct.unpack('>I', h)[0])\n"
      "        yield k, inp.read(struct.unpack('>I', inp.read(4))[0])\n"
      "def emit(k, v):\n"
      "    out.write(struct.pack('>I', len(k)) + k + struct.pack('>I', len(v)) + v)\n";
  ASSERT_EQ(AppPut("bin-map",
                   Script("bin-map.py", read_records + "for k, v in records(): emit(k[::-1], v)\n"))
                .exit_code,
            0);
  ASSERT_EQ(AppPut("bin-reduce",
                   Script("bin-reduce.py",
                          read_records + "totals = {}\n"
                                         "order = []\n"
                                         "for k, v in records():\n"
                                         "    if k not in totals: order.append(k)\n"
                                         "    totals[k] = totals.get(k, 0) + int(v)\n"
                                         "for k in order: emit(k, str(totals[k]).encode())\n"))
                .exit_code,
            0);
  json st = RunSpec(json{{"name", "binary"},
                         {"stages",
                          {{{"name", "map"},
                            {"program", "bin-map"},
                            {"inputs", {{{"file", "/frames"}}}},
                            {"streaming", {{"format", "binary"}}}},
                           {{"name", "reduce"},
                            {"program", "bin-reduce"},
                            {"vertices", 1},
                            {"inputs", {{{"stage", "map"}, {"connection", "all-to-all"}}}},
                            {"streaming", {{"format", "binary"}}},
                            {"output", "/frames-out"}}}}});
  ASSERT_EQ(st["state"], "succeeded") << st.dump(2);
  // The reducer saw its keys sorted, bytewise: "b\ta" < "y\nx" < "z\0".
  EXPECT_EQ(Cat("/frames-out"),
            Frames({{"b\ta", "5"}, {"y\nx", "2"}, {std::string("z\0", 2), "3"}}));
}

}  // namespace
}  // namespace copse::testing

// End-to-end tests of the execution engine: a real master and six workers
// (two racks of three computers, two slots each) on loopback, jobs submitted
// through `copse`, vertex programs from the build's apps directory, outputs
// checked against independent computations (coreutils, a direct count), and
// faults injected by killing processes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "apps/catalog.h"
#include "common/config.h"
#include "common/net/auth.h"
#include "common/net/blocking_client.h"
#include "common/net/message.h"
#include "common/process.h"
#include "common/subprocess.h"
#include "proto/scheduling.capnp.h"
#include "tests/harness/cluster_fixture.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A corpus of words from a skewed vocabulary, separated by every kind of
// ASCII whitespace (runs of it too), with a few long lines.
std::string Corpus(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> vocab;
  for (int i = 0; i < 400; ++i) {
    std::string w;
    int len = 1 + static_cast<int>(rng() % 9);
    for (int k = 0; k < len; ++k) w += static_cast<char>('a' + rng() % 26);
    if (i % 37 == 0) w += "-X";
    if (i % 53 == 0) w = "\xc3\xa9" + w;  // bytes above 127 are word bytes
    vocab.push_back(w);
  }
  const char* spaces[] = {" ", "  ", "\t", "\n", " \n", "\r\n", "\v", "\f", "\t \t"};
  std::string out;
  while (out.size() < bytes) {
    // Zipf-ish: low indices far more often.
    size_t r = static_cast<size_t>(rng() % 1000);
    size_t idx = (r * r) / 2500 % vocab.size();
    out += vocab[idx];
    out += spaces[rng() % 9];
  }
  out += "\n";
  return out;
}

class EngineTest : public ClusterTest {};

TEST_F(EngineTest, WordCountEqualsCoreutils) {
  std::filesystem::path corpus = Local("corpus.txt", Corpus(1'500'000, 7));
  Put(corpus, "/corpus", 4);
  CommandResult r = Copse(
      {"run", "wordcount", "--input", "/corpus", "--output", "/wc", "--partitions", "3", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  uint64_t job = IdOf(r);
  ASSERT_GT(job, 0u);
  EXPECT_EQ(Cat("/wc"), CoreutilsWordCount(corpus));
  json st = Status(job);
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_EQ(st["vertices"]["total"], 4 + 3 + 1 + 3);
  EXPECT_EQ(st["vertices"]["done"], st["vertices"]["total"]);
  const json& b = st["bytes_read"];
  EXPECT_GE(b["local"].get<int64_t>() + b["rack"].get<int64_t>() + b["core"].get<int64_t>(),
            1'500'000);
  // Each run's bytes by locality add up to the job's.
  json sum = {{"local", 0}, {"rack", 0}, {"core", 0}};
  for (const json& run : History(job)) {
    if (run["root"].get<bool>()) continue;
    for (const char* level : {"local", "rack", "core"}) {
      sum[level] = sum[level].get<int64_t>() + run["bytes_read"][level].get<int64_t>();
    }
  }
  EXPECT_EQ(sum, b);
  EXPECT_GT(st["records_written"].get<int64_t>(), 0);
  // The output has the partitions asked for and is listed once published.
  CommandResult ls = Copse({"fs", "stat", "/wc", "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(json::parse(ls.out)["partitions"].size(), 3u);
}

TEST_F(EngineTest, PrimeEqualsADirectCount) {
  std::mt19937_64 rng(3);
  std::string numbers;
  int primes = 0;
  for (int i = 0; i < 20000; ++i) {
    uint64_t n = rng() % 200'000;
    numbers += std::to_string(n) + "\n";
    bool prime = n >= 2;
    for (uint64_t d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
    primes += prime ? 1 : 0;
  }
  Put(Local("numbers.txt", numbers), "/numbers", 5);
  CommandResult r = Copse({"run", "prime", "--input", "/numbers", "--output", "/primes", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Cat("/primes"), std::to_string(primes) + "\n");
}

// ---- helpers for the fault tests ----------------------------------------------

// WordCount's spec as `copse run` builds it, with `delay_s` added to each
// count vertex (so that the job is still running when a fault strikes).
json WordCountSpec(const std::string& input, const std::string& output, int partitions,
                   double count_delay_s) {
  apps::RunOptions o;
  o.inputs = {input};
  o.output = output;
  o.partitions = partitions;
  json spec = json::parse(*apps::BuildJobSpec("wordcount", o));
  if (count_delay_s > 0) spec["stages"][0]["params"]["delay_s"] = count_delay_s;
  return spec;
}

int Count(const json& status, const std::string& stage, const std::string& what) {
  if (status.is_null()) return 0;
  for (const json& s : status["stages"]) {
    if (s["name"] == stage) return s.value(what, 0);
  }
  return 0;
}

// Polls `cond` every 100 ms for at most `bound`.
bool Until(const std::function<bool()>& cond, milliseconds bound = milliseconds(30000)) {
  return WaitFor(cond, bound);
}

TEST_F(EngineTest, BadInputIsRefusedClearlyAndTheDaemonsKeepRunning) {
  Put(Local("in.txt", "a b c\n"), "/in", 1);
  struct Case {
    std::string spec;
    int exit;
    std::string says;
  };
  std::vector<Case> cases = {
      {"{\"name\": ", 2, "malformed JSON"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "noop", "vertices": 1,
          "inputs": [{"stage": "b"}]}, {"name": "b", "program": "noop", "vertices": 1,
          "inputs": [{"stage": "a"}]}]})",
       2, "cycle"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "noop", "vertices": 1,
          "inputs": [{"stage": "ghost"}]}]})",
       2, "stage 'a': no stage 'ghost'"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "missing", "vertices": 1}]})", 2,
       "stage 'a': no program 'missing' in the program store or the apps directory"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "../../bin/copse", "vertices": 1}]})",
       2, "is a path"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "noop", "vertices": 2},
          {"name": "b", "program": "noop", "vertices": 3, "inputs": [{"stage": "a"}]}]})",
       2, "reads pointwise"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "noop", "vertices": 1,
          "params": "fast"}]})",
       2, "'params' must be a JSON object"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "noop",
          "inputs": [{"file": "/nothing"}]}]})",
       1, "job input /nothing does not exist"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "noop",
          "inputs": [{"file": "/in"}], "output": "/in"}]})",
       1, "job output /in exists already"},
  };
  for (const Case& c : cases) {
    std::filesystem::path p = Local("bad.json", c.spec);
    CommandResult r = Copse({"job", "submit", p.string()});
    EXPECT_EQ(r.exit_code, c.exit) << c.spec << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  CommandResult big =
      Copse({"job", "submit", Local("big.json", std::string(2 << 20, ' ')).string()});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("over the 1 MiB limit"), std::string::npos) << big.err;
  EXPECT_EQ(Copse({"job", "status", "424242"}).exit_code, 1);

  // A client without the secret is refused.
  std::string text = ReadProcFile(config_path_);
  std::filesystem::path other = dir_.path() / "other.toml";
  std::ofstream(other) << text << "\n";
  std::ofstream(dir_.path() / "wrong.secret") << "00112233445566778899aabbccddeeff\n";
  {
    std::string patched = ReadProcFile(other);
    size_t at = patched.find("[cluster]\n");
    patched.insert(at + 10, "secret_file = \"" + (dir_.path() / "wrong.secret").string() + "\"\n");
    std::ofstream(other) << patched;
  }
  CommandResult stranger = RunCopse("copse", {"--config", other.string(), "job", "list"});
  EXPECT_EQ(stranger.exit_code, 1);
  EXPECT_NE(stranger.err.find("authentication refused"), std::string::npos) << stranger.err;

  // Malformed frames on the new protocols close only that connection.
  auto secret = net::LoadSecret(config_.secret_file);
  ASSERT_TRUE(secret.ok());
  for (net::Protocol p : {net::Protocol::kJob, net::Protocol::kScheduling}) {
    auto ch = net::BlockingChannel::Connect("127.0.0.1", config_.master.port, *secret, "fuzzer",
                                            seconds(5));
    ASSERT_TRUE(ch.ok()) << ch.status().ToString();
    std::vector<uint8_t> garbage(64, 0xAB);
    ASSERT_TRUE((*ch)->Send(p, net::PayloadKind::kMessage, garbage, seconds(5)).ok());
    auto reply = (*ch)->Receive(seconds(5));
    EXPECT_FALSE(reply.ok()) << "the master answered garbage on " << net::ProtocolName(p);
  }
  // A root's message from a connection that never said hello.
  {
    auto ch = net::BlockingChannel::Connect("127.0.0.1", config_.master.port, *secret, "impostor",
                                            seconds(5));
    ASSERT_TRUE(ch.ok());
    capnp::MallocMessageBuilder msg;
    msg.initRoot<proto::SchedulingMessage>().initSubmitTasks();
    ASSERT_TRUE((*ch)
                    ->Send(net::Protocol::kScheduling, net::PayloadKind::kMessage,
                           net::EncodeMessage(msg), seconds(5))
                    .ok());
    EXPECT_FALSE((*ch)->Receive(seconds(5)).ok());
  }
  // Still serving: a job runs.
  std::string numbers = "2\n3\n4\n5\n";
  Put(Local("n.txt", numbers), "/n", 1);
  CommandResult ok = Copse({"run", "prime", "--input", "/n", "--output", "/p", "--wait"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(Cat("/p"), "3\n");
}

TEST_F(EngineTest, AProgramThatAlwaysFailsFailsTheJobWithItsLogTail) {
  json spec = {
      {"name", "doomed"},
      {"settings", {{"attempts", 2}}},
      {"stages",
       {{{"name", "s"}, {"program", "noop"}, {"vertices", 2}, {"params", {{"fail", true}}}}}}};
  uint64_t job = Submit(spec);
  CommandResult r = Copse({"job", "wait", std::to_string(job)});
  EXPECT_EQ(r.exit_code, 1);
  json st = Status(job);
  EXPECT_EQ(st["state"], "failed");
  std::string why = st["failure"];
  EXPECT_NE(why.find("failed 2 times"), std::string::npos) << why;
  EXPECT_NE(why.find("noop: failing, as its parameters ask"), std::string::npos) << why;
  EXPECT_NE(r.err.find("noop: failing"), std::string::npos) << r.err;
}

TEST_F(EngineTest, AnInputDeletedWhileTheJobRunsFailsItNamingTheFile) {
  Put(Local("words.txt", "a b c\nd e f\n"), "/doomed-input", 2);
  json spec = {{"name", "deleted"},
               {"stages",
                {{{"name", "count"},
                  {"program", "noop"},
                  {"params", {{"delay_s", 3}}},
                  {"inputs", {{{"file", "/doomed-input"}}}},
                  {"output", "/never-counted"}}}}};
  uint64_t job = Submit(spec);
  ASSERT_TRUE(Until([&] { return Count(Status(job), "count", "running") >= 1; }));
  ASSERT_EQ(Copse({"fs", "rm", "/doomed-input"}).exit_code, 0);
  CommandResult r = Copse({"job", "wait", std::to_string(job)});
  EXPECT_EQ(r.exit_code, 1);
  json st = Status(job);
  EXPECT_EQ(st["state"], "failed");
  std::string why = st["failure"];
  EXPECT_NE(why.find("input file /doomed-input no longer exists"), std::string::npos) << why;
  EXPECT_NE(Copse({"fs", "stat", "/never-counted"}).exit_code, 0);
}

TEST_F(EngineTest, KillEndsEveryProcessOfTheJob) {
  json spec = {{"name", "hung"},
               {"stages",
                {{{"name", "s"},
                  {"program", "noop"},
                  {"vertices", 3},
                  {"params", {{"hang_s", 300}}},
                  {"output", "/never"}}}}};
  uint64_t job = Submit(spec);
  ASSERT_TRUE(Until([&] { return Count(Status(job), "s", "running") == 3; }));
  EXPECT_GE(JobProcesses(job).size(), 4u);  // three vertices and the root
  CommandResult k = Copse({"job", "kill", std::to_string(job)});
  EXPECT_EQ(k.exit_code, 0) << k.err;
  EXPECT_NE(k.out.find("killed"), std::string::npos);
  EXPECT_TRUE(Until([&] { return JobProcesses(job).empty(); }, milliseconds(10000)))
      << JobProcesses(job).size() << " processes of the job are left";
  EXPECT_EQ(Status(job)["state"], "killed");
  CommandResult again = Copse({"job", "kill", std::to_string(job)});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("already over"), std::string::npos) << again.out;
  EXPECT_NE(Copse({"fs", "stat", "/never"}).exit_code, 0);  // a killed job's output never shows
}

TEST_F(EngineTest, AStragglerGetsADuplicateThatWins) {
  json spec = {{"name", "straggler"},
               {"settings", {{"duplicate_factor", 1.5}, {"duplicate_floor_s", 1}}},
               {"stages",
                {{{"name", "s"},
                  {"program", "noop"},
                  {"vertices", 4},
                  {"params", {{"delay_s", {{"index", 3}, {"version", 1}, {"seconds", 120}}}}}}}}};
  uint64_t job = Submit(spec);
  json st = Wait(job, seconds(60));
  EXPECT_EQ(st["state"], "succeeded") << st.dump();
  EXPECT_GE(st["duplicates"].get<int>(), 1);
  bool v2_won = false, v1_withdrawn = false;
  for (const json& r : History(job)) {
    if (r["label"] == "s[3] v2" && r["state"] == "completed") v2_won = true;
    if (r["label"] == "s[3] v1" && (r["state"] == "killed" || r["state"] == "withdrawn")) {
      v1_withdrawn = true;
    }
  }
  EXPECT_TRUE(v2_won) << History(job).dump();
  EXPECT_TRUE(v1_withdrawn) << History(job).dump();
}

TEST_F(EngineTest, AWorkerKilledMidJobChangesNothingAndLeavesNoVertexBehind) {
  std::filesystem::path corpus = Local("corpus.txt", Corpus(600'000, 11));
  Put(corpus, "/corpus", 6);
  uint64_t job = Submit(WordCountSpec("/corpus", "/wc", 2, 2.0));
  json st;
  ASSERT_TRUE(Until([&] {
    st = Status(job);
    return Count(st, "count", "running") >= 2 && st["root"].is_object();
  }));
  std::string root_computer = st["root"]["computer"];
  std::string victim;
  for (const json& r : History(job)) {
    if (r["label"].get<std::string>().rfind("count[", 0) == 0 && r["computer"] != root_computer &&
        (r["state"] == "running" || r["state"] == "launched")) {
      victim = r["computer"];
      break;
    }
  }
  ASSERT_FALSE(victim.empty()) << History(job).dump();
  int pid = WorkerPid(victim);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::string tasks_of_victim = (dir_.path() / "data" / victim / "tasks").string();
  EXPECT_TRUE(Until([&] { return ProcessesWith(tasks_of_victim).empty(); }, milliseconds(5000)))
      << "vertices of the killed worker live on";
  json end = Wait(job);
  EXPECT_EQ(end["state"], "succeeded") << end.dump();
  EXPECT_EQ(Cat("/wc"), CoreutilsWordCount(corpus));
  EXPECT_GE(end["runs"]["lost"].get<int>() + end["runs"]["failed"].get<int>(), 1) << end.dump();
}

TEST_F(EngineTest, ALostOutputMakesItsProducerRunAgain) {
  // Large enough that where it is read matters to the scheduler (Quincy's
  // costs round a few kilobytes down to nothing).
  std::filesystem::path corpus = Local("input.txt", Corpus(4'000'000, 5));
  // count -> sum (which waits 4 s before reading) -> merge -> write. The
  // input is kept in one rack, so that the producer, which runs where its
  // input is, is not on the root's computer.
  std::string tried;
  for (int attempt = 0; attempt < 6; ++attempt) {
    std::string in = "/small" + std::to_string(attempt);
    std::string out = "/lost" + std::to_string(attempt);
    // Two replicas in one rack, r1 or r0 in turn (the root tends to take the
    // first computer): the producer runs on one, the other survives it.
    CommandResult put = Copse({"fs", "put", corpus.string(), in, "--replication", "2",
                               "--placement", attempt % 2 == 0 ? "confine 2 r1" : "confine 2 r0"});
    ASSERT_EQ(put.exit_code, 0) << put.err;
    json spec = WordCountSpec(in, out, 1, 0);
    spec["stages"][1]["params"]["delay_s"] = 4;
    uint64_t job = Submit(spec);
    std::string producer, root;
    ASSERT_TRUE(Until([&] {
      json st = Status(job);
      if (Count(st, "count", "done") != 1 || !st["root"].is_object()) return false;
      root = st["root"]["computer"];
      for (const json& r : History(job)) {
        if (r["label"] == "count[0] v1" && r["state"] == "completed") producer = r["computer"];
      }
      return !producer.empty();
    }));
    tried += producer + "/" + root + " ";
    if (producer == root) {  // killing it would restart the whole job: try again
      ASSERT_EQ(Copse({"job", "kill", std::to_string(job)}).exit_code, 0);
      continue;
    }
    ASSERT_EQ(::kill(WorkerPid(producer), SIGKILL), 0);
    json end = Wait(job);
    ASSERT_EQ(end["state"], "succeeded") << end.dump();
    EXPECT_EQ(Cat(out), CoreutilsWordCount(corpus));
    bool reran = false;
    for (const json& r : History(job)) {
      if (r["label"] == "count[0] v2" && r["state"] == "completed") reran = true;
    }
    EXPECT_TRUE(reran) << "the producer did not run again: " << History(job).dump();
    EXPECT_EQ(end["incarnation"], 0);  // not a restart of the job
    return;
  }
  FAIL() << "the producer ran on the root's computer every time (producer/root: " << tried << ")";
}

TEST_F(EngineTest, AKilledRootRestartsTheJob) {
  std::filesystem::path corpus = Local("corpus.txt", Corpus(300'000, 13));
  Put(corpus, "/corpus", 4);
  uint64_t job = Submit(WordCountSpec("/corpus", "/wc", 2, 1.5));
  ASSERT_TRUE(Until([&] { return Count(Status(job), "count", "running") >= 1; }));
  std::vector<int> roots = ProcessesWith("/tasks/" + std::to_string(job) + "/");
  int root_pid = 0;
  for (int pid : roots) {
    if (ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline").find("copse-rootjob") !=
        std::string::npos) {
      root_pid = pid;
    }
  }
  ASSERT_GT(root_pid, 0);
  ASSERT_EQ(::kill(root_pid, SIGKILL), 0);
  json end = Wait(job);
  EXPECT_EQ(end["state"], "succeeded") << end.dump();
  EXPECT_EQ(end["incarnation"], 1);
  EXPECT_EQ(end["restarts"].size(), 1u);
  EXPECT_EQ(Cat("/wc"), CoreutilsWordCount(corpus));
}

TEST_F(EngineTest, ASecondJobPreemptsTheFirstUnderQfpAndBothAreRight) {
  std::filesystem::path a = Local("a.txt", Corpus(400'000, 21));
  std::filesystem::path b = Local("b.txt", Corpus(400'000, 22));
  Put(a, "/a", 8);
  Put(b, "/b", 8);
  uint64_t first = Submit(WordCountSpec("/a", "/wa", 2, 3.0));
  ASSERT_TRUE(Until([&] { return Count(Status(first), "count", "running") >= 8; }));
  uint64_t second = Submit(WordCountSpec("/b", "/wb", 2, 0));
  json one = Wait(first), two = Wait(second);
  EXPECT_EQ(one["state"], "succeeded");
  EXPECT_EQ(two["state"], "succeeded");
  EXPECT_GE(one["runs"]["preempted"].get<int>(), 1) << one.dump();
  EXPECT_EQ(Cat("/wa"), CoreutilsWordCount(a));
  EXPECT_EQ(Cat("/wb"), CoreutilsWordCount(b));
}

// The same job under the policies of each family gives the same output.
TEST_F(EngineTest, TheSameOutputUnderEveryPolicy) {
  std::filesystem::path corpus = Local("corpus.txt", Corpus(300'000, 17));
  const std::string expected = CoreutilsWordCount(corpus);
  for (const std::string policy : {"QFP", "GFP", "HFS", "CFQ"}) {
    TearDown();
    Start(LocalClusterSpec(), policy);  // the same data dirs: the DFS keeps its files
    Put(corpus, "/corpus-" + policy, 4);
    CommandResult r = Copse({"run", "wordcount", "--input", "/corpus-" + policy, "--output",
                             "/wc-" + policy, "--partitions", "2", "--wait"});
    ASSERT_EQ(r.exit_code, 0) << policy << ": " << r.err;
    EXPECT_EQ(Cat("/wc-" + policy), expected) << policy;
  }
}

TEST_F(EngineTest, LimitsEndRunsAsFailedSayingWhich) {
  TearDown();
  Start(LocalClusterSpec(), "QFP", "memory_limit_mb = 300\n");
  uint64_t hog = Submit({{"name", "hog"},
                         {"settings", {{"attempts", 1}}},
                         {"stages",
                          {{{"name", "s"},
                            {"program", "noop"},
                            {"vertices", 1},
                            {"params", {{"allocate_mb", 900}}}}}}});
  uint64_t slow = Submit(
      {{"name", "slow"},
       {"settings", {{"attempts", 1}, {"vertex_timeout_s", 1}}},
       {"stages",
        {{{"name", "s"}, {"program", "noop"}, {"vertices", 1}, {"params", {{"hang_s", 60}}}}}}});
  json h = Wait(hog, seconds(60)), t = Wait(slow, seconds(60));
  EXPECT_EQ(h["state"], "failed");
  EXPECT_NE(h["failure"].get<std::string>().find("memory limit exceeded"), std::string::npos)
      << h.dump();
  EXPECT_EQ(t["state"], "failed");
  EXPECT_NE(t["failure"].get<std::string>().find("timed out after"), std::string::npos) << t.dump();
}

TEST_F(EngineTest, ARestartedMasterKeepsTheQueuedAndTheRunningJob) {
  TearDown();
  LocalClusterSpec spec;
  Start(spec);
  std::filesystem::path corpus = Local("corpus.txt", Corpus(300'000, 19));
  Put(corpus, "/corpus", 4);
  std::string numbers;
  for (int i = 0; i < 1000; ++i) numbers += std::to_string(i) + "\n";
  Put(Local("n.txt", numbers), "/n", 2);
  // K = 3, so three jobs that take a while fill the admission slots first.
  std::vector<uint64_t> fillers;
  for (int i = 0; i < 2; ++i) {
    fillers.push_back(Submit(WordCountSpec("/corpus", "/f" + std::to_string(i), 1, 3.0)));
  }
  uint64_t running = Submit(WordCountSpec("/corpus", "/wc", 2, 3.0));
  apps::RunOptions po;
  po.inputs = {"/n"};
  po.output = "/primes";
  uint64_t queued = Submit(json::parse(*apps::BuildJobSpec("prime", po)));
  ASSERT_TRUE(Until([&] { return Count(Status(running), "count", "running") >= 1; }));
  ASSERT_EQ(Status(queued)["state"], "queued");
  int master = MasterPid();
  ASSERT_EQ(::kill(master, SIGKILL), 0);
  ASSERT_TRUE(Until([&] { return !ProcessAlive(master); }, milliseconds(5000)));
  // The master stays down a while (the fault, not a wait for something):
  // long enough that the workers' and roots' reconnect delays have grown
  // to seconds, beyond the worker timeout (1 s here). They must still
  // count as back in time.
  std::this_thread::sleep_for(seconds(4));
  CommandResult up = Copse({"cluster", "up"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  json r = Wait(running), q = Wait(queued);
  EXPECT_EQ(r["state"], "succeeded") << r.dump();
  EXPECT_EQ(r["incarnation"], 0) << "the running job restarted: " << r.dump();
  EXPECT_EQ(q["state"], "succeeded") << q.dump();
  EXPECT_EQ(Cat("/wc"), CoreutilsWordCount(corpus));
  EXPECT_EQ(Cat("/primes"), "168\n");
  for (uint64_t f : fillers) {
    json fs = Wait(f);
    EXPECT_EQ(fs["state"], "succeeded") << fs.dump();
    EXPECT_EQ(fs["incarnation"], 0) << "a running job restarted: " << fs.dump();
  }
  // The restarted master ended its recovery with every computer back.
  std::string log = ReadProcFile(config_.master.data_dir / "master.log");
  size_t at = log.rfind("recovery over: ");
  ASSERT_NE(at, std::string::npos) << "the restarted master logged no recovery";
  std::string line = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(line.find("6 of 6 computers registered"), std::string::npos) << line;
}

}  // namespace
}  // namespace copse::testing

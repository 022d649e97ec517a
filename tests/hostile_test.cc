// The hostile-input suite (docs/architecture.md "Bad requests, bad text, full
// disks"): what real users and broken programs send, thrown at a running
// local cluster. After every case every daemon still answers, every job
// submitted has ended (succeeded, or failed with a reason naming the cause)
// and a file stored before reads back byte for byte.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/subprocess.h"
#include "common/text.h"
#include "tests/harness/cluster_fixture.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Thirteen bytes, none of them a UTF-8 character: the file that took the
// master down.
const std::string kNotUtf8 = "\xC3\x28\xA0\xA1\xE2\x28\xA1\xE2\x82\x28\xF0\x28\x8C";

std::string RandomText(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  while (s.size() < n) {
    s += static_cast<char>('a' + rng() % 26);
    if (rng() % 7 == 0) s += rng() % 5 == 0 ? '\n' : ' ';
  }
  return s + "\n";
}

bool HasRawControl(const std::string& s) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return true;
  }
  return false;
}

// One HTTP request as raw bytes on a fresh connection: the status code of
// the answer (0 when the server closed without one).
int RawHttp(uint16_t port, const std::string& request, std::string* answer = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    got.append(buf, static_cast<size_t>(n));
  ::close(fd);
  if (answer) *answer = got;
  if (got.rfind("HTTP/1.", 0) != 0 || got.size() < 12) return 0;
  return std::atoi(got.substr(9, 3).c_str());
}

class HostileTest : public ClusterTest {
 protected:
  void SetUp() override {
    Start(LocalClusterSpec());
    reference_ = RandomText(200'000, 3);
    Put(Local("reference.txt", reference_), "/reference", 3);
    master_pid_ = MasterPid();
  }

  // Every daemon answers, the master is the one that started, every job
  // has ended, and the file stored first reads back as it was.
  void ExpectHealthy(const std::string& after) {
    SCOPED_TRACE("after " + after);
    CommandResult st = Copse({"cluster", "status", "--json"});
    ASSERT_EQ(st.exit_code, 0) << st.err;
    json doc = json::parse(st.out);
    int live = 0;
    for (const json& c : doc["computers"]) live += c["state"] == "live";
    EXPECT_EQ(live, 6) << st.out;
    EXPECT_EQ(MasterPid(), master_pid_);
    EXPECT_TRUE(ProcessAlive(master_pid_)) << "the master died";
    CommandResult list = Copse({"job", "list", "--json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    const json jobs = json::parse(list.out)["jobs"];
    for (const json& j : jobs) {
      std::string state = j["state"];
      EXPECT_TRUE(state == "succeeded" || state == "failed" || state == "killed")
          << "job " << j["id"] << " is " << state;
      if (state == "failed") {
        EXPECT_FALSE(j["failure"].get<std::string>().empty()) << j;
      }
    }
    EXPECT_EQ(Cat("/reference"), reference_);
    EXPECT_EQ(RawHttp(config_.http.port, "GET /api/v1/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
              200);
  }

  // Submits raw spec text; the command's result.
  CommandResult SubmitText(const std::string& text) {
    return Copse(
        {"job", "submit", Local("spec-" + std::to_string(++specs_) + ".json", text).string()});
  }

  // A one-stage noop job with these parameters, one attempt, as text.
  std::string NoopSpec(const std::string& name, const json& params, const std::string& input = "") {
    json stage = {{"name", "s"}, {"program", "noop"}, {"params", params}};
    if (input.empty()) {
      stage["vertices"] = 1;
    } else {
      stage["inputs"] = json::array({{{"file", input}}});
    }
    return json{{"name", name}, {"settings", {{"attempts", 1}}}, {"stages", json::array({stage})}}
        .dump();
  }

  std::string reference_;
  int master_pid_ = 0;
};

TEST_F(HostileTest, ThirteenBytesThatAreNotUtf8FailTheirJobAndNotTheMaster) {
  Put(Local("bad.txt", kNotUtf8), "/bad", 1);
  CommandResult r = Copse({"run", "prime", "--input", "/bad", "--output", "/primes", "--wait"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  json st = Status(IdOf(r));
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["state"], "failed");
  std::string why = st["failure"];
  EXPECT_NE(why.find("count[0]"), std::string::npos) << why;
  EXPECT_TRUE(IsValidUtf8(why));
  // The master's restart finds the job as it ended.
  ExpectHealthy("the 13-byte file");
  int master = MasterPid();
  ASSERT_EQ(::kill(master, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(master); }, seconds(5)));
  ASSERT_EQ(Copse({"cluster", "up"}).exit_code, 0);
  master_pid_ = MasterPid();
  EXPECT_EQ(Status(IdOf(r))["state"], "failed");
  ExpectHealthy("a restart after the failed job");
}

TEST_F(HostileTest, HostileInputFilesReachEveryProgramAndEveryJobEnds) {
  const std::map<std::string, std::string> inputs = {
      {"notutf8", kNotUtf8 + "\n" + kNotUtf8},
      {"nul", std::string("12\0 34\n\0\0\0\n5 6\n", 15)},
      {"longline", std::string(1 << 20, '7') + "\n"},
      {"nonewline", "11 13 17 19 23"},
  };
  std::vector<uint64_t> jobs;
  std::vector<std::string> names;
  for (const auto& [kind, content] : inputs) {
    Put(Local(kind + ".txt", content), "/h/" + kind, 1);
    Put(Local(kind + "2.txt", content), "/h/" + kind + "2", 1);
    for (const std::string app : {"wordcount", "prime", "sort", "databasejoin", "pagerank"}) {
      std::string input = "/h/" + kind;
      if (app == "databasejoin") input += ",/h/" + kind + "2";
      CommandResult r =
          Copse({"run", app, "--input", input, "--output", "/out/" + app + "-" + kind});
      ASSERT_EQ(r.exit_code, 0) << app << " on " << kind << ": " << r.err;
      jobs.push_back(IdOf(r));
      names.push_back(app + " on " + kind);
    }
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const uint64_t job = jobs[i];
    json st = Wait(job, seconds(120));
    std::cout << names[i] << ": " << st.value("state", "?") << " "
              << st.value("failure", "").substr(0, 160) << "\n";
    ASSERT_FALSE(st.is_null());
    std::string state = st["state"];
    EXPECT_TRUE(state == "succeeded" || state == "failed") << st;
    if (state == "failed") {
      std::string why = st["failure"];
      EXPECT_NE(why.find("failed"), std::string::npos) << why;
      EXPECT_TRUE(IsValidUtf8(why)) << why;
      // The cause, not the input: a program quoting a 1 MB line must not
      // fill the reason with it (its log tail is quoted after the cause).
      EXPECT_NE(why.find("exit code 65:"), std::string::npos) << names[i] << ": " << why;
    }
  }
  ExpectHealthy("hostile input files");
}

TEST_F(HostileTest, HostileNamesPathsAndSpecsAreRefusedNamingTheField) {
  struct Case {
    std::string spec;
    std::string says;
  };
  const std::string esc = "\x1b[2J\x1b]0;owned\x07";
  std::vector<Case> cases = {
      {NoopSpec("line\nbreak", json::object()), "'name' contains a control character"},
      {NoopSpec("clear" + esc, json::object()), "'name' contains a control character"},
      {NoopSpec(std::string(129, 'n'), json::object()), "'name' is 129 bytes"},
      {NoopSpec("", json::object()), "'name' is empty"},
      // Invalid UTF-8 in JSON text is malformed JSON.
      {"{\"name\": \"" + kNotUtf8 + "\", \"stages\": []}", "malformed JSON"},
      {R"({"name": "x", "stages": [{"name": "a\tb", "program": "noop", "vertices": 1}]})",
       "stage name"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "noop\u001b", "vertices": 1}]})",
       "is not a program name"},
      {std::string(10'000, '[') + std::string(10'000, ']'), "nested deeper than 64 levels"},
      {R"({"name": "x", "settings": {"pool": "p\u0007"}, "stages": [{"name": "a",
          "program": "noop", "vertices": 1}]})",
       "settings.pool contains a control character"},
      {R"({"name": "x", "stages": [{"name": "a", "program": "noop",
          "inputs": [{"file": "/a\u0000b"}]}]})",
       "input path '/a\\x00b' contains a control character"},
  };
  for (const Case& c : cases) {
    CommandResult r = SubmitText(c.spec);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  }
  // A spec at the size limit is taken; one byte more is not.
  std::string padded = NoopSpec("big", {{"pad", ""}});
  const size_t limit = 1 << 20;
  std::string at_limit = padded;
  at_limit.insert(at_limit.find("\"pad\":\"") + 7, std::string(limit - padded.size(), 'x'));
  ASSERT_EQ(at_limit.size(), limit);
  CommandResult big = SubmitText(at_limit);
  EXPECT_EQ(big.exit_code, 0) << big.err;
  EXPECT_EQ(Wait(IdOf(big))["state"], "succeeded") << "a spec at the limit must run too";
  CommandResult bigger = SubmitText(at_limit + " ");
  EXPECT_EQ(bigger.exit_code, 2);
  EXPECT_NE(bigger.err.find("over the 1 MiB limit"), std::string::npos) << bigger.err;
  // Parameters are the program's business: kept as they came, and shown
  // escaped where a vertex echoes them.
  CommandResult odd = SubmitText(
      NoopSpec("echo", {{"stderr", "before" + esc + "\r\nafter \xe2\x82\xac"}, {"fail", true}}));
  ASSERT_EQ(odd.exit_code, 0) << odd.err;
  json st = Wait(IdOf(odd));
  EXPECT_EQ(st["state"], "failed");
  CommandResult shown = Copse({"job", "status", std::to_string(IdOf(odd))});
  EXPECT_EQ(shown.exit_code, 0);
  EXPECT_FALSE(HasRawControl(shown.out)) << shown.out;
  EXPECT_NE(shown.out.find("\\x1b[2J"), std::string::npos) << shown.out;
  // DFS paths.
  std::filesystem::path small = Local("small.txt", "x\n");
  for (const std::string& path : {std::string("/a\nb"), "/c" + esc, "/d" + kNotUtf8,
                                  "/" + std::string(1100, 'p'), std::string("relative")}) {
    CommandResult r = Copse({"fs", "put", small.string(), path});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("path"), std::string::npos) << r.err;
    EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  }
  ExpectHealthy("hostile names and specs");
}

TEST_F(HostileTest, VerticesThatMisbehaveEndTheirJobsWithTheReason) {
  Put(Local("in.txt", "a\nb\n"), "/in", 1);
  struct Case {
    std::string name;
    json params;
    std::string input;
    std::string state;
    std::string says;  // in the failure
  };
  std::vector<Case> cases = {
      {"garbage", {{"garbage_kb", 2048}, {"fail", true}}, "", "failed", "exit code 1"},
      {"garbage-ok", {{"garbage_kb", 2048}}, "", "succeeded", ""},
      {"exit1", {{"exit_code", 1}}, "", "failed", "exit code 1"},
      {"exit65", {{"exit_code", 65}}, "", "failed", "exit code 65"},
      {"exit75", {{"exit_code", 75}}, "", "failed", "exit code 75"},
      {"segv", {{"signal", SIGSEGV}}, "", "failed", "signal"},
      {"kill", {{"signal", SIGKILL}}, "", "failed", "signal"},
      {"lazy", {{"skip_inputs", true}}, "/in", "succeeded", ""},
      {"bad-result", {{"garbage_result", true}}, "", "succeeded", ""},
      {"split-char",
       {{"stderr", std::string(4095, 'x') + "\xe2\x82\xac\n"}, {"fail", true}},
       "",
       "failed",
       "exit code 1"},
      {"wrong-type", {{"hang_s", "forever"}}, "", "failed", "exit code 65"},
  };
  std::vector<std::pair<const Case*, uint64_t>> jobs;
  for (const Case& c : cases) {
    CommandResult r = SubmitText(NoopSpec(c.name, c.params, c.input));
    ASSERT_EQ(r.exit_code, 0) << c.name << ": " << r.err;
    jobs.push_back({&c, IdOf(r)});
  }
  for (const auto& [c, job] : jobs) {
    json st = Wait(job, seconds(120));
    ASSERT_FALSE(st.is_null()) << c->name;
    EXPECT_EQ(st["state"], c->state) << c->name << ": " << st;
    std::string why = st["failure"];
    if (!c->says.empty()) {
      EXPECT_NE(why.find(c->says), std::string::npos) << c->name << ": " << why;
    }
    EXPECT_TRUE(IsValidUtf8(why)) << c->name;
  }
  ExpectHealthy("misbehaving vertices");
}

TEST_F(HostileTest, HttpRequestsOfEveryShapeGetAnAnswerAndTheApiKeepsServing) {
  const uint16_t port = config_.http.port;
  const std::string host = "Host: 127.0.0.1\r\n";
  struct Case {
    std::string request;
    int status;
  };
  std::vector<Case> cases = {
      // Methods cpp-httplib does not know are bad requests; those it knows,
      // other than GET and HEAD, are refused.
      {"FOO /api/v1/jobs HTTP/1.1\r\n" + host + "\r\n", 400},
      {"TRACE / HTTP/1.1\r\n" + host + "\r\n", 400},
      {"DELETE /api/v1/jobs/1 HTTP/1.1\r\n" + host + "\r\n", 405},
      {"POST /api/v1/jobs HTTP/1.1\r\n" + host + "Content-Length: 5\r\n\r\nhello", 405},
      {"GET /api/v1/jobs/%zz HTTP/1.1\r\n" + host + "\r\n", 400},
      {"GET /api/v1/jobs/%C3%28 HTTP/1.1\r\n" + host + "\r\n", 400},
      {"GET /api/v1/" + kNotUtf8 + " HTTP/1.1\r\n" + host + "\r\n", 404},
      {"GET /api/v1/jobs?state=%FF%FE HTTP/1.1\r\n" + host + "\r\n", 400},
      {"GET /api/v1/jobs HTTP/1.1\r\n" + host + "X-Big: " + std::string(64 << 10, 'h') + "\r\n\r\n",
       431},
      {"GET /" + std::string(20 << 10, 'u') + " HTTP/1.1\r\n" + host + "\r\n", 414},
      {"GET /api/v1/jobs HTTP/1.1\r\nHost: evil.example:" + std::to_string(port) + "\r\n\r\n", 403},
      // Not HTTP at all: a TLS hello's first bytes, then the end. The
      // connection closes without an answer.
      {std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), 0},
      {"not http at all\r\n\r\n", 400},
  };
  for (const Case& c : cases) {
    std::string answer;
    int status = RawHttp(port, c.request, &answer);
    EXPECT_EQ(status, c.status) << ::testing::PrintToString(c.request.substr(0, 80)) << "\n"
                                << answer.substr(0, 300);
    size_t body = answer.find("\r\n\r\n");
    if (status >= 400 && body != std::string::npos && answer.size() > body + 4) {
      json doc = json::parse(answer.substr(body + 4), nullptr, false);
      EXPECT_TRUE(doc.is_object() && doc.contains("error")) << answer.substr(0, 300);
    }
  }
  ExpectHealthy("hostile HTTP requests");
}

TEST_F(HostileTest, ARootThatHangsIsKilledAndItsJobRestarts) {
  TearDown();
  LocalClusterSpec spec;
  spec.extra_tables += "[jobs]\nroot_timeout_s = 2\n";
  Start(spec);  // the same data dirs: the DFS keeps its files
  master_pid_ = MasterPid();
  CommandResult r = SubmitText(NoopSpec("patient", {{"hang_s", 4}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const uint64_t job = IdOf(r);
  int root = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int pid : JobProcesses(job)) {
          if (ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline").find("copse-rootjob") !=
              std::string::npos) {
            root = pid;
          }
        }
        return root != 0;
      },
      seconds(30)));
  ASSERT_EQ(::kill(root, SIGSTOP), 0);  // alive, connected, and silent
  json st = Wait(job, seconds(120));
  EXPECT_EQ(st["state"], "succeeded") << st;
  EXPECT_GE(st["incarnation"].get<int>(), 1) << st;
  ASSERT_FALSE(st["restarts"].empty()) << st;
  EXPECT_NE(st["restarts"][0]["why"].get<std::string>().find("not heard from for 2 s"),
            std::string::npos)
      << st;
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(root); }, seconds(10)))
      << "the silent root was not killed";
  ExpectHealthy("a hung root");
}

TEST_F(HostileTest, JobsSubmittedInALoopAcrossAMasterRestartAllRun) {
  std::string numbers;
  for (int i = 1; i <= 200; ++i) numbers += std::to_string(i) + "\n";
  Put(Local("n.txt", numbers), "/n", 2);
  const int kJobs = 12;
  std::vector<CommandResult> results(kJobs);
  std::thread submitter([&] {
    for (int i = 0; i < kJobs; ++i) {
      results[i] = Copse({"run", "prime", "--input", "/n", "--output", "/p" + std::to_string(i)},
                         seconds(90));
      std::this_thread::sleep_for(milliseconds(400));
    }
  });
  // The master goes away for 3 s in the middle of the loop.
  std::this_thread::sleep_for(milliseconds(1500));
  int master = MasterPid();
  ASSERT_EQ(::kill(master, SIGTERM), 0);
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(master); }, seconds(10)));
  std::this_thread::sleep_for(seconds(3));
  CommandResult up = Copse({"cluster", "up"});
  submitter.join();
  ASSERT_EQ(up.exit_code, 0) << up.err;
  master_pid_ = MasterPid();
  bool waited = false;
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_EQ(results[i].exit_code, 0) << "submission " << i << ": " << results[i].err;
    waited |= results[i].err.find("waiting up to") != std::string::npos;
    json st = Wait(IdOf(results[i]));
    EXPECT_EQ(st["state"], "succeeded") << i << ": " << st;
    EXPECT_EQ(Cat("/p" + std::to_string(i)), "46\n");
  }
  EXPECT_TRUE(waited) << "no submission met the master down";
  CommandResult list = Copse({"job", "list", "--json"});
  EXPECT_EQ(json::parse(list.out)["jobs"].size(), static_cast<size_t>(kJobs))
      << "a submission was applied twice";
  ExpectHealthy("a master restart under submissions");
}

// The master's data dir on a small file system of its own (a tmpfs this
// test mounts, as root) that the test fills up.
class FullDiskTest : public HostileTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (mounts a small tmpfs for the master)";
    disk_ = dir_.path() / "data" / "master";
    std::filesystem::create_directories(disk_);
    CommandResult m = Run("/bin/mount", {"-t", "tmpfs", "-o", "size=48m", "tmpfs", disk_.string()});
    if (m.exit_code != 0) GTEST_SKIP() << "cannot mount a tmpfs: " << m.err;
    mounted_ = true;
    LocalClusterSpec spec;
    spec.extra_tables += "[dfs]\nreserve_mb = 4\n";
    Start(spec);
    reference_ = RandomText(100'000, 5);
    Put(Local("reference.txt", reference_), "/reference", 2);
    master_pid_ = MasterPid();
  }
  void TearDown() override {
    if (!mounted_) return;
    HostileTest::TearDown();
    Run("/bin/umount", {"-l", disk_.string()});
  }

  static CommandResult Run(const std::string& program, const std::vector<std::string>& args) {
    SpawnOptions o;
    o.program = program;
    o.args = args;
    auto r = RunProcess(o, seconds(30));
    CommandResult out;
    if (!r.ok()) return out;
    out.exit_code = r->status.known && r->status.signal == 0 ? r->status.code : -1;
    out.err = r->err;
    return out;
  }

  // Fills the file system with one file until it is full.
  void Fill() {
    std::ofstream out(disk_ / "filler", std::ios::binary);
    std::string mb(1 << 20, 'f');
    while (out.write(mb.data(), static_cast<std::streamsize>(mb.size()))) {
    }
  }

  std::filesystem::path disk_;
  bool mounted_ = false;
};

TEST_F(FullDiskTest, AFullMasterDiskRefusesNewWorkLosesNothingAndRecovers) {
  CommandResult r = SubmitText(NoopSpec("running", {{"hang_s", 3}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const uint64_t running = IdOf(r);
  ASSERT_TRUE(WaitFor([&] { return Status(running)["state"] == "running"; }, seconds(30)));
  Fill();
  CommandResult refused = SubmitText(NoopSpec("refused", json::object()));
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("no space on the master"), std::string::npos) << refused.err;
  CommandResult put = Copse({"fs", "put", Local("new.txt", "new\n").string(), "/new"});
  EXPECT_EQ(put.exit_code, 1) << put.err;
  EXPECT_NE(put.err.find("no space on the master"), std::string::npos) << put.err;
  EXPECT_EQ(Cat("/reference"), reference_);
  // The running job's vertex ends while the disk is full.
  ASSERT_TRUE(WaitFor(
      [&] {
        json runs = History(running);
        for (const json& run : runs) {
          if (!run["root"].get<bool>() && run["state"] == "completed") return true;
        }
        return false;
      },
      seconds(30)));
  std::filesystem::remove(disk_ / "filler");
  json st = Wait(running);
  EXPECT_EQ(st["state"], "succeeded") << st;
  CommandResult again = SubmitText(NoopSpec("again", json::object()));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Wait(IdOf(again))["state"], "succeeded");
  ExpectHealthy("a full master disk");
}

}  // namespace
}  // namespace copse::testing

// Integration test of `copse cluster up --netns` (docs/netns.md): a cluster of
// 2 racks x 2 computers, each computer in its own network namespace, rack
// uplinks shaped to 0.1 Gbit/s and computer links to 1 Gbit/s. A TCP stream
// between two computers of different racks must run near the uplink rate and
// one inside a rack clearly faster; `cluster down` must remove every
// namespace the cluster made. Needs root, `ip`, `tc` and network namespaces:
// skipped (with the reason) otherwise. All traffic stays inside namespaces
// this test creates.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

constexpr double kUplinkGbps = 0.1;
constexpr double kComputerLinkGbps = 1.0;

// Moves the calling thread into a named network namespace.
bool EnterNamespace(const std::string& ns) {
  int fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::setns(fd, CLONE_NEWNET) == 0;
  ::close(fd);
  return ok;
}

struct Transfer {
  std::string error;  // empty when it worked
  uint64_t bytes = 0;
  double seconds = 0;
  double MBps() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0; }
};

// Streams `bytes` over TCP from a thread in namespace `from_ns` to a thread in
// `to_ns` listening on `to_host`; the rate is taken at the receiver from the
// first byte to the end. Every socket times out after 20 s.
Transfer MeasureTcp(const std::string& from_ns, const std::string& to_ns,
                    const std::string& to_host, uint64_t bytes) {
  std::promise<uint16_t> port_promise;
  auto port_future = port_promise.get_future();
  Transfer result;
  timeval timeout{20, 0};
  std::thread receiver([&] {
    uint16_t port = 0;
    int ls = -1;
    auto fail = [&](const std::string& what) {
      result.error = what + ": " + std::strerror(errno);
      if (ls >= 0) ::close(ls);
      port_promise.set_value(0);
    };
    if (!EnterNamespace(to_ns)) return fail("enter " + to_ns);
    ls = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    ::inet_pton(AF_INET, to_host.c_str(), &addr.sin_addr);
    socklen_t len = sizeof(addr);
    if (ls < 0 || ::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(ls, 1) != 0 || ::getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return fail("listen on " + to_host);
    }
    port = ntohs(addr.sin_port);
    ::setsockopt(ls, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    port_promise.set_value(port);
    int s = ::accept(ls, nullptr, nullptr);
    ::close(ls);
    if (s < 0) {
      result.error = std::string("accept: ") + std::strerror(errno);
      return;
    }
    ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    std::vector<char> buf(1 << 20);
    auto start = std::chrono::steady_clock::now();
    for (;;) {
      ssize_t n = ::recv(s, buf.data(), buf.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) result.error = std::string("recv: ") + std::strerror(errno);
      if (n <= 0) break;
      if (result.bytes == 0) start = std::chrono::steady_clock::now();
      result.bytes += static_cast<uint64_t>(n);
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::close(s);
  });
  uint16_t port = port_future.get();
  std::string send_error;
  if (port != 0) {
    std::thread sender([&] {
      if (!EnterNamespace(from_ns)) {
        send_error = "enter " + from_ns;
        return;
      }
      int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(port);
      ::inet_pton(AF_INET, to_host.c_str(), &addr.sin_addr);
      ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
      if (s < 0 || ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        send_error = std::string("connect to ") + to_host + ": " + std::strerror(errno);
        if (s >= 0) ::close(s);
        return;
      }
      std::vector<char> buf(1 << 20, 'x');
      for (uint64_t sent = 0; sent < bytes;) {
        ssize_t n =
            ::send(s, buf.data(), std::min<uint64_t>(buf.size(), bytes - sent), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          send_error = std::string("send: ") + std::strerror(errno);
          break;
        }
        sent += static_cast<uint64_t>(n);
      }
      ::close(s);
    });
    sender.join();
  }
  receiver.join();
  if (!send_error.empty()) result.error = send_error;
  if (result.error.empty() && result.bytes != bytes) {
    result.error = "received " + std::to_string(result.bytes) + " of " + std::to_string(bytes);
  }
  return result;
}

class NetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string missing = MissingNetnsCapability();
    if (!missing.empty()) GTEST_SKIP() << missing;
    LocalClusterSpec spec;
    spec.computers_per_rack = 2;
    config_ = WriteClusterConfig(dir_.path(), spec);
    std::ofstream(config_, std::ios::app)
        << "\n[network]\ncomputer_link_gbps = " << kComputerLinkGbps
        << "\nrack_uplink_gbps = " << kUplinkGbps << "\n";
  }

  // Stops the cluster and removes whatever it left, even after a failure.
  void TearDown() override {
    if (config_.empty()) return;
    RunCopse("copse", {"--config", config_.string(), "cluster", "down"});
    ReapChildren();
    for (const std::string& ns : NamespacesWithPrefix(prefix_)) Shell("ip netns del " + ns);
  }

  CommandResult Copse(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_.string()});
    return RunCopse("copse", args, seconds(40));
  }

  std::filesystem::path StatePath() const { return dir_.path() / "data" / "cluster.netns.json"; }

  json State() {
    std::ifstream in(StatePath());
    return json::parse(in);
  }

  void UpNetns() {
    CommandResult up = Copse({"cluster", "up", "--netns", "--timeout", "20"});
    ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
    ASSERT_TRUE(std::filesystem::exists(StatePath()));
    prefix_ = State()["prefix"];
    ASSERT_FALSE(prefix_.empty());
  }

  // `cluster down` succeeded and nothing with the cluster's prefix is left:
  // no namespace, and no link in the root namespace.
  void ExpectDownRemovesEverything() {
    CommandResult down = Copse({"cluster", "down"});
    EXPECT_EQ(down.exit_code, 0) << down.out << down.err;
    EXPECT_TRUE(NamespacesWithPrefix(prefix_).empty()) << Shell("ip netns list").second;
    auto [rc, links] = Shell("ip -o link show");
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(links.find(prefix_), std::string::npos) << links;
    EXPECT_FALSE(std::filesystem::exists(StatePath()));
  }

  TempDir dir_;
  std::filesystem::path config_;
  std::string prefix_;
};

TEST_F(NetnsTest, CrossRackTransferIsCappedAtTheUplinkAndDownRemovesEverything) {
  ASSERT_NO_FATAL_FAILURE(UpNetns());
  json state = State();
  EXPECT_TRUE(state["complete"].get<bool>());
  ASSERT_EQ(state["namespaces"].size(), 5u);  // the core and 4 computers
  for (const json& ns : state["namespaces"]) {
    EXPECT_EQ(ns.get<std::string>().rfind(prefix_, 0), 0u) << ns;
  }
  EXPECT_EQ(NamespacesWithPrefix(prefix_).size(), 5u);

  // The client, in the root namespace, reaches the master at its emulated
  // address; every worker registered from its own address.
  CommandResult st = Copse({"cluster", "status", "--json"});
  ASSERT_EQ(st.exit_code, 0) << st.out << st.err;
  json status = json::parse(st.out);
  EXPECT_EQ(status["live"], 4);
  EXPECT_EQ(status["master"]["host"], "10.77.0.1");
  std::map<std::string, std::string> host;
  for (const json& c : status["computers"]) {
    EXPECT_EQ(c["state"], "live") << c;
    host[c["name"]] = c["host"];
  }
  EXPECT_EQ(host["c00"], "10.77.1.1");
  EXPECT_EQ(host["c11"], "10.77.2.2");
  json netns = state["computer_netns"];

  // Rack r0 to rack r1 crosses both rack uplinks (0.1 Gbit/s = 12.5 MB/s).
  const double uplink_MBps = kUplinkGbps * 1e9 / 8 / 1e6;
  const double link_MBps = kComputerLinkGbps * 1e9 / 8 / 1e6;
  Transfer cross = MeasureTcp(netns["c00"], netns["c10"], host["c10"], 8u << 20);
  ASSERT_TRUE(cross.error.empty()) << cross.error;
  Transfer in_rack = MeasureTcp(netns["c00"], netns["c01"], host["c01"], 32u << 20);
  ASSERT_TRUE(in_rack.error.empty()) << in_rack.error;
  std::cout << "cross-rack " << cross.MBps() << " MB/s (uplink " << uplink_MBps
            << " MB/s), in-rack " << in_rack.MBps() << " MB/s (computer link " << link_MBps
            << " MB/s)\n";
  EXPECT_GT(cross.MBps(), 0.6 * uplink_MBps);
  EXPECT_LT(cross.MBps(), 1.4 * uplink_MBps);
  EXPECT_GT(in_rack.MBps(), 2 * cross.MBps());
  EXPECT_LT(in_rack.MBps(), 1.4 * link_MBps);

  // The same binaries and protocol through the emulated network: a DFS file
  // kept on rack r1 only, read from a computer of rack r0, crosses the core.
  std::filesystem::path local = dir_.path() / "lines.txt";
  std::string text;
  for (int i = 0; text.size() < (4u << 20); ++i) text += "line " + std::to_string(i) + "\n";
  std::ofstream(local) << text;
  CommandResult put = Copse(
      {"fs", "put", local.string(), "/lines", "--replication", "1", "--placement", "confine 1 r1"});
  ASSERT_EQ(put.exit_code, 0) << put.out << put.err;
  CommandResult cat = Copse({"fs", "cat", "/lines", "--computer", "c00", "--stats"});
  ASSERT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_TRUE(cat.out == text) << "read back " << cat.out.size() << " of " << text.size();
  EXPECT_NE(cat.err.find(std::to_string(text.size()) + " across the core"), std::string::npos)
      << cat.err;

  ExpectDownRemovesEverything();
}

TEST_F(NetnsTest, AfterEveryProcessCrashedUpRebuildsAndDownRemovesTheNetwork) {
  auto kill_all = [&] {
    std::ifstream in(dir_.path() / "data" / "cluster.pids.json");
    json pids = json::parse(in);
    for (const json& p : pids["processes"]) ::kill(p["pid"].get<int>(), SIGKILL);
    // SIGKILL is delivered asynchronously: wait until every process is gone.
    for (const json& p : pids["processes"]) {
      const int pid = p["pid"].get<int>();
      EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(pid); }, seconds(10))) << pid;
    }
  };
  ASSERT_NO_FATAL_FAILURE(UpNetns());
  kill_all();
  // `status` reaches no master; its hint restarts the cluster the way it was started.
  CommandResult status = Copse({"cluster", "status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.err.find("is the cluster up? try `copse cluster up --config"), std::string::npos)
      << status.err;
  EXPECT_NE(status.err.find(" --netns`"), std::string::npos) << status.err;
  // A plain `up` refuses a cluster that was started with --netns.
  EXPECT_EQ(Copse({"cluster", "up"}).exit_code, 2);
  // `up --netns` rebuilds the network of a cluster whose processes are all gone.
  ASSERT_NO_FATAL_FAILURE(UpNetns());
  EXPECT_EQ(NamespacesWithPrefix(prefix_).size(), 5u);
  EXPECT_EQ(Copse({"cluster", "status"}).exit_code, 0);
  kill_all();
  ExpectDownRemovesEverything();
}

TEST_F(NetnsTest, HalfBuiltNetworkIsRemovedByUpAndByDown) {
  // What a crash of `up --netns` right after its first `ip netns add` leaves.
  ASSERT_NO_FATAL_FAILURE(UpNetns());
  ExpectDownRemovesEverything();
  std::string core = prefix_ + "-core";
  auto write_half_state = [&] {
    json half = {{"prefix", prefix_},
                 {"complete", false},
                 {"core", core},
                 {"namespaces", {core, prefix_ + "-c00"}},
                 {"computer_netns", json::object()},
                 {"derived_config", (dir_.path() / "data" / "netns" / "cluster.toml").string()},
                 {"user_config", config_.string()}};
    std::ofstream(StatePath()) << half.dump();
    ASSERT_EQ(Shell("ip netns add " + core).first, 0);
  };
  ASSERT_NO_FATAL_FAILURE(write_half_state());
  // Client commands say what is wrong instead of using a half-built network.
  CommandResult st = Copse({"cluster", "status"});
  EXPECT_EQ(st.exit_code, 1);
  EXPECT_NE(st.err.find("half-built"), std::string::npos) << st.err;
  ASSERT_NO_FATAL_FAILURE(UpNetns());
  EXPECT_EQ(NamespacesWithPrefix(prefix_).size(), 5u);
  ExpectDownRemovesEverything();
  ASSERT_NO_FATAL_FAILURE(write_half_state());
  ExpectDownRemovesEverything();
}

TEST_F(NetnsTest, WithoutNetAdminUpFailsClearlyAndLeavesNothing) {
  if (!ToolExists("setpriv")) GTEST_SKIP() << "needs setpriv to drop capabilities";
  std::string cmd = "setpriv --bounding-set=-net_admin,-sys_admin " +
                    (BinDir() / "copse").string() + " --config " + config_.string() +
                    " cluster up --netns --timeout 5";
  auto [rc, out] = Shell(cmd);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("CAP_NET_ADMIN"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(StatePath()));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "data" / "cluster.pids.json"));
  // The cluster's prefix as docs/netns.md defines it: "cp" and the low 24
  // bits of the 64-bit FNV-1a hash of the data root.
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : (dir_.path() / "data").lexically_normal().string()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "cp%06llx", static_cast<unsigned long long>(h & 0xffffff));
  EXPECT_TRUE(NamespacesWithPrefix(prefix).empty()) << Shell("ip netns list").second;
}

// Checked before anything else, so it holds without root too.
TEST(NetnsConfigTest, MoreRacksThanTheAddressSchemeHoldsIsBadInput) {
  TempDir dir;
  std::filesystem::path config = dir.path() / "wide.toml";
  std::ofstream out(config);
  out << "[cluster]\nname = \"wide\"\ndata_root = \"" << (dir.path() / "data").string()
      << "\"\n[master]\nport = 7000\nworker_port_base = 7002\n";
  for (int r = 0; r < 255; ++r) out << "[[racks]]\nname = \"r" << r << "\"\ncount = 1\n";
  out.close();
  CommandResult up = RunCopse("copse", {"--config", config.string(), "cluster", "up", "--netns"});
  EXPECT_EQ(up.exit_code, 2) << up.out << up.err;
  EXPECT_NE(up.err.find("at most 254 racks"), std::string::npos) << up.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "data" / "cluster.netns.json"));
}

}  // namespace
}  // namespace copse::testing

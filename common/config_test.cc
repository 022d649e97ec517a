#include "common/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace copse {
namespace {

std::filesystem::path SourceDir() {
  const char* dir = std::getenv("COPSE_SOURCE_DIR");
  return dir ? dir : COPSE_TEST_SOURCE_DIR;
}

const char* kGood = R"(
[cluster]
name = "t"
data_root = "data"
heartbeat_interval_ms = 100
worker_timeout_ms = 1000

[master]
port = 9000
worker_port_base = 9100

[network]
computer_link_gbps = 1
rack_uplink_gbps = 0.5

[scheduler]
policy = "GFP"
hysteresis_margin = 2.5

[[racks]]
name = "a"
count = 2
slots = 3

[[racks]]
name = "b"
  [[racks.computers]]
  name = "x"
  slots = 2
  control_port = 9200
  data_port = 9201

[dfs]
rereplication_delay_ms = 250
reserve_mb = 10
sync_on_close = false
)";

// Replaces the first occurrence of `from` in the good config with `to`.
std::string Bad(const std::string& from, const std::string& to) {
  std::string text = kGood;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return text;
}

std::string ErrorOf(const std::string& text) {
  auto r = ParseClusterConfig(text, "/etc/copse/t.toml");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(ConfigTest, ParsesGoodConfig) {
  auto r = ParseClusterConfig(kGood, "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClusterConfig& c = *r;
  EXPECT_EQ(c.name, "t");
  EXPECT_EQ(c.data_root, "/etc/copse/data");
  EXPECT_EQ(c.secret_file, "/etc/copse/data/cluster.secret");
  EXPECT_EQ(c.master.host, "127.0.0.1");
  EXPECT_EQ(c.master.data_dir, "/etc/copse/data/master");
  ASSERT_EQ(c.racks.size(), 2u);
  ASSERT_EQ(c.computers.size(), 3u);
  EXPECT_EQ(c.computers[0].name, "a-c00");
  EXPECT_EQ(c.computers[0].control_port, 9100);
  EXPECT_EQ(c.computers[1].data_port, 9103);
  EXPECT_EQ(c.computers[1].slots, 3);
  EXPECT_EQ(c.computers[2].name, "x");
  EXPECT_EQ(c.computers[2].rack, "b");
  EXPECT_EQ(c.computers[2].rack_index, 1);
  EXPECT_EQ(c.TotalSlots(), 8);
  EXPECT_DOUBLE_EQ(c.network.rack_uplink_bps, 0.5e9);
  EXPECT_EQ(c.heartbeat_interval, std::chrono::milliseconds(100));
  EXPECT_EQ(c.scheduler.policy, "GFP");
  EXPECT_DOUBLE_EQ(c.scheduler.params.at("hysteresis_margin"), 2.5);
  EXPECT_NE(c.FindComputer("x"), nullptr);
  EXPECT_EQ(c.FindComputer("nope"), nullptr);
  EXPECT_EQ(c.dfs.rereplication_delay, std::chrono::milliseconds(250));
  EXPECT_EQ(c.dfs.uncommitted_grace, std::chrono::minutes(10));  // the default
  EXPECT_EQ(c.dfs.reserve_bytes, 10u << 20);
  EXPECT_FALSE(c.dfs.sync_on_close);
}

TEST(ConfigTest, HttpServesOnLoopbackBesideTheMasterByDefault) {
  auto r = ParseClusterConfig(kGood, "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->http.enabled);
  EXPECT_EQ(r->http.host, "127.0.0.1");
  EXPECT_EQ(r->http.port, 9001);
  EXPECT_TRUE(r->http.loopback());
  EXPECT_TRUE(r->http.token_file.empty());

  // The default skips ports the workers use.
  r = ParseClusterConfig(Bad("worker_port_base = 9100", "worker_port_base = 9001"),
                         "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->http.port, 9005);  // a-c00 and a-c01 use 9001-9004

  r = ParseClusterConfig(std::string(kGood) + "[http]\nenabled = false\n", "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->http.enabled);

  r = ParseClusterConfig(
      std::string(kGood) + "[http]\nhost = \"0.0.0.0\"\nport = 8080\ntoken_file = \"api.token\"\n",
      "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->http.port, 8080);
  EXPECT_FALSE(r->http.loopback());
  EXPECT_EQ(r->http.token_file, "/etc/copse/api.token");
}

TEST(ConfigTest, HttpOnAnotherAddressRequiresAToken) {
  std::string e = ErrorOf(std::string(kGood) + "[http]\nhost = \"0.0.0.0\"\n");
  EXPECT_NE(e.find("http.host"), std::string::npos) << e;
  EXPECT_NE(e.find("token_file"), std::string::npos) << e;
  e = ErrorOf(std::string(kGood) + "[http]\nport = 9100\n");  // a-c00's control port
  EXPECT_NE(e.find("http.port"), std::string::npos) << e;
  EXPECT_NE(e.find("a-c00.control_port"), std::string::npos) << e;
  e = ErrorOf(std::string(kGood) + "[http]\nport = 0\n");
  EXPECT_NE(e.find("http.port"), std::string::npos) << e;
  e = ErrorOf(std::string(kGood) + "[http]\nthreads = \"many\"\n");
  EXPECT_NE(e.find("http.threads"), std::string::npos) << e;
  e = ErrorOf(std::string(kGood) + "[http]\nbind = \"x\"\n");
  EXPECT_NE(e.find("unknown setting"), std::string::npos) << e;
}

TEST(ConfigTest, DfsTableIsChecked) {
  std::string e = ErrorOf(Bad("reserve_mb = 10", "reserve_mb = -1"));
  EXPECT_NE(e.find("dfs.reserve_mb"), std::string::npos) << e;
  e = ErrorOf(Bad("rereplication_delay_ms = 250", "rereplication_delay = 250"));
  EXPECT_NE(e.find("dfs.rereplication_delay"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown setting"), std::string::npos) << e;
  for (const char* bad : {"sync_on_close = 1", "sync_on_close = \"yes\""}) {
    e = ErrorOf(Bad("sync_on_close = false", bad));
    EXPECT_NE(e.find("/etc/copse/t.toml"), std::string::npos) << e;
    EXPECT_NE(e.find("dfs.sync_on_close"), std::string::npos) << e;
    EXPECT_NE(e.find("true or false"), std::string::npos) << e;
  }
  std::string without = kGood;
  without.resize(without.find("[dfs]"));
  auto defaults = ParseClusterConfig(without, "/etc/copse/t.toml");
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->dfs.rereplication_delay, std::chrono::seconds(10));
  EXPECT_EQ(defaults->dfs.reserve_bytes, 100u << 20);
  EXPECT_TRUE(defaults->dfs.sync_on_close);
}

TEST(ConfigTest, ShippedConfigsLoad) {
  auto local = LoadClusterConfig(SourceDir() / "cluster-configs/local.toml");
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_EQ(local->computers.size(), 6u);
  EXPECT_EQ(local->racks.size(), 2u);
  EXPECT_EQ(local->TotalSlots(), 12);
  EXPECT_EQ(local->computers.front().metrics_port, 7430);
  EXPECT_EQ(local->computers.back().metrics_port, 7435);
  // Each running job's root takes a slot: K stays below the slots (the
  // master refuses it otherwise).
  EXPECT_LT(local->max_running_jobs, local->TotalSlots());
  auto netns = LoadClusterConfig(SourceDir() / "cluster-configs/netns.toml");
  ASSERT_TRUE(netns.ok()) << netns.status().ToString();
  EXPECT_LT(netns->max_running_jobs, netns->TotalSlots());
  for (const char* name : {"paper.toml", "paper-constrained.toml"}) {
    auto paper = LoadClusterConfig(SourceDir() / "cluster-configs" / name);
    ASSERT_TRUE(paper.ok()) << paper.status().ToString();
    EXPECT_EQ(paper->computers.size(), 243u);
    ASSERT_EQ(paper->racks.size(), 8u);
    for (const RackConfig& rack : paper->racks) {
      EXPECT_GE(rack.computers.size(), 29u);
      EXPECT_LE(rack.computers.size(), 31u);
    }
    EXPECT_DOUBLE_EQ(paper->network.computer_link_bps, 1e9);
  }
  EXPECT_DOUBLE_EQ(
      LoadClusterConfig(SourceDir() / "cluster-configs/paper.toml")->network.rack_uplink_bps, 6e9);
  EXPECT_DOUBLE_EQ(LoadClusterConfig(SourceDir() / "cluster-configs/paper-constrained.toml")
                       ->network.rack_uplink_bps,
                   1e9);
}

TEST(ConfigTest, MissingFileNamesIt) {
  auto r = LoadClusterConfig("/nonexistent/dir/c.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/c.toml"), std::string::npos);
}

TEST(ConfigTest, SyntaxErrorHasLine) {
  std::string e = ErrorOf(Bad("slots = 3", "slots = = 3"));
  EXPECT_NE(e.find("/etc/copse/t.toml:23:"), std::string::npos) << e;
  EXPECT_NE(e.find("not valid TOML"), std::string::npos) << e;
}

TEST(ConfigTest, WrongTypeNamesKeyAndExpectation) {
  std::string e = ErrorOf(Bad("slots = 3", "slots = \"three\""));
  EXPECT_NE(e.find("/etc/copse/t.toml:23"), std::string::npos) << e;
  EXPECT_NE(e.find("racks[0].slots"), std::string::npos) << e;
  EXPECT_NE(e.find("an integer from 1 to 1024"), std::string::npos) << e;
  EXPECT_NE(e.find("\"three\""), std::string::npos) << e;
}

TEST(ConfigTest, OutOfRangeValues) {
  EXPECT_NE(ErrorOf(Bad("slots = 2", "slots = 0")).find("racks[1].computers[0].slots"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Bad("port = 9000", "port = 70000")).find("master.port"), std::string::npos);
  EXPECT_NE(ErrorOf(Bad("rack_uplink_gbps = 0.5", "rack_uplink_gbps = -1"))
                .find("network.rack_uplink_gbps"),
            std::string::npos);
  std::string e = ErrorOf(Bad("worker_timeout_ms = 1000", "worker_timeout_ms = 50"));
  EXPECT_NE(e.find("longer than heartbeat_interval_ms"), std::string::npos) << e;
}

// Resolves from a table, as /etc/hosts would; anything else does not exist.
HostResolver FakeDns(std::map<std::string, std::string> names, int* lookups = nullptr) {
  return [names = std::move(names), lookups](const std::string& host) -> Result<std::string> {
    if (lookups) ++*lookups;
    if (host.rfind("127.", 0) == 0 || host.find(':') != std::string::npos) return host;
    auto it = names.find(host);
    if (it == names.end()) return NotFound("Name or service not known");
    return it->second;
  };
}

TEST(ConfigTest, HostNamesAreResolvedWhenLoadedAndKeptForSsh) {
  int lookups = 0;
  auto dns = FakeDns({{"head.rack", "10.0.0.1"}, {"node-a", "10.0.1.1"}, {"node-x", "10.0.2.7"}},
                     &lookups);
  auto with = [](std::string t, const std::string& from, const std::string& to) {
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  std::string text = with(kGood, "port = 9000", "host = \"head.rack\"\nport = 9000");
  text = with(text, "slots = 3", "slots = 3\nhost = \"node-a\"");
  text = with(text, "name = \"x\"", "name = \"x\"\n  host = \"node-x\"");
  auto r = ParseClusterConfig(text, "/etc/copse/t.toml", dns);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->master.host, "10.0.0.1");
  EXPECT_EQ(r->master.host_name, "head.rack");
  EXPECT_EQ(r->computers[0].host, "10.0.1.1");
  EXPECT_EQ(r->computers[1].host_name, "node-a");
  EXPECT_EQ(r->computers[2].host, "10.0.2.7");
  EXPECT_EQ(r->computers[2].host_name, "node-x");
  EXPECT_EQ(lookups, 3);  // each name once
  EXPECT_FALSE(r->AllOnThisMachine());

  // A name that does not resolve is an error naming the key that gave it.
  auto bad = ParseClusterConfig(with(text, "\"node-x\"", "\"node-y\""), "/etc/copse/t.toml", dns);
  ASSERT_FALSE(bad.ok());
  const std::string e = bad.status().message();
  EXPECT_NE(e.find("racks[1].computers[0].host"), std::string::npos) << e;
  EXPECT_NE(e.find("\"node-y\""), std::string::npos) << e;
  EXPECT_NE(e.find("Name or service not known"), std::string::npos) << e;
  auto master = ParseClusterConfig(with(text, "head.rack", "nohead"), "/etc/copse/t.toml", dns);
  ASSERT_FALSE(master.ok());
  EXPECT_NE(master.status().message().find("master.host"), std::string::npos);

  // Two names of one address are one host: their ports collide.
  auto same = ParseClusterConfig(with(text, "\"node-x\"", "\"node-a\""), "/etc/copse/t.toml",
                                 FakeDns({{"head.rack", "10.0.0.1"}, {"node-a", "10.0.1.1"}}));
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  auto clash = ParseClusterConfig(
      with(with(text, "\"node-x\"", "\"alias-a\""), "control_port = 9200", "control_port = 9100"),
      "/etc/copse/t.toml",
      FakeDns({{"head.rack", "10.0.0.1"}, {"node-a", "10.0.1.1"}, {"alias-a", "10.0.1.1"}}));
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("also used by a-c00.control_port"), std::string::npos)
      << clash.status().ToString();
}

TEST(ConfigTest, AHostsTableGivesAddressesBeforeTheResolver) {
  std::set<std::string> asked;
  HostResolver dns = [&asked, fake = FakeDns({{"node-a", "10.0.1.1"}})](const std::string& host) {
    asked.insert(host);
    return fake(host);
  };
  std::string text = kGood;
  text.replace(text.find("slots = 3"), 9, "slots = 3\nhost = \"node-a\"");
  // The table wins over the resolver, and a name only it knows resolves.
  auto r =
      ParseClusterConfig(text + "\n[hosts]\n\"node-a\" = \"10.9.9.9\"\n", "/etc/copse/t.toml", dns);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->computers[1].host, "10.9.9.9");
  EXPECT_EQ(r->computers[1].host_name, "node-a");
  EXPECT_EQ(asked.count("node-a"), 0u);
  // An address is kept in one spelling, so two spellings are one host.
  auto spelled = ParseClusterConfig(text + "\n[hosts]\nnode-a = \"FD00:0::7\"\n",
                                    "/etc/copse/t.toml", FakeDns({}));
  ASSERT_TRUE(spelled.ok()) << spelled.status().ToString();
  EXPECT_EQ(spelled->computers[1].host, "fd00::7");
  auto v6 = ParseClusterConfig(text + "\n[hosts]\nnode-a = \"fd00::7\"\n", "/etc/copse/t.toml",
                               FakeDns({}));
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->computers[1].host, "fd00::7");
  // Anything but an address is refused, naming the key.
  for (const char* value : {"\"node-b\"", "\"10.0.0\"", "7", "\"10.0.0.1; rm -rf /\"",
                            "\"0.0.0.0\"", "\"::\"", "\"224.0.0.1\"", "\"ff02::1\""}) {
    auto bad =
        ParseClusterConfig(text + "\n[hosts]\nnode-a = " + value + "\n", "/etc/copse/t.toml", dns);
    ASSERT_FALSE(bad.ok()) << value;
    EXPECT_NE(bad.status().message().find("key 'hosts.node-a'"), std::string::npos)
        << bad.status().ToString();
  }
  auto not_table = ParseClusterConfig("hosts = 3\n" + text, "/etc/copse/t.toml", dns);
  ASSERT_FALSE(not_table.ok());
  EXPECT_NE(not_table.status().message().find("key 'hosts': expected a table"), std::string::npos)
      << not_table.status().ToString();
}

TEST(ConfigTest, AConfigOnLoopbackIsOnThisMachineAndLocalhostResolves) {
  auto r = ParseClusterConfig(kGood, "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->AllOnThisMachine());
  EXPECT_EQ(r->master.host_name, "127.0.0.1");
  // The system's resolver: an address is itself, and localhost is in
  // /etc/hosts (no DNS query leaves the machine for either).
  EXPECT_EQ(*ResolveHost("10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(*ResolveHost("::1"), "::1");
  Result<std::string> local = ResolveHost("localhost");
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_TRUE(IsLoopbackAddress(*local)) << *local;
  EXPECT_FALSE(ResolveHost("").ok());
}

TEST(ConfigTest, DeployTableIsChecked) {
  auto r = ParseClusterConfig(kGood, "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->deploy.install_dir, "/opt/copse");
  EXPECT_EQ(r->deploy.ssh_port, 22);
  EXPECT_FALSE(r->deploy.systemd);
  const std::string deploy =
      "\n[deploy]\nssh_user = \"copse\"\nssh_port = 2222\n"
      "ssh_options = [\"-i\", \"/home/op/.ssh/copse\"]\ninstall_dir = \"/srv/copse/\"\n"
      "systemd = true\nmax_clock_offset_ms = 500\n";
  auto d = ParseClusterConfig(std::string(kGood) + deploy, "/etc/copse/t.toml");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->deploy.ssh_user, "copse");
  EXPECT_EQ(d->deploy.ssh_port, 2222);
  EXPECT_EQ(d->deploy.ssh_options, (std::vector<std::string>{"-i", "/home/op/.ssh/copse"}));
  EXPECT_EQ(d->deploy.install_dir, "/srv/copse/");
  EXPECT_TRUE(d->deploy.systemd);
  EXPECT_EQ(d->deploy.max_clock_offset, std::chrono::milliseconds(500));
  auto error = [&](const std::string& from, const std::string& to) {
    std::string t = std::string(kGood) + deploy;
    t.replace(t.find(from), from.size(), to);
    return ErrorOf(t);
  };
  // Hostile values: whatever a remote shell could read as syntax.
  for (const char* dir : {"\"opt/copse\"", "\"/opt/$(reboot)\"", "\"/opt/../etc\"",
                          "\"/opt/co pse\"", "\"/opt/a;b\""}) {
    std::string e = error("\"/srv/copse/\"", dir);
    EXPECT_NE(e.find("deploy.install_dir"), std::string::npos) << dir << ": " << e;
  }
  for (const char* user : {"\"-oProxyCommand=x\"", "\"root;id\"", "\"Op\""}) {
    std::string e = error("\"copse\"", user);
    EXPECT_NE(e.find("deploy.ssh_user"), std::string::npos) << user << ": " << e;
  }
  EXPECT_NE(error("ssh_port = 2222", "ssh_port = 0").find("deploy.ssh_port"), std::string::npos);
  EXPECT_NE(error("[\"-i\", \"/home/op/.ssh/copse\"]", "[\"\"]").find("deploy.ssh_options"),
            std::string::npos);
  EXPECT_NE(error("systemd = true", "systemd = 1").find("deploy.systemd"), std::string::npos);
  EXPECT_NE(error("systemd = true", "sytemd = true").find("deploy.sytemd"), std::string::npos);
}

TEST(ConfigTest, UnknownKeyIsRejected) {
  std::string e = ErrorOf(Bad("policy = \"GFP\"", "policy = \"GFP\"\n[extra]\nx = 1"));
  EXPECT_NE(e.find("'extra'"), std::string::npos) << e;
  e = ErrorOf(Bad("slots = 3", "slots = 3\nslot = 4"));
  EXPECT_NE(e.find("racks[0].slot"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown setting"), std::string::npos) << e;
}

TEST(ConfigTest, MissingRequiredKeys) {
  EXPECT_NE(ErrorOf(Bad("name = \"t\"", "")).find("cluster.name"), std::string::npos);
  EXPECT_NE(ErrorOf(Bad("data_root = \"data\"", "")).find("cluster.data_root"), std::string::npos);
  EXPECT_NE(ErrorOf(Bad("port = 9000", "")).find("master.port"), std::string::npos);
  std::string no_racks = kGood;
  no_racks = no_racks.substr(0, no_racks.find("[[racks]]"));
  EXPECT_NE(ErrorOf(no_racks).find("racks"), std::string::npos);
}

TEST(ConfigTest, DuplicateNamesAndPorts) {
  std::string e = ErrorOf(Bad("name = \"x\"", "name = \"a\""));
  EXPECT_NE(e.find("not used by another rack or computer"), std::string::npos) << e;
  e = ErrorOf(Bad("name = \"x\"", "name = \"master\""));
  EXPECT_NE(e.find("other than 'master'"), std::string::npos) << e;
  e = ErrorOf(Bad("control_port = 9200", "control_port = 9000"));
  EXPECT_NE(e.find("x.control_port"), std::string::npos) << e;
  EXPECT_NE(e.find("master.port"), std::string::npos) << e;
}

// Metrics ports: off unless a computer sets one or [master] gives a base
// (computer i gets base + i); checked against every other port.
TEST(ConfigTest, WorkerMetricsPorts) {
  auto r = ParseClusterConfig(kGood, "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const ComputerConfig& c : r->computers) EXPECT_EQ(c.metrics_port, 0) << c.name;

  r = ParseClusterConfig(Bad("data_port = 9201", "data_port = 9201\n  metrics_port = 9300"),
                         "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->FindComputer("x")->metrics_port, 9300);
  EXPECT_EQ(r->FindComputer("a-c00")->metrics_port, 0);

  r = ParseClusterConfig(
      Bad("worker_port_base = 9100", "worker_port_base = 9100\nworker_metrics_port_base = 9400"),
      "/etc/copse/t.toml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->FindComputer("a-c00")->metrics_port, 9400);
  EXPECT_EQ(r->FindComputer("a-c01")->metrics_port, 9401);
  EXPECT_EQ(r->FindComputer("x")->metrics_port, 9402);

  std::string e = ErrorOf(Bad("data_port = 9201", "data_port = 9201\n  metrics_port = 9200"));
  EXPECT_NE(e.find("x.metrics_port"), std::string::npos) << e;
  EXPECT_NE(e.find("x.control_port"), std::string::npos) << e;
  e = ErrorOf(
      Bad("worker_port_base = 9100", "worker_port_base = 9100\nworker_metrics_port_base = 9101"));
  EXPECT_NE(e.find("metrics_port"), std::string::npos) << e;
  e = ErrorOf(Bad("data_port = 9201", "data_port = 9201\n  metrics_port = 0"));
  EXPECT_NE(e.find("metrics_port"), std::string::npos) << e;
  e = ErrorOf(
      Bad("worker_port_base = 9100", "worker_port_base = 9100\nworker_metrics_port_base = 65535"));
  EXPECT_NE(e.find("worker_metrics_port_base is too high"), std::string::npos) << e;
}

TEST(ConfigTest, RackNeedsCountOrComputers) {
  std::string e = ErrorOf(Bad("count = 2", "count = 2\ncomputers = []"));
  EXPECT_NE(e.find("either 'count'"), std::string::npos) << e;
  e = ErrorOf(Bad("worker_port_base = 9100", ""));
  EXPECT_NE(e.find("worker_port_base"), std::string::npos) << e;
}

TEST(ConfigTest, BadNamesAndLevels) {
  EXPECT_NE(ErrorOf(Bad("name = \"x\"", "name = \"bad name\"")).find("a name of letters"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(Bad("name = \"t\"", "name = \"t\"\nlog_level = \"loud\"")).find("cluster.log_level"),
      std::string::npos);
}

TEST(ConfigTest, ConfigPathFallsBackToEnvironment) {
  EXPECT_EQ(ResolveConfigPath(std::string("/x.toml")), "/x.toml");
  setenv("COPSE_CONFIG", "/from/env.toml", 1);
  EXPECT_EQ(ResolveConfigPath(std::nullopt), "/from/env.toml");
  unsetenv("COPSE_CONFIG");
  EXPECT_NE(ResolveConfigPath(std::nullopt).string().find("local.toml"), std::string::npos);
}

}  // namespace
}  // namespace copse

#include "client/shipped_config.h"

#include <gtest/gtest.h>

#include <map>

namespace copse::client {
namespace {

constexpr const char* kNamed = R"(# the operator's comment
[cluster]
name = "t"
data_root = "/var/lib/copse"
replication = 2
[master]
host = "head.example"
port = 8000
[http]
enabled = false
[deploy]
ssh_options = ["-i", "/root/.ssh/copse"]
[[racks]]
name = "r0"
slots = 2
  [[racks.computers]]
  name = "a"
  host = "head.example"
  control_port = 8001
  data_port = 8002
  [[racks.computers]]
  name = "b"
  host = "node-b"
  control_port = 8001
  data_port = 8002
  [[racks.computers]]
  name = "c"
  host = "10.0.0.9"
  control_port = 8001
  data_port = 8002
)";

HostResolver Dns(std::map<std::string, std::string> names) {
  return [names = std::move(names)](const std::string& host) -> Result<std::string> {
    auto it = names.find(host);
    if (it != names.end()) return it->second;
    if (host.find_first_not_of("0123456789.") == std::string::npos) return host;
    return NotFound("Name or service not known");
  };
}

// On a host, the shipped config gives every name the operator's address,
// even where the host's own resolver would say otherwise or nothing.
TEST(ShippedConfigTest, HostsSeeTheAddressesTheOperatorResolved) {
  auto here = ParseClusterConfig(kNamed, "/home/op/cluster.toml",
                                 Dns({{"head.example", "10.0.0.1"}, {"node-b", "10.0.0.2"}}));
  ASSERT_TRUE(here.ok()) << here.status().ToString();
  auto shipped = ShippedConfigText(kNamed, *here);
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  EXPECT_NE(shipped->find("/home/op/cluster.toml as `copse cluster up` shipped it"),
            std::string::npos)
      << *shipped;
  // node-b's own /etc/hosts maps its name to 127.0.1.1, as Debian's does.
  auto there =
      ParseClusterConfig(*shipped, "/opt/copse/etc/cluster.toml", Dns({{"node-b", "127.0.1.1"}}));
  ASSERT_TRUE(there.ok()) << there.status().ToString() << "\n" << *shipped;
  EXPECT_EQ(there->master.host, "10.0.0.1");
  EXPECT_EQ(there->master.host_name, "head.example");
  ASSERT_EQ(there->computers.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(there->computers[i].host, here->computers[i].host) << i;
    EXPECT_EQ(there->computers[i].host_name, here->computers[i].host_name) << i;
    EXPECT_EQ(there->computers[i].control_port, here->computers[i].control_port) << i;
    EXPECT_EQ(there->computers[i].rack, here->computers[i].rack) << i;
  }
  EXPECT_EQ(there->replication, 2);
  EXPECT_EQ(there->name, "t");
  EXPECT_EQ(there->deploy.ssh_options, here->deploy.ssh_options);
  EXPECT_FALSE(there->http.enabled);
}

TEST(ShippedConfigTest, AddressesOnlyShipTheTextAsItIs) {
  std::string text = kNamed;
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"head.example", "10.0.0.1"}, {"node-b", "10.0.0.2"}}) {
    for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  }
  auto config = ParseClusterConfig(text, "/home/op/cluster.toml", Dns({}));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto shipped = ShippedConfigText(text, *config);
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(*shipped, text);
}

// The operator's own [hosts] entries are what resolution used: kept.
TEST(ShippedConfigTest, AHostsTableOfTheOperatorIsKeptAndCompleted) {
  const std::string text = std::string(kNamed) + "\n[hosts]\n\"head.example\" = \"10.5.0.1\"\n";
  auto here = ParseClusterConfig(text, "/home/op/cluster.toml", Dns({{"node-b", "10.0.0.2"}}));
  ASSERT_TRUE(here.ok()) << here.status().ToString();
  auto shipped = ShippedConfigText(text, *here);
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  auto there = ParseClusterConfig(*shipped, "/opt/copse/etc/cluster.toml", Dns({}));
  ASSERT_TRUE(there.ok()) << there.status().ToString() << "\n" << *shipped;
  EXPECT_EQ(there->master.host, "10.5.0.1");
  EXPECT_EQ(there->computers[1].host, "10.0.0.2");
}

// Run on a cluster host whose own name maps to 127.0.1.1 here, as Debian's
// /etc/hosts does: refused, saying which name and what to do.
TEST(ShippedConfigTest, ANameThatIsLoopbackHereIsRefused) {
  auto here = ParseClusterConfig(kNamed, "/home/op/cluster.toml",
                                 Dns({{"head.example", "127.0.1.1"}, {"node-b", "10.0.0.2"}}));
  ASSERT_TRUE(here.ok()) << here.status().ToString();
  auto shipped = ShippedConfigText(kNamed, *here);
  ASSERT_FALSE(shipped.ok());
  const std::string e = shipped.status().message();
  EXPECT_NE(e.find("host \"head.example\" resolves to 127.0.1.1"), std::string::npos) << e;
  EXPECT_NE(e.find("[hosts]"), std::string::npos) << e;
}

}  // namespace
}  // namespace copse::client

// FreePorts gives distinct loopback ports, each bindable, below the kernel's
// ephemeral range (where no outgoing connection can take one).
#include "common/net/free_ports.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <set>

namespace copse::net {
namespace {

TEST(FreePortsTest, DistinctBindablePortsBelowTheEphemeralRange) {
  int low = 32768, high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  auto ports = FreePorts(20);
  ASSERT_TRUE(ports.ok()) << ports.status().ToString();
  ASSERT_EQ(ports->size(), 20u);
  EXPECT_EQ(std::set<uint16_t>(ports->begin(), ports->end()).size(), 20u);
  for (uint16_t port : *ports) {
    EXPECT_LT(port, low);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << port;
    ::close(fd);
  }
}

}  // namespace
}  // namespace copse::net

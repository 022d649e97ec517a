#include "common/net/free_ports.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

namespace copse::net {
namespace {

// The lowest port of the kernel's ephemeral range, from which it picks the
// source port of every outgoing connection (32768 when it cannot be read).
uint16_t EphemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (in >> low >> high && low > 2048 && low <= 65535) return static_cast<uint16_t>(low);
  return 32768;
}

// Binds a new socket to loopback:port (0: the kernel's choice); returns the
// socket and the port it got, or -1.
int BindLoopback(uint16_t port, uint16_t* got) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *got = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

// The ports are drawn at random from below the ephemeral range: a port the
// kernel hands out there could become some outgoing connection's source port
// between this probe and the daemon's bind (seen under a parallel test run:
// "Address already in use"); below it only another explicit bind can take
// it. The kernel's own choice is the fallback.
Result<std::vector<uint16_t>> FreePorts(int n) {
  std::vector<int> fds;
  std::vector<uint16_t> ports;
  const uint16_t high = EphemeralLow();
  std::uniform_int_distribution<int> pick(high / 2, high - 1);
  std::mt19937 rng(std::random_device{}());
  for (int i = 0, tries = 0; i < n; ++i) {
    uint16_t got = 0;
    int fd = -1;
    while (fd < 0 && tries < 64 * n) {
      ++tries;
      fd = BindLoopback(static_cast<uint16_t>(pick(rng)), &got);
    }
    if (fd < 0) fd = BindLoopback(0, &got);
    if (fd < 0) {
      const std::string why = std::strerror(errno);
      for (int f : fds) ::close(f);
      return Unavailable("bind to a free loopback port: " + why);
    }
    fds.push_back(fd);
    ports.push_back(got);
  }
  for (int fd : fds) ::close(fd);
  return ports;
}

}  // namespace copse::net

#include "common/net/free_ports.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace copse::net {

Result<std::vector<uint16_t>> FreePorts(int n) {
  std::vector<int> fds;
  std::vector<uint16_t> ports;
  Status status = Status::Ok();
  for (int i = 0; i < n && status.ok(); ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
      status = Unavailable(std::string("socket: ") + std::strerror(errno));
      break;
    }
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status = Unavailable(std::string("bind to a free loopback port: ") + std::strerror(errno));
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) ::close(fd);
  if (!status.ok()) return status;
  return ports;
}

}  // namespace copse::net

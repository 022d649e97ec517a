#include "dfs/local_read_wire.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>

namespace copse::dfs::local_read_wire {

void SetTimeouts(int fd, std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

Status Errno(const std::string& what, int err) {
  if (err == EAGAIN || err == EWOULDBLOCK) return DeadlineExceeded(what + ": timed out");
  return IoError(fmt::format("{}: {}", what, std::strerror(err)));
}

Status WriteAll(int fd, const uint8_t* p, size_t n, const char* what) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno(what, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status ReadAll(int fd, uint8_t* p, size_t n, const char* what) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Errno(what, errno);
    }
    if (r == 0) return Disconnected(fmt::format("{}: the peer closed the connection", what));
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::Ok();
}

Status BindPath(const std::filesystem::path& path, sockaddr_un* addr) {
  std::string s = path.string();
  if (s.size() >= sizeof(addr->sun_path)) {
    return InvalidArgument(fmt::format("local read socket path {} is longer than {} bytes", s,
                                       sizeof(addr->sun_path) - 1));
  }
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path, s.data(), s.size());
  return Status::Ok();
}

}  // namespace copse::dfs::local_read_wire

#include "common/process.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace copse {

std::string ReadProcFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0) out.clear();  // the process went away mid-read
      break;
    }
  }
  ::close(fd);
  return out;
}

namespace {

// The state letter of one /proc stat file, or 0 when it cannot be read.
char StateIn(const std::filesystem::path& stat_file) {
  const std::string stat = ReadProcFile(stat_file);
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return 0;
  return stat[close + 2];
}

bool Exited(char state) { return state == 0 || state == 'Z' || state == 'X' || state == 'x'; }

}  // namespace

bool ProcessAlive(int pid) {
  if (pid <= 0) return false;
  std::filesystem::path proc = std::filesystem::path("/proc") / std::to_string(pid);
  if (!Exited(StateIn(proc / "stat"))) return true;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(proc / "task", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!Exited(StateIn(it->path() / "stat"))) return true;
  }
  return false;
}

std::filesystem::path ExecutableDir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : self.parent_path();
}

}  // namespace copse

#include "common/process.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <set>
#include <sstream>
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

bool ListensOn(int pid, uint16_t port) {
  if (pid <= 0) return false;
  const std::filesystem::path proc = std::filesystem::path("/proc") / std::to_string(pid);
  // Lines of /proc/PID/net/tcp: "sl local_address rem_address st ... inode":
  // the local address is HEX_IP:HEX_PORT, state 0A is LISTEN, and the inode
  // is the tenth field.
  std::set<std::string> inodes;
  for (const char* table : {"net/tcp", "net/tcp6"}) {
    std::istringstream lines(ReadProcFile(proc / table));
    std::string line;
    std::getline(lines, line);  // the header
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string sl, local, remote, state, queues, timer, retr, uid, timeout, inode;
      if (!(f >> sl >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >>
            inode)) {
        continue;
      }
      const size_t colon = local.rfind(':');
      if (colon == std::string::npos || state != "0A") continue;
      unsigned long local_port = 0;
      try {
        local_port = std::stoul(local.substr(colon + 1), nullptr, 16);
      } catch (const std::exception&) {
        continue;
      }
      if (local_port == port) inodes.insert("socket:[" + inode + "]");
    }
  }
  if (inodes.empty()) return false;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(proc / "fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code link_ec;
    const std::filesystem::path target = std::filesystem::read_symlink(it->path(), link_ec);
    if (!link_ec && inodes.count(target.string())) return true;
  }
  return false;
}

std::vector<std::string> ProgramEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view v(*e);
    for (std::string_view name : {"PATH=", "HOME=", "USER=", "LOGNAME=", "LANG=", "LANGUAGE=",
                                  "TZ=", "TMPDIR=", "LD_LIBRARY_PATH=", "LC_"}) {
      if (v.rfind(name, 0) == 0) {
        env.emplace_back(v);
        break;
      }
    }
  }
  return env;
}

std::filesystem::path ExecutableDir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : self.parent_path();
}

std::filesystem::path InstalledDir(const std::string& build_tree, const std::string& installed) {
  const std::filesystem::path up = ExecutableDir().parent_path();
  std::error_code ec;
  if (std::filesystem::is_directory(up / build_tree, ec)) return up / build_tree;
  if (std::filesystem::is_directory(up / installed, ec)) return up / installed;
  return up / build_tree;
}

std::filesystem::path DefaultAppsDir() { return InstalledDir("apps", "lib/copse/apps"); }

}  // namespace copse

#include "common/process.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace copse {
namespace {

// The state letter of one /proc stat file, or 0 when it cannot be read.
char StateIn(const std::filesystem::path& stat_file) {
  std::ifstream in(stat_file);
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

}  // namespace copse

// ExecArgv: the null-terminated argv that exec and posix_spawn take, built
// from strings. Header-only; no state.
#pragma once

#include <string>
#include <vector>

namespace copse {

// Pointers into `args` (which must outlive the result), then nullptr.
inline std::vector<char*> ExecArgv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

}  // namespace copse

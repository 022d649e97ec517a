// Program names: what a job may name to run on a worker (DESIGN.md §6). A
// job names a program of the cluster's apps directory, never a path or a
// shell command; every part that takes a name from outside (the job spec's
// parser, the worker's task manager) checks it with this one rule.
// Thread-safety: a pure function.
#pragma once

#include <string_view>

namespace copse {

// True for a lower-case letter followed by up to 63 lower-case letters,
// digits, '-' or '_'.
inline bool ValidProgramName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace copse

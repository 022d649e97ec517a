// Program names: what a job may name to run on a worker (docs/jobs.md,
// docs/sdk.md). A job names a program — of the program store, as NAME or
// NAME@VERSION, or of the cluster's apps directory — never a path or a
// shell command; every part that takes a name from outside (the job spec's
// parser, the program store, the worker) checks it with these rules.
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

// A version of a stored program: 1 to 32 of A-Z, a-z, 0-9, '.', '_', '-',
// not starting with '.' or '-'.
inline bool ValidProgramVersion(std::string_view v) {
  if (v.empty() || v.size() > 32 || v.front() == '.' || v.front() == '-') return false;
  for (char c : v) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// NAME or NAME@VERSION.
inline bool ValidProgramRef(std::string_view program) {
  size_t at = program.find('@');
  if (at == std::string_view::npos) return ValidProgramName(program);
  return ValidProgramName(program.substr(0, at)) && ValidProgramVersion(program.substr(at + 1));
}

}  // namespace copse

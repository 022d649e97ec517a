// DFS paths: the rules every path obeys, the scratch area where jobs keep
// their intermediate files (docs/design.md §6), the job names that key it,
// and the program store's area (docs/sdk.md). The name service enforces
// them; clients may check a path before sending it.
// Thread-safety: pure functions, thread-safe.
#pragma once

#include <string>

#include "copse/status.h"

namespace copse::dfs {

inline constexpr const char* kScratchRoot = "/.scratch";
// The program store's files (`copse app put`): /.apps/NAME/VERSION.
inline constexpr const char* kAppsRoot = "/.apps";
// True for kAppsRoot and every path under it.
bool InProgramStore(const std::string& path);

// "/.scratch/JOB/NAME".
std::string ScratchPath(const std::string& job, const std::string& name);
// Checks a job name as the DFS keys scratch files and job outputs by it: 1 to
// 128 letters, digits, '-', '_' or '.'.
Status ValidateJobName(const std::string& job);
// Checks a DFS path: absolute, valid UTF-8, components of printable characters other than
// '/', no '.' or '..' components, no trailing '/', at most 1024 bytes.
Status ValidatePath(const std::string& path);

}  // namespace copse::dfs

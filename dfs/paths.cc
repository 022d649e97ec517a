#include "dfs/paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "common/text.h"

namespace copse::dfs {

bool InProgramStore(const std::string& path) {
  const std::string root = kAppsRoot;
  return path == root || path.rfind(root + "/", 0) == 0;
}

std::string ScratchPath(const std::string& job, const std::string& name) {
  return std::string(kScratchRoot) + "/" + job + "/" + name;
}

Status ValidateJobName(const std::string& job) {
  bool ok = !job.empty() && job.size() <= 128 && std::all_of(job.begin(), job.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!ok) return InvalidArgument(fmt::format("'{}' is not a valid job name", job));
  return Status::Ok();
}

Status ValidatePath(const std::string& raw) {
  // Messages show the path with its control characters and bad bytes escaped.
  auto shown = [&raw] { return EscapeForLog(raw); };
  if (raw.empty() || raw[0] != '/')
    return InvalidArgument(fmt::format("path '{}' must be absolute (start with '/')", shown()));
  if (raw.size() > 1024)
    return InvalidArgument(fmt::format("path of {} bytes is longer than 1024", raw.size()));
  if (raw == "/") return Status::Ok();
  if (!IsValidUtf8(raw))
    return InvalidArgument(fmt::format("path '{}' is not valid UTF-8", shown()));
  size_t start = 1;
  while (start <= raw.size()) {
    size_t end = raw.find('/', start);
    if (end == std::string::npos) end = raw.size();
    std::string_view part(raw.data() + start, end - start);
    if (part.empty())
      return InvalidArgument(
          fmt::format("path '{}' has an empty component (or a trailing '/')", shown()));
    if (part == "." || part == "..")
      return InvalidArgument(fmt::format("path '{}' may not contain '.' or '..'", shown()));
    if (part.size() > 255)
      return InvalidArgument(fmt::format("path '{}' has a component over 255 bytes", shown()));
    for (char ch : part) {
      auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7f)
        return InvalidArgument(fmt::format("path '{}' contains a control character", shown()));
    }
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace copse::dfs

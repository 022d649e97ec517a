#include "dfs/paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace copse::dfs {

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

Status ValidatePath(const std::string& path) {
  if (path.empty() || path[0] != '/')
    return InvalidArgument(fmt::format("path '{}' must be absolute (start with '/')", path));
  if (path.size() > 1024)
    return InvalidArgument(fmt::format("path of {} bytes is longer than 1024", path.size()));
  if (path == "/") return Status::Ok();
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part.empty())
      return InvalidArgument(
          fmt::format("path '{}' has an empty component (or a trailing '/')", path));
    if (part == "." || part == "..")
      return InvalidArgument(fmt::format("path '{}' may not contain '.' or '..'", path));
    if (part.size() > 255)
      return InvalidArgument(fmt::format("path '{}' has a component over 255 bytes", path));
    for (char ch : part) {
      auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7f)
        return InvalidArgument(fmt::format("path '{}' contains a control character", path));
    }
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace copse::dfs

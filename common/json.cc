#include "common/json.h"

#include <fmt/format.h>

#include <ctime>
#include <nlohmann/json.hpp>

namespace copse {

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

size_t JsonDepth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what, size_t max_depth) {
  if (size_t d = JsonDepth(text, max_depth); d > max_depth) {
    return InvalidArgument(std::string(what) + ": JSON nested deeper than " +
                           std::to_string(max_depth) + " levels");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return InvalidArgument(std::string(what) + ": malformed JSON: " + e.what());
  }
}

nlohmann::json IsoTime(int64_t ms) {
  if (ms < 0) return nullptr;
  time_t secs = static_cast<time_t>(ms / 1000);
  tm utc{};
  ::gmtime_r(&secs, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", buf, ms % 1000);
}

}  // namespace copse

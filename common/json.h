// JSON text in and out, with the rules for text from outside (common/text.h):
// every document Copse writes goes through DumpJson, which replaces invalid
// UTF-8 in strings by U+FFFD instead of throwing (nlohmann's default), and
// every document from outside is read with ParseJson, which refuses nesting
// deeper than a limit before building anything (nlohmann parses deep input
// without recursion, but dumping and destroying it recurse).
// Only the declarations of nlohmann/json_fwd.hpp are pulled in here.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "copse/status.h"

namespace copse {

// `j` as JSON text; `indent` < 0: compact. Never throws for string content.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

inline constexpr size_t kMaxJsonDepth = 64;

// Parses `text`. kInvalidArgument naming `what` ("job spec", "progress")
// when it is not JSON, or nests objects and arrays deeper than `max_depth`.
Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what,
                                 size_t max_depth = kMaxJsonDepth);

// A time in ms since the epoch as ISO 8601 UTC text with milliseconds
// ("YYYY-MM-DDTHH:MM:SS.mmmZ"), or null for a negative time (not yet).
nlohmann::json IsoTime(int64_t ms);

// The deepest nesting of objects and arrays in `text`, read as JSON (strings
// skipped); stops counting past `limit`.
size_t JsonDepth(std::string_view text, size_t limit);

}  // namespace copse

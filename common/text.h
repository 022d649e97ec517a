// Text from outside: the one rule for each place it is shown. Copse never
// trusts text it did not write itself (vertex logs and failure reasons, file
// and job names, parameters, peer names, HTTP paths): names are validated
// where they enter (dfs/paths.h, common/program_name.h, ValidateName below);
// everything else is kept as the bytes that came and escaped where it is
// shown:
//   - JSON: invalid UTF-8 sequences become U+FFFD (common/json.h's DumpJson);
//   - logs: one message is one line; newlines, control characters and
//     invalid bytes are written as escapes (EscapeForLog,
//     applied to every message by common/log.cc), so a peer cannot forge a
//     log line;
//   - terminals: control characters and escape sequences are made visible
//     (EscapeForTerminal, used by the `copse` tool for text from the cluster).
// Truncation never splits a character (Utf8Prefix, Utf8Suffix).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "copse/status.h"

namespace copse {

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool IsValidUtf8(std::string_view s);

// `s` with every ill-formed sequence replaced by U+FFFD, as browsers decode
// it (each maximal ill-formed subpart becomes one replacement character).
std::string ScrubUtf8(std::string_view s);

// The longest prefix of `s` of at most `max_bytes` bytes that does not end
// inside a well-formed multi-byte character.
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes);
// The longest suffix of `s` of at most `max_bytes` bytes that does not start
// inside a well-formed multi-byte character.
std::string_view Utf8Suffix(std::string_view s, size_t max_bytes);
// `s` to quote in a message: at most `max_bytes` of it (cut as by
// Utf8Prefix), with "..." after it when something was cut. A message that
// quotes its input must not grow with it: a 1 MB line would otherwise fill a
// job's failure reason and push the cause out of it.
std::string Excerpt(std::string_view s, size_t max_bytes = 64);

// `s` with every NUL byte replaced by U+FFFD: for text that travels in a
// Cap'n Proto Text field, which ends at the first NUL.
std::string WithoutNul(std::string_view s);

// For a log line: newline, carriage return and tab as "\n", "\r", "\t",
// every other control character (C0, DEL, C1) and every byte of an
// ill-formed sequence as "\xNN". Well-formed printable UTF-8 is kept.
std::string EscapeForLog(std::string_view s);

// For a terminal: control characters other than newline and tab (with
// `keep_lines`) and C1 controls as "\xNN" or "\u{NN}", ESC included, so no
// escape sequence reaches the terminal; ill-formed sequences as U+FFFD.
std::string EscapeForTerminal(std::string_view s, bool keep_lines = false);

// Checks a name that is shown and keyed by (a job name, a pool name): 1 to
// `max_bytes` bytes of well-formed UTF-8 without control characters.
// `field` names it in the error: "job spec: 'name' ...".
Status ValidateName(std::string_view name, std::string_view field, size_t max_bytes);

}  // namespace copse

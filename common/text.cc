#include "common/text.h"

#include <array>
#include <cstdint>

namespace copse {
namespace {

// The well-formed sequence at s[i] (Unicode's table 3-7): its length, or 0
// when it is ill-formed, with `*bad` the length of its maximal ill-formed
// subpart (at least 1). `*cp` gets the code point of a well-formed one.
size_t SequenceAt(std::string_view s, size_t i, size_t* bad, uint32_t* cp) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t lead = b(i);
  *bad = 1;
  if (lead < 0x80) {
    *cp = lead;
    return 1;
  }
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  uint32_t value = lead & (0x3F >> need);
  for (size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return 0;
    uint8_t c = b(i + k);
    if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return 0;
    value = (value << 6) | (c & 0x3F);
    *bad = k + 1;
  }
  *bad = 1;
  *cp = value;
  return need + 1;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

void AppendHex(std::string& out, uint8_t c) {
  static constexpr std::array<char, 16> kHex = {'0', '1', '2', '3', '4', '5', '6', '7',
                                                '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

bool IsControl(uint32_t cp) { return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F); }

// Whether s[0, cut) ends inside a well-formed character: the characters
// starting in the last three bytes before the cut run past it.
bool CutsCharacter(std::string_view s, size_t cut) {
  for (size_t back = 1; back <= 3 && back <= cut; ++back) {
    size_t start = cut - back;
    size_t bad = 0;
    uint32_t cp = 0;
    size_t n = SequenceAt(s, start, &bad, &cp);
    if (n > back) return true;
    if (static_cast<uint8_t>(s[start]) < 0x80 || n != 0) return false;
  }
  return false;
}

// The walk every rewriting function shares: `out` gets what on_char
// appends for each well-formed sequence (its bytes and code point) and what
// on_bad appends for each maximal ill-formed subpart (its bytes).
template <typename OnChar, typename OnBad>
std::string Rewrite(std::string_view s, OnChar on_char, OnBad on_bad) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t bad = 0;
    uint32_t cp = 0;
    size_t n = SequenceAt(s, i, &bad, &cp);
    if (n == 0) {
      on_bad(out, s.substr(i, bad));
      i += bad;
    } else {
      on_char(out, s.substr(i, n), cp);
      i += n;
    }
  }
  return out;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t bad = 0;
    uint32_t cp = 0;
    size_t n = SequenceAt(s, i, &bad, &cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ScrubUtf8(std::string_view s) {
  return Rewrite(
      s, [](std::string& out, std::string_view seq, uint32_t) { out.append(seq); },
      [](std::string& out, std::string_view) { out += kReplacement; });
}

std::string WithoutNul(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\0') {
      out += kReplacement;
    } else {
      out += c;
    }
  }
  return out;
}

std::string_view Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  for (int step = 0; step < 3 && cut > 0 && CutsCharacter(s, cut); ++step) --cut;
  return s.substr(0, cut);
}

std::string_view Utf8Suffix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t start = s.size() - max_bytes;
  // Continuation bytes at the start belong to a character that began before.
  for (int step = 0; step < 3 && start < s.size() && CutsCharacter(s, start); ++step) ++start;
  return s.substr(start);
}

std::string Excerpt(std::string_view s, size_t max_bytes) {
  std::string_view kept = Utf8Prefix(s, max_bytes);
  std::string out(kept);
  if (kept.size() < s.size()) out += "...";
  return out;
}

std::string EscapeForLog(std::string_view s) {
  auto hex = [](std::string& out, std::string_view bytes) {
    for (char c : bytes) AppendHex(out, static_cast<uint8_t>(c));
  };
  return Rewrite(
      s,
      [&](std::string& out, std::string_view seq, uint32_t cp) {
        switch (cp) {
          case '\n':
            out += "\\n";
            break;
          case '\r':
            out += "\\r";
            break;
          case '\t':
            out += "\\t";
            break;
          default:
            if (IsControl(cp)) {
              hex(out, seq);
            } else {
              out.append(seq);
            }
        }
      },
      hex);
}

std::string EscapeForTerminal(std::string_view s, bool keep_lines) {
  return Rewrite(
      s,
      [&](std::string& out, std::string_view seq, uint32_t cp) {
        if (keep_lines && (cp == '\n' || cp == '\t')) {
          out += static_cast<char>(cp);
        } else if (cp < 0x80 && IsControl(cp)) {
          AppendHex(out, static_cast<uint8_t>(cp));
        } else if (IsControl(cp)) {  // C1 controls, which some terminals obey
          out += "\\u{";
          out += "0123456789abcdef"[cp >> 4];
          out += "0123456789abcdef"[cp & 0xF];
          out += "}";
        } else {
          out.append(seq);
        }
      },
      [](std::string& out, std::string_view) { out += kReplacement; });
}

Status ValidateName(std::string_view name, std::string_view field, size_t max_bytes) {
  auto bad = [&](std::string_view what) {
    return InvalidArgument(std::string(field) + " " + std::string(what));
  };
  if (name.empty()) return bad("is empty");
  if (name.size() > max_bytes) {
    return bad("is " + std::to_string(name.size()) + " bytes, over the limit of " +
               std::to_string(max_bytes));
  }
  for (size_t i = 0; i < name.size();) {
    size_t skip = 0;
    uint32_t cp = 0;
    size_t n = SequenceAt(name, i, &skip, &cp);
    if (n == 0) return bad("is not valid UTF-8 (at byte " + std::to_string(i) + ")");
    if (IsControl(cp)) {
      return bad("contains a control character (at byte " + std::to_string(i) + ")");
    }
    i += n;
  }
  return Status::Ok();
}

}  // namespace copse

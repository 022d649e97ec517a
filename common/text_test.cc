#include "common/text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/json.h"

namespace copse {
namespace {

const std::string kEuro = "\xE2\x82\xAC";      // U+20AC, three bytes
const std::string kClef = "\xF0\x9D\x84\x9E";  // U+1D11E, four bytes
const std::string kFffd = "\xEF\xBF\xBD";

TEST(TextTest, ValidUtf8IsToldFromEveryKindOfIllFormedSequence) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9" + kEuro + kClef));
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));  // NUL is a character
  for (std::string bad : {"\xFF", "\x80", "\xC0\xAF", "\xC3", "\xE2\x82", "\xED\xA0\x80",
                          "\xF4\x90\x80\x80", "\xF8\x88\x80\x80\x80", "\xE0\x80\xAF"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << testing::PrintToString(bad);
    EXPECT_FALSE(IsValidUtf8("ok" + bad + "ok")) << testing::PrintToString(bad);
  }
}

TEST(TextTest, ScrubReplacesEachMaximalIllFormedSubpartOnce) {
  EXPECT_EQ(ScrubUtf8("a\xFF"
                      "b"),
            "a" + kFffd + "b");
  // A truncated three-byte sequence is one subpart, one replacement.
  EXPECT_EQ(ScrubUtf8("a\xE2\x82"), "a" + kFffd);
  // A surrogate's bytes: E D is a valid start only up to 9F, so three.
  EXPECT_EQ(ScrubUtf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);
  EXPECT_EQ(ScrubUtf8(kEuro + "\x80" + kClef), kEuro + kFffd + kClef);
  EXPECT_TRUE(IsValidUtf8(ScrubUtf8("\x9F\xC0\xF5\xFE\xFF\xE0\x80")));
}

TEST(TextTest, CutsNeverSplitACharacter) {
  std::string s = "ab" + kEuro + kClef + "z";  // 2 + 3 + 4 + 1 bytes
  for (size_t n = 0; n <= s.size(); ++n) {
    std::string_view p = Utf8Prefix(s, n);
    std::string_view q = Utf8Suffix(s, n);
    EXPECT_LE(p.size(), n);
    EXPECT_LE(q.size(), n);
    EXPECT_TRUE(IsValidUtf8(p)) << n;
    EXPECT_TRUE(IsValidUtf8(q)) << n;
    EXPECT_GE(p.size() + 3, std::min(n, s.size())) << "cut too much at " << n;
  }
  EXPECT_EQ(Utf8Prefix(s, 4), "ab");
  EXPECT_EQ(Utf8Prefix(s, 5), "ab" + kEuro);
  EXPECT_EQ(Utf8Suffix(s, 4), "z");
  EXPECT_EQ(Utf8Suffix(s, 5), kClef + "z");
  // Bytes that were never UTF-8 are cut where asked.
  std::string junk(10, '\xFF');
  EXPECT_EQ(Utf8Prefix(junk, 4).size(), 4u);
  EXPECT_EQ(Utf8Suffix(junk, 4).size(), 4u);
}

TEST(TextTest, AnExcerptIsBoundedAndSaysWhenItWasCut) {
  EXPECT_EQ(Excerpt("short"), "short");
  EXPECT_EQ(Excerpt(std::string(64, '7')), std::string(64, '7'));
  EXPECT_EQ(Excerpt(std::string(1 << 20, '7')), std::string(64, '7') + "...");
  // "é" is two bytes: a cut at 4 of "abcé" keeps "abc", not half a character.
  EXPECT_EQ(Excerpt("abc\xC3\xA9", 4), "abc...");
}

TEST(TextTest, NulBytesBecomeReplacementCharacters) {
  EXPECT_EQ(WithoutNul(std::string("a\0b\0", 4)), "a" + kFffd + "b" + kFffd);
  EXPECT_EQ(WithoutNul("plain"), "plain");
}

TEST(TextTest, ALogLineCannotBeForged) {
  std::string forged = "job 1 failed\n2026-01-01 00:00:00.000 I [master] job 2 succeeded";
  std::string e = EscapeForLog(forged);
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_NE(e.find("failed\\n2026"), std::string::npos) << e;
  EXPECT_EQ(EscapeForLog("a\rb\tc\x1b[2Jd\x7f"), "a\\rb\\tc\\x1b[2Jd\\x7f");
  EXPECT_EQ(EscapeForLog("\xFF" + kEuro), "\\xff" + kEuro);
  EXPECT_EQ(EscapeForLog("\xC2\x85"), "\\xc2\\x85");  // NEL, a C1 control
  EXPECT_EQ(EscapeForLog(std::string("nul\0here", 8)), "nul\\x00here");
}

TEST(TextTest, ATerminalGetsNoEscapeSequence) {
  std::string e = EscapeForTerminal("name\x1b]0;owned\x07\x1b[2J\r\n");
  EXPECT_EQ(e.find('\x1b'), std::string::npos);
  EXPECT_EQ(e.find('\x07'), std::string::npos);
  EXPECT_EQ(e.find('\r'), std::string::npos);
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_EQ(EscapeForTerminal("a\nb\tc", /*keep_lines=*/true), "a\nb\tc");
  EXPECT_EQ(EscapeForTerminal("a\nb", /*keep_lines=*/false), "a\\x0ab");
  EXPECT_EQ(EscapeForTerminal("\xC2\x9B"
                              "31m"),
            "\\u{9b}31m");  // CSI as a C1 control
  EXPECT_EQ(EscapeForTerminal("\xFF"), kFffd);
  EXPECT_EQ(EscapeForTerminal(kEuro), kEuro);
}

TEST(TextTest, NamesAreValidatedWithTheFieldNamed) {
  EXPECT_TRUE(ValidateName("wordcount " + kEuro, "job spec: 'name'", 128).ok());
  Status s = ValidateName("a\nb", "job spec: 'name'", 128);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("job spec: 'name' contains a control character (at byte 1)"),
            std::string::npos)
      << s.message();
  EXPECT_NE(ValidateName("ab\xFF", "f", 128).message().find("not valid UTF-8 (at byte 2)"),
            std::string::npos);
  EXPECT_NE(ValidateName("", "f", 128).message().find("empty"), std::string::npos);
  EXPECT_NE(ValidateName(std::string(129, 'a'), "f", 128).message().find("over the limit of 128"),
            std::string::npos);
  EXPECT_TRUE(ValidateName(std::string(128, 'a'), "f", 128).ok());
}

TEST(JsonTest, DumpReplacesInvalidTextInsteadOfThrowing) {
  nlohmann::json j = {{"failure", std::string("bad \xFF\xFE bytes")}, {"n", 1}};
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(j));
  EXPECT_NE(text.find("bad " + kFffd + kFffd + " bytes"), std::string::npos) << text;
  EXPECT_TRUE(nlohmann::json::accept(text));
  // Cut in the middle of a character: the half character is replaced.
  nlohmann::json cut = std::string(Utf8Prefix(kEuro, 2)) + kEuro.substr(0, 2);
  EXPECT_EQ(DumpJson(cut), "\"" + kFffd + "\"");
}

TEST(JsonTest, ParseRefusesDeepNestingAndNamesWhat) {
  std::string deep(10'000, '[');
  deep += std::string(10'000, ']');
  Result<nlohmann::json> r = ParseJson(deep, "job spec");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("job spec: JSON nested deeper than 64 levels"),
            std::string::npos);
  // Brackets inside strings do not count.
  std::string quoted = "{\"a\": \"" + std::string(1000, '[') + "\\\"\"}";
  ASSERT_TRUE(ParseJson(quoted, "x").ok()) << ParseJson(quoted, "x").status().ToString();
  std::string at_limit = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(ParseJson(at_limit, "x").ok());
  EXPECT_FALSE(ParseJson(std::string(65, '[') + std::string(65, ']'), "x").ok());
  Result<nlohmann::json> bad = ParseJson("{\"a\": \"\xFF\"}", "progress");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("progress: malformed JSON"), std::string::npos);
}

}  // namespace
}  // namespace copse

// .tar archives of programs: what is unpacked, and every hostile member that
// refuses the whole archive. The archives are made here byte by byte, so a
// test can hold what no friendly tool writes.
#include "common/archive.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace copse {
namespace {

// One ustar member.
std::string Member(const std::string& name, char type, const std::string& data,
                   unsigned mode = 0644) {
  std::string h(512, '\0');
  std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
  std::snprintf(h.data() + 100, 8, "%07o", mode);
  std::snprintf(h.data() + 108, 8, "%07o", 0u);
  std::snprintf(h.data() + 116, 8, "%07o", 0u);
  std::snprintf(h.data() + 124, 12, "%011llo", static_cast<unsigned long long>(data.size()));
  std::snprintf(h.data() + 136, 12, "%011o", 0u);
  h[156] = type;
  std::memcpy(h.data() + 257, "ustar\0" "00", 8);
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h.data() + 148, 8, "%06o", sum);
  std::string body = data;
  body.resize((data.size() + 511) / 512 * 512, '\0');
  return h + body;
}

std::string End() { return std::string(1024, '\0'); }

class ArchiveTest : public ::testing::Test {
 protected:
  ArchiveTest() {
    char tmpl[] = "/tmp/copse-archive-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::filesystem::create_directories(dir_ / "out");
  }
  ~ArchiveTest() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Result<uint64_t> Extract(const std::string& bytes, uint64_t max = 1 << 20) {
    std::ofstream(dir_ / "a.tar", std::ios::binary) << bytes;
    return ExtractTar(dir_ / "a.tar", dir_ / "out", max);
  }
  std::string Read(const std::string& rel) {
    std::ifstream in(dir_ / "out" / rel, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::filesystem::path dir_;
};

TEST_F(ArchiveTest, UnpacksFilesAndDirectoriesKeepingTheExecuteBit) {
  std::string tar = Member("./", '5', "", 0755) + Member("./run", '0', "#!/bin/sh\n", 0755) +
                    Member("./lib/", '5', "", 0755) + Member("./lib/data.txt", '0', "hello", 0644);
  auto n = Extract(tar + End());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 15u);
  EXPECT_EQ(Read("run"), "#!/bin/sh\n");
  EXPECT_EQ(Read("lib/data.txt"), "hello");
  EXPECT_EQ(::access((dir_ / "out/run").c_str(), X_OK), 0);
  EXPECT_NE(::access((dir_ / "out/lib/data.txt").c_str(), X_OK), 0);
}

TEST_F(ArchiveTest, LongNamesFromGnuAndPaxHeadersAreUsed) {
  std::string long_name = "dir/" + std::string(150, 'n');
  std::string pax_record = "path=" + std::string(120, 'p') + "\n";
  std::string pax = std::to_string(pax_record.size() + 4) + " " + pax_record;
  ASSERT_EQ(pax.size(), pax_record.size() + 4);
  std::string tar = Member("././@LongLink", 'L', long_name + '\0') + Member("short", '0', "gnu") +
                    Member("PaxHeaders/x", 'x', pax) + Member("short2", '0', "pax");
  auto n = Extract(tar + End());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(Read(long_name), "gnu");
  EXPECT_EQ(Read(std::string(120, 'p')), "pax");
}

TEST_F(ArchiveTest, HostileMembersRefuseTheArchiveNamingThem) {
  struct Case {
    std::string tar, why;
  } cases[] = {
      {Member("../escape", '0', "x"), "'..'"},
      {Member("a/../../escape", '0', "x"), "'..'"},
      {Member("/etc/passwd", '0', "x"), "not a relative name"},
      {Member("link", '2', ""), "only files and directories"},
      {Member("hard", '1', ""), "only files and directories"},
      {Member("dev", '3', ""), "only files and directories"},
      {Member("bad\xff", '0', "x"), "not a relative name"},
      {Member("twice", '0', "a") + Member("twice", '0', "b"), "appears twice"},
  };
  for (const Case& c : cases) {
    std::filesystem::remove_all(dir_ / "out");
    std::filesystem::create_directories(dir_ / "out");
    auto n = Extract(c.tar + End());
    ASSERT_FALSE(n.ok()) << c.why;
    EXPECT_EQ(n.status().code(), StatusCode::kInvalidArgument) << c.why;
    EXPECT_NE(n.status().message().find(c.why), std::string::npos) << n.status().message();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "escape"));
}

TEST_F(ArchiveTest, BrokenArchivesAreRefused) {
  EXPECT_EQ(Extract("not a tar file at all").status().code(), StatusCode::kInvalidArgument);
  std::string m = Member("f", '0', std::string(2000, 'x'));
  EXPECT_NE(Extract(m.substr(0, 1000)).status().message().find("cut short"), std::string::npos);
  std::string bad_sum = Member("f", '0', "x");
  bad_sum[0] = 'g';
  EXPECT_NE(Extract(bad_sum + End()).status().message().find("checksum"), std::string::npos);
  EXPECT_NE(Extract(std::string(512, 'z') + End()).status().message().find("ustar"),
            std::string::npos);
}

TEST_F(ArchiveTest, ABombStopsAtTheLimit) {
  auto n = Extract(Member("a", '0', std::string(4096, 'x')) + Member("b", '0', std::string(4096, 'x')) +
                       End(),
                   6000);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace copse

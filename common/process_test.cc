// ReadProcFile and ProcessAlive on real processes: a child that is running,
// one that exited and was reaped, and a plain file.
#include "common/process.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace copse {
namespace {

TEST(ProcessTest, ReadsAFileWhole) {
  std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("copse_process_test_" + std::to_string(::getpid()));
  std::string text(10000, 'x');
  std::ofstream(p) << text;
  EXPECT_EQ(ReadProcFile(p), text);
  std::filesystem::remove(p);
  EXPECT_EQ(ReadProcFile(p), "");  // gone: empty, no exception
}

TEST(ProcessTest, AProcessThatExitedReadsAsGoneAndNotAlive) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const std::filesystem::path stat = "/proc/" + std::to_string(child) + "/stat";
  EXPECT_NE(ReadProcFile(stat).find(std::to_string(child)), std::string::npos);
  EXPECT_TRUE(ProcessAlive(child));
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(ReadProcFile(stat), "");
  EXPECT_FALSE(ProcessAlive(child));
  EXPECT_FALSE(ProcessAlive(-1));
}

TEST(ProcessTest, ListensOnSeesAListeningSocketOnItsPortOnly) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the kernel's choice
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const uint16_t port = ntohs(addr.sin_port);
  EXPECT_FALSE(ListensOn(::getpid(), port)) << "bound, not yet listening";
  ASSERT_EQ(::listen(fd, 1), 0);
  EXPECT_TRUE(ListensOn(::getpid(), port));
  EXPECT_FALSE(ListensOn(::getpid(), static_cast<uint16_t>(port == 65535 ? 1 : port + 1)));
  ::close(fd);
  EXPECT_FALSE(ListensOn(::getpid(), port));
  EXPECT_FALSE(ListensOn(0, port));
}

}  // namespace
}  // namespace copse

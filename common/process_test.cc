// ReadProcFile and ProcessAlive on real processes: a child that is running,
// one that exited and was reaped, and a plain file.
#include "common/process.h"

#include <gtest/gtest.h>
#include <signal.h>
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

}  // namespace
}  // namespace copse

#include "common/work_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <vector>

namespace copse {
namespace {

TEST(WorkThreadTest, RunsJobsInOrderOffTheCallersThread) {
  WorkThread w;
  std::vector<int> seen;
  std::promise<std::thread::id> ran_on;
  for (int i = 0; i < 100; ++i) w.Post([&seen, i] { seen.push_back(i); });
  w.Post([&] { ran_on.set_value(std::this_thread::get_id()); });
  EXPECT_NE(ran_on.get_future().get(), std::this_thread::get_id());
  w.Stop();
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);
}

TEST(WorkThreadTest, StopRunsWhatIsQueuedAndDropsLaterPosts) {
  std::atomic<int> n{0};
  std::promise<void> go;
  std::shared_future<void> gate = go.get_future().share();
  WorkThread w;
  w.Post([gate] { gate.wait(); });  // holds the thread while more is queued
  for (int i = 0; i < 10; ++i) w.Post([&n] { ++n; });
  go.set_value();
  w.Stop();
  EXPECT_EQ(n.load(), 10);
  w.Post([&n] { ++n; });
  w.Stop();  // idempotent
  EXPECT_EQ(n.load(), 10);
}

}  // namespace
}  // namespace copse

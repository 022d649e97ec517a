#include "common/net/backoff.h"

#include <gtest/gtest.h>

namespace copse::net {
namespace {

TEST(BackoffTest, GrowsAndCaps) {
  Backoff b({Duration{100}, Duration{1000}, 2.0}, 7);
  int64_t steps[] = {100, 200, 400, 800, 1000, 1000, 1000};
  for (int64_t step : steps) {
    Duration d = b.Next();
    EXPECT_LE(d.count(), step);
    EXPECT_GE(d.count(), step - step / 2);
  }
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff b({Duration{100}, Duration{10000}, 3.0}, 7);
  for (int i = 0; i < 5; ++i) (void)b.Next();
  b.Reset();
  EXPECT_LE(b.Next().count(), 100);
}

TEST(BackoffTest, SameSeedSameDelays) {
  Backoff a({}, 99), b({}, 99);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.Next(), b.Next());
}

}  // namespace
}  // namespace copse::net

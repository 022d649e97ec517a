#include "common/clock.h"

#include <time.h>

namespace copse {

int64_t MonotonicNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Timestamp SteadyClock::Now() const {
  return std::chrono::duration_cast<Timestamp>(std::chrono::steady_clock::now().time_since_epoch());
}

Timestamp SystemClock::Now() const {
  return std::chrono::duration_cast<Timestamp>(std::chrono::system_clock::now().time_since_epoch());
}

}  // namespace copse

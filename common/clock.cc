#include "common/clock.h"

namespace copse {

Timestamp SteadyClock::Now() const {
  return std::chrono::duration_cast<Timestamp>(std::chrono::steady_clock::now().time_since_epoch());
}

Timestamp SystemClock::Now() const {
  return std::chrono::duration_cast<Timestamp>(std::chrono::system_clock::now().time_since_epoch());
}

}  // namespace copse

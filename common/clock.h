// Time for Copse components. Time is a count of microseconds since an epoch
// the clock chooses; components take a Clock& (or, in the pure scheduler, the
// time itself) so that tests can drive time by hand. No component reads the
// wall clock directly.
// Thread-safety: SteadyClock is thread-safe; ManualClock is not.
#pragma once

#include <chrono>
#include <cstdint>

namespace copse {

using Duration = std::chrono::microseconds;
// Microseconds since the clock's epoch.
using Timestamp = std::chrono::microseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp Now() const = 0;
};

// CLOCK_MONOTONIC in nanoseconds: one clock for every process on a machine,
// so a time taken in one process can be subtracted from one taken in
// another (a worker's start message and its vertex's first instruction).
int64_t MonotonicNs();

// Monotonic time from std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  Timestamp Now() const override;
};

// Wall-clock time (std::chrono::system_clock): microseconds since the Unix
// epoch. Only for times shown to people (when a job was submitted); never for
// measuring durations or for the scheduler.
class SystemClock final : public Clock {
 public:
  Timestamp Now() const override;
};

// Time that moves only when a test advances it.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Timestamp start = Timestamp{0}) : now_(start) {}
  Timestamp Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }
  void Set(Timestamp t) { now_ = t; }

 private:
  Timestamp now_;
};

// Seconds as a double, for reports.
inline double ToSeconds(Duration d) { return static_cast<double>(d.count()) / 1e6; }

}  // namespace copse

// Milliseconds between steady-clock readings, for the solvers' phase
// statistics. Thread-safety: pure functions.
#pragma once

#include <chrono>

namespace copse::flow {

using SteadyClock = std::chrono::steady_clock;

inline double MsBetween(SteadyClock::time_point from, SteadyClock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}
inline double MsSince(SteadyClock::time_point from) { return MsBetween(from, SteadyClock::now()); }

}  // namespace copse::flow

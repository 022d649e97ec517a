// Capped exponential backoff with jitter, for reconnect loops. Pure: the
// randomness comes from a seed, so tests see fixed delays.
// Thread-safety: not thread-safe.
#pragma once

#include <cstdint>
#include <random>

#include "common/clock.h"

namespace copse::net {

struct BackoffOptions {
  Duration initial{100'000};  // first delay
  Duration max{5'000'000};    // cap
  double multiplier = 2.0;
};

class Backoff {
 public:
  Backoff(BackoffOptions options, uint64_t seed) : options_(options), rng_(seed) {}

  // The next delay: the current step (initial * multiplier^attempts, capped),
  // less up to half of it at random; then the step grows.
  Duration Next();
  // After a success: start again from the initial delay.
  void Reset() { step_ = Duration{0}; }

 private:
  BackoffOptions options_;
  std::mt19937_64 rng_;
  Duration step_{0};
};

}  // namespace copse::net

#include "common/net/backoff.h"

#include <algorithm>

namespace copse::net {

Duration Backoff::Next() {
  if (step_.count() == 0) {
    step_ = options_.initial;
  } else {
    auto grown = static_cast<double>(step_.count()) * options_.multiplier;
    step_ =
        Duration{static_cast<int64_t>(std::min(grown, static_cast<double>(options_.max.count())))};
  }
  step_ = std::min(step_, options_.max);
  int64_t half = step_.count() / 2;
  std::uniform_int_distribution<int64_t> jitter(0, half);
  return Duration{step_.count() - jitter(rng_)};
}

}  // namespace copse::net

#include "scheduler/quincy_costs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace copse::scheduler {

namespace {

constexpr long double kMaxMilli = static_cast<long double>(int64_t{1} << 60);

int64_t RoundMilli(long double milli) {
  milli = std::clamp(milli, -kMaxMilli, kMaxMilli);
  return static_cast<int64_t>(std::llround(milli));
}

}  // namespace

int64_t DataCostMilli(const QuincyCostParams& p, TransferBytes b) {
  // 1000 milli-units per paper unit, 10^9 bytes per GB.
  long double milli =
      (static_cast<long double>(p.psi) * b.rack + static_cast<long double>(p.xi) * b.core) / 1e6L;
  return RoundMilli(milli);
}

int64_t WaitCostMilli(const QuincyCostParams& p, Duration unscheduled) {
  // 1000 milli-units per paper unit, 10^6 microseconds per second.
  return RoundMilli(static_cast<long double>(p.omega) * unscheduled.count() / 1e3L);
}

Duration ClockQuantum(const QuincyCostParams& p) {
  for (int64_t ms = 1; ms <= 1000; ++ms) {
    const double milli = p.omega * static_cast<double>(ms);
    if (std::abs(milli - std::round(milli)) < 1e-9) return Duration{ms * 1000};
  }
  return Duration{0};
}

TransferBytes RackBytes(const TaskLocality& loc, int32_t rack, int32_t num_racks) {
  for (const PreferredRack& r : loc.racks) {
    if (r.rack == rack) return r.bytes;
  }
  return TransferBytes{loc.worst.core / std::max(num_racks, 1), loc.worst.core};
}

TransferBytes ComputerBytes(const TaskLocality& loc, int32_t computer, int32_t rack,
                            int32_t num_racks) {
  for (const PreferredComputer& c : loc.computers) {
    if (c.computer == computer) return c.bytes;
  }
  return RackBytes(loc, rack, num_racks);
}

TransferBytes RunningBytes(const QuincyCostParams& p, const TaskLocality& loc, int32_t computer,
                           int32_t rack, int32_t num_racks) {
  TransferBytes best = ComputerBytes(loc, computer, rack, num_racks);
  for (TransferBytes other : {loc.worst, RackBytes(loc, rack, num_racks)}) {
    if (DataCostMilli(p, other) < DataCostMilli(p, best)) best = other;
  }
  return best;
}

QuincyArcCosts ComputeQuincyCosts(const QuincyCostParams& p, const TaskLocality& loc,
                                  const TaskTimes& times, std::optional<RunningOn> running,
                                  int32_t num_racks) {
  // Caps apply to tasks that are not running (appendix, starvation freedom).
  const int64_t cap = running ? std::numeric_limits<int64_t>::max() : p.max_cost_milli;
  auto capped = [cap](int64_t c) { return std::min(c, cap); };
  QuincyArcCosts out;
  out.unscheduled = capped(WaitCostMilli(p, times.unscheduled));
  out.any_computer = capped(DataCostMilli(p, loc.worst));
  out.racks.reserve(loc.racks.size());
  for (const PreferredRack& r : loc.racks) out.racks.push_back(capped(DataCostMilli(p, r.bytes)));
  if (running) {
    TransferBytes here = RunningBytes(p, loc, running->computer, running->rack, num_racks);
    int64_t invested = RoundMilli(static_cast<long double>(times.running.count()) / 1e3L);
    out.running = DataCostMilli(p, here) - invested - kRunningTieBreakMilli;
  }
  out.computers.reserve(loc.computers.size());
  for (const PreferredComputer& c : loc.computers) {
    bool here = running && running->computer == c.computer;
    out.computers.push_back(here ? *out.running : capped(DataCostMilli(p, c.bytes)));
  }
  return out;
}

}  // namespace copse::scheduler

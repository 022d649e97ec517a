#include "scheduler/scheduling_loop.h"

#include <string>
#include <vector>

namespace copse::scheduler {

SchedulingLoop::SchedulingLoop(Scheduler& scheduler, DecisionSink& sink, LoopOptions options,
                               Hooks hooks)
    : sched_(scheduler), sink_(sink), options_(options), hooks_(std::move(hooks)) {}

Status SchedulingLoop::Handle(const Event& event, Timestamp now) {
  return sched_.Handle(event, now);
}

Result<Timestamp> SchedulingLoop::Round(Timestamp now, size_t* decided) {
  Timestamp w0 = options_.wall != nullptr ? options_.wall->Now() : Timestamp{0};
  Result<std::vector<Decision>> ds = sched_.Schedule(now);
  Timestamp w1 = options_.wall != nullptr ? options_.wall->Now() : Timestamp{0};
  ++rounds_;
  if (!ds.ok()) return ds.status().WithContext("scheduler");
  *decided = ds->size();
  Timestamp at = now;
  if (hooks_.after_round) {
    COPSE_ASSIGN_OR_RETURN(at, hooks_.after_round(RoundInfo{now, w1 - w0, ds->size()}));
    if (at < now) return Internal("after_round moved decisions back in time");
  }
  for (const Decision& d : *ds) COPSE_RETURN_IF_ERROR(sink_.Apply(d, at));
  return at;
}

Result<Timestamp> SchedulingLoop::RunRounds(Timestamp now, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    size_t decided = 0;
    COPSE_ASSIGN_OR_RETURN(now, Round(now, &decided));
    if (decided == 0) break;
  }
  return now;
}

Result<Timestamp> SchedulingLoop::Run(Timestamp now) {
  for (int i = 0; i < options_.max_rounds; ++i) {
    size_t decided = 0;
    COPSE_ASSIGN_OR_RETURN(now, Round(now, &decided));
    if (decided == 0) return now;
  }
  return Internal("the scheduler kept deciding at one instant (" +
                  std::to_string(options_.max_rounds) + " rounds in a row decided something)");
}

std::optional<Timestamp> SchedulingLoop::NextWakeup() const {
  std::optional<Timestamp> w = sched_.NextWakeup();
  if (w && served_ && *w <= *served_) return *served_ + options_.tick;
  return w;
}

Result<bool> SchedulingLoop::Wakeup(Timestamp now) {
  std::optional<Timestamp> w = sched_.NextWakeup();
  if (!w || *w > now) return false;
  COPSE_RETURN_IF_ERROR(sched_.Handle(Timer{}, now));
  served_ = now;
  return true;
}

}  // namespace copse::scheduler

#include "scheduler/events.h"

#include <type_traits>

namespace copse::scheduler {

std::string ToString(const Decision& d) {
  std::string task = (d.root ? "root task " : "task ") + std::to_string(d.task);
  std::string job = " (job " + std::to_string(d.job) + ")";
  switch (d.kind) {
    case Decision::Kind::kAdmitJob:
      return "admit job " + std::to_string(d.job);
    case Decision::Kind::kStartTask:
      return "start " + task + job + " on computer " + std::to_string(d.computer);
    case Decision::Kind::kKillTask:
      return "kill " + task + job + " on computer " + std::to_string(d.computer);
  }
  return "?";
}

const char* EventName(const Event& e) {
  return std::visit(
      [](const auto& x) -> const char* {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, JobSubmitted>) return "JobSubmitted";
        if constexpr (std::is_same_v<T, JobFinished>) return "JobFinished";
        if constexpr (std::is_same_v<T, RootFailed>) return "RootFailed";
        if constexpr (std::is_same_v<T, TaskSubmitted>) return "TaskSubmitted";
        if constexpr (std::is_same_v<T, TaskStarted>) return "TaskStarted";
        if constexpr (std::is_same_v<T, TaskStartFailed>) return "TaskStartFailed";
        if constexpr (std::is_same_v<T, TaskCompleted>) return "TaskCompleted";
        if constexpr (std::is_same_v<T, TaskFailed>) return "TaskFailed";
        if constexpr (std::is_same_v<T, TaskWithdrawn>) return "TaskWithdrawn";
        if constexpr (std::is_same_v<T, TaskKilled>) return "TaskKilled";
        if constexpr (std::is_same_v<T, TaskAdopted>) return "TaskAdopted";
        if constexpr (std::is_same_v<T, ComputerUp>) return "ComputerUp";
        if constexpr (std::is_same_v<T, ComputerDown>) return "ComputerDown";
        if constexpr (std::is_same_v<T, ComputerDraining>) return "ComputerDraining";
        return "Timer";
      },
      e);
}

std::string ToString(const Event& e) {
  std::string what = EventName(e);
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (requires { x.task; }) what += " task " + std::to_string(x.task);
        if constexpr (requires { x.job; }) what += " job " + std::to_string(x.job);
        if constexpr (requires { x.computer; }) what += " computer " + std::to_string(x.computer);
        if constexpr (std::is_same_v<T, ComputerDraining>) {
          what += x.draining ? (x.move_tasks ? " (moving its tasks)" : "") : " (undrained)";
        }
        (void)sizeof(T);
      },
      e);
  return what;
}

}  // namespace copse::scheduler

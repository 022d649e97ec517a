#include "worker/task_service.h"

#include "common/net/message.h"
#include "common/task_messages.h"
#include "proto/scheduling.capnp.h"

namespace copse::worker {

using proto::SchedulingMessage;

void TaskService::FillRegistration(proto::RegisterRequest::Builder r) {
  std::vector<RunningTaskReport> running = manager_->Running();
  auto list = r.initRunningTasks(static_cast<unsigned>(running.size()));
  for (unsigned i = 0; i < running.size(); ++i) WriteRunning(list[i], running[i]);
  std::vector<TaskExitReport> ended = manager_->Unacknowledged();
  auto exits = r.initEndedTasks(static_cast<unsigned>(ended.size()));
  for (unsigned i = 0; i < ended.size(); ++i) WriteExit(exits[i], ended[i]);
}

Status TaskService::OnMasterFrame(const net::Frame& frame) {
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<SchedulingMessage>();
    switch (root.which()) {
      case SchedulingMessage::LAUNCH_TASK:
        manager_->Launch(ReadLaunch(root.getLaunchTask()));
        return Status::Ok();
      case SchedulingMessage::KILL_TASK: {
        auto k = root.getKillTask();
        manager_->Kill(k.getTaskId(), k.getAttempt(), k.getReason());
        return Status::Ok();
      }
      case SchedulingMessage::EXIT_ACK:
        manager_->Ack(root.getExitAck().getTaskId(), root.getExitAck().getAttempt());
        return Status::Ok();
      case SchedulingMessage::JOB_ENDED:
        manager_->JobEnded(root.getJobEnded().getJobId());
        return Status::Ok();
      default:
        return InvalidArgument("unexpected scheduling message from the master");
    }
  });
}

void TaskService::TaskStarted(uint64_t task, uint32_t attempt, int pid) {
  capnp::MallocMessageBuilder msg;
  auto s = msg.initRoot<SchedulingMessage>().initTaskStarted();
  s.setTaskId(task);
  s.setAttempt(attempt);
  s.setPid(static_cast<uint32_t>(pid));
  agent_.Send(net::Protocol::kScheduling, EncodeScheduling(msg));
}

void TaskService::TaskExited(const TaskExitReport& exit) {
  capnp::MallocMessageBuilder msg;
  WriteExit(msg.initRoot<SchedulingMessage>().initTaskExit(), exit);
  agent_.Send(net::Protocol::kScheduling, EncodeScheduling(msg));
}

}  // namespace copse::worker

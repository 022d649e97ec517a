// The task vocabulary (common/tasks.h) on the wire (proto/scheduling.capnp):
// one writer and one reader per message, shared by the master, the workers
// and the root tasks. Include from .cc files that handle messages.
// Thread-safety: pure functions.
#pragma once

#include <capnp/message.h>

#include <vector>

#include "copse/status.h"
#include "common/tasks.h"
#include "proto/scheduling.capnp.h"

namespace copse {

void WriteLaunch(proto::LaunchTask::Builder out, const LaunchRequest& r);
LaunchRequest ReadLaunch(proto::LaunchTask::Reader in);

void WriteExit(proto::TaskExit::Builder out, const TaskExitReport& e);
TaskExitReport ReadExit(proto::TaskExit::Reader in);

void WriteRunning(proto::RunningTask::Builder out, const RunningTaskReport& r);
RunningTaskReport ReadRunning(proto::RunningTask::Reader in);

void WriteVertexTask(proto::VertexTask::Builder out, const VertexTaskRequest& t);
VertexTaskRequest ReadVertexTask(proto::VertexTask::Reader in);

void WriteEvent(proto::TaskEvent::Builder out, const TaskEvent& e);
TaskEvent ReadEvent(proto::TaskEvent::Reader in);

// A frame payload holding `msg` (a SchedulingMessage).
std::vector<uint8_t> EncodeScheduling(capnp::MallocMessageBuilder& msg);
// A payload holding only a SchedError with `s`.
std::vector<uint8_t> EncodeSchedError(const Status& s);
// The status a SchedError carries (codes out of range become kInternal).
Status StatusFromSchedError(proto::SchedError::Reader e);

}  // namespace copse

#include "common/task_messages.h"

#include <string_view>

#include "common/net/message.h"

namespace copse {
namespace {

ExitKind FromWire(proto::ExitKind k) {
  switch (k) {
    case proto::ExitKind::COMPLETED:
      return ExitKind::kCompleted;
    case proto::ExitKind::FAILED:
      return ExitKind::kFailed;
    case proto::ExitKind::KILLED:
      return ExitKind::kKilled;
    case proto::ExitKind::START_FAILED:
      return ExitKind::kStartFailed;
  }
  return ExitKind::kFailed;
}

proto::ExitKind ToWire(ExitKind k) {
  switch (k) {
    case ExitKind::kCompleted:
      return proto::ExitKind::COMPLETED;
    case ExitKind::kFailed:
      return proto::ExitKind::FAILED;
    case ExitKind::kKilled:
      return proto::ExitKind::KILLED;
    case ExitKind::kStartFailed:
      return proto::ExitKind::START_FAILED;
  }
  return proto::ExitKind::FAILED;
}

TaskEventKind FromWire(proto::TaskEventKind k) {
  switch (k) {
    case proto::TaskEventKind::STARTED:
      return TaskEventKind::kStarted;
    case proto::TaskEventKind::COMPLETED:
      return TaskEventKind::kCompleted;
    case proto::TaskEventKind::FAILED:
      return TaskEventKind::kFailed;
    case proto::TaskEventKind::PREEMPTED:
      return TaskEventKind::kPreempted;
    case proto::TaskEventKind::LOST:
      return TaskEventKind::kLost;
    case proto::TaskEventKind::WITHDRAWN:
      return TaskEventKind::kWithdrawn;
  }
  return TaskEventKind::kLost;
}

proto::TaskEventKind ToWire(TaskEventKind k) {
  switch (k) {
    case TaskEventKind::kStarted:
      return proto::TaskEventKind::STARTED;
    case TaskEventKind::kCompleted:
      return proto::TaskEventKind::COMPLETED;
    case TaskEventKind::kFailed:
      return proto::TaskEventKind::FAILED;
    case TaskEventKind::kPreempted:
      return proto::TaskEventKind::PREEMPTED;
    case TaskEventKind::kLost:
      return proto::TaskEventKind::LOST;
    case TaskEventKind::kWithdrawn:
      return proto::TaskEventKind::WITHDRAWN;
  }
  return proto::TaskEventKind::LOST;
}

}  // namespace

std::string FormatVertexLabel(const VertexLabel& l) {
  return l.stage + "[" + std::to_string(l.index) + "] v" + std::to_string(l.version);
}

bool ParseVertexLabel(const std::string& label, VertexLabel* out) {
  size_t open = label.rfind('[');
  size_t close = label.rfind("] v");
  if (open == std::string::npos || open == 0 || close == std::string::npos || close < open + 2) {
    return false;
  }
  auto number = [](std::string_view s, uint64_t* v) {
    if (s.empty() || s.size() > 9) return false;
    *v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      *v = *v * 10 + static_cast<uint64_t>(c - '0');
    }
    return true;
  };
  std::string_view text(label);
  uint64_t index = 0, version = 0;
  if (!number(text.substr(open + 1, close - open - 1), &index) ||
      !number(text.substr(close + 3), &version)) {
    return false;
  }
  out->stage = label.substr(0, open);
  out->index = static_cast<int>(index);
  out->version = static_cast<uint32_t>(version);
  return true;
}

const char* ExitKindName(ExitKind k) {
  switch (k) {
    case ExitKind::kCompleted:
      return "completed";
    case ExitKind::kFailed:
      return "failed";
    case ExitKind::kKilled:
      return "killed";
    case ExitKind::kStartFailed:
      return "start failed";
  }
  return "?";
}

const char* TaskEventKindName(TaskEventKind k) {
  switch (k) {
    case TaskEventKind::kStarted:
      return "started";
    case TaskEventKind::kCompleted:
      return "completed";
    case TaskEventKind::kFailed:
      return "failed";
    case TaskEventKind::kPreempted:
      return "preempted";
    case TaskEventKind::kLost:
      return "lost";
    case TaskEventKind::kWithdrawn:
      return "withdrawn";
  }
  return "?";
}

void WriteLaunch(proto::LaunchTask::Builder out, const LaunchRequest& r) {
  out.setTaskId(r.task);
  out.setAttempt(r.attempt);
  out.setJobId(r.job);
  out.setIncarnation(r.incarnation);
  out.setRoot(r.root);
  out.setProgram(r.program);
  out.setDescriptor(r.descriptor);
  out.setTimeoutMs(static_cast<uint64_t>(r.timeout.count() / 1000));
  out.setLabel(r.label);
  auto programs = out.initPrograms(static_cast<unsigned>(r.programs.size()));
  for (unsigned i = 0; i < programs.size(); ++i) {
    const ProgramRef& p = r.programs[i];
    programs[i].setName(p.name);
    programs[i].setSha256(p.sha256);
    programs[i].setPath(p.path);
    programs[i].setSize(p.size);
    programs[i].setEntry(p.entry);
    programs[i].setExecutable(p.executable);
  }
}

LaunchRequest ReadLaunch(proto::LaunchTask::Reader in) {
  LaunchRequest r;
  r.task = in.getTaskId();
  r.attempt = in.getAttempt();
  r.job = in.getJobId();
  r.incarnation = in.getIncarnation();
  r.root = in.getRoot();
  r.program = in.getProgram();
  r.descriptor = in.getDescriptor();
  r.timeout = Duration{static_cast<int64_t>(in.getTimeoutMs()) * 1000};
  r.label = in.getLabel();
  for (auto p : in.getPrograms()) {
    r.programs.push_back({p.getName(), p.getSha256(), p.getPath(), p.getSize(), p.getEntry(),
                          p.getExecutable()});
  }
  return r;
}

void WriteExit(proto::TaskExit::Builder out, const TaskExitReport& e) {
  out.setTaskId(e.task);
  out.setAttempt(e.attempt);
  out.setJobId(e.job);
  out.setRoot(e.root);
  out.setKind(ToWire(e.kind));
  out.setExitCode(e.exit_code);
  out.setSignal(e.signal);
  out.setReason(e.reason);
  out.setLogTail(e.log_tail);
  out.setResult(e.result);
  out.setRunMs(static_cast<uint64_t>(e.run.count() / 1000));
  out.setLaunchUs(e.launch_us);
  out.setSpawnUs(e.spawn_us);
}

TaskExitReport ReadExit(proto::TaskExit::Reader in) {
  TaskExitReport e;
  e.task = in.getTaskId();
  e.attempt = in.getAttempt();
  e.job = in.getJobId();
  e.root = in.getRoot();
  e.kind = FromWire(in.getKind());
  e.exit_code = in.getExitCode();
  e.signal = in.getSignal();
  e.reason = in.getReason();
  e.log_tail = in.getLogTail();
  e.result = in.getResult();
  e.run = Duration{static_cast<int64_t>(in.getRunMs()) * 1000};
  e.launch_us = in.getLaunchUs();
  e.spawn_us = in.getSpawnUs();
  return e;
}

void WriteRunning(proto::RunningTask::Builder out, const RunningTaskReport& r) {
  out.setTaskId(r.task);
  out.setAttempt(r.attempt);
  out.setJobId(r.job);
  out.setIncarnation(r.incarnation);
  out.setRoot(r.root);
  out.setRunningMs(static_cast<uint64_t>(r.running.count() / 1000));
  out.setLabel(r.label);
  out.setProgram(r.program);
  out.setDescriptor(r.descriptor);
  out.setTimeoutMs(static_cast<uint64_t>(r.timeout.count() / 1000));
}

RunningTaskReport ReadRunning(proto::RunningTask::Reader in) {
  RunningTaskReport r;
  r.task = in.getTaskId();
  r.attempt = in.getAttempt();
  r.job = in.getJobId();
  r.incarnation = in.getIncarnation();
  r.root = in.getRoot();
  r.running = Duration{static_cast<int64_t>(in.getRunningMs()) * 1000};
  r.label = in.getLabel();
  r.program = in.getProgram();
  r.descriptor = in.getDescriptor();
  r.timeout = Duration{static_cast<int64_t>(in.getTimeoutMs()) * 1000};
  return r;
}

void WriteVertexTask(proto::VertexTask::Builder out, const VertexTaskRequest& t) {
  out.setProgram(t.program);
  out.setDescriptor(t.descriptor);
  out.setLabel(t.label);
  out.setTimeoutMs(static_cast<uint64_t>(t.timeout.count() / 1000));
  auto loc = out.initLocality();
  loc.setWorstRackBytes(t.locality.worst_rack_bytes);
  loc.setWorstCoreBytes(t.locality.worst_core_bytes);
  auto cs = loc.initComputers(static_cast<unsigned>(t.locality.computers.size()));
  for (unsigned i = 0; i < cs.size(); ++i) {
    const NamedLocality::Place& p = t.locality.computers[i];
    cs[i].setComputer(p.name);
    cs[i].setRackBytes(p.rack_bytes);
    cs[i].setCoreBytes(p.core_bytes);
  }
  auto rs = loc.initRacks(static_cast<unsigned>(t.locality.racks.size()));
  for (unsigned i = 0; i < rs.size(); ++i) {
    const NamedLocality::Place& p = t.locality.racks[i];
    rs[i].setRack(p.name);
    rs[i].setRackBytes(p.rack_bytes);
    rs[i].setCoreBytes(p.core_bytes);
  }
}

VertexTaskRequest ReadVertexTask(proto::VertexTask::Reader in) {
  VertexTaskRequest t;
  t.program = in.getProgram();
  t.descriptor = in.getDescriptor();
  t.label = in.getLabel();
  t.timeout = Duration{static_cast<int64_t>(in.getTimeoutMs()) * 1000};
  auto loc = in.getLocality();
  t.locality.worst_rack_bytes = loc.getWorstRackBytes();
  t.locality.worst_core_bytes = loc.getWorstCoreBytes();
  for (auto c : loc.getComputers()) {
    t.locality.computers.push_back({c.getComputer(), c.getRackBytes(), c.getCoreBytes()});
  }
  for (auto r : loc.getRacks()) {
    t.locality.racks.push_back({r.getRack(), r.getRackBytes(), r.getCoreBytes()});
  }
  return t;
}

void WriteEvent(proto::TaskEvent::Builder out, const TaskEvent& e) {
  out.setTaskId(e.task);
  out.setKind(ToWire(e.kind));
  out.setAttempt(e.attempt);
  out.setComputer(e.computer);
  out.setReason(e.reason);
  out.setLogTail(e.log_tail);
  out.setResult(e.result);
  out.setExitCode(e.exit_code);
}

TaskEvent ReadEvent(proto::TaskEvent::Reader in) {
  TaskEvent e;
  e.task = in.getTaskId();
  e.kind = FromWire(in.getKind());
  e.attempt = in.getAttempt();
  e.computer = in.getComputer();
  e.reason = in.getReason();
  e.log_tail = in.getLogTail();
  e.result = in.getResult();
  e.exit_code = in.getExitCode();
  return e;
}

std::vector<uint8_t> EncodeScheduling(capnp::MallocMessageBuilder& msg) {
  return net::EncodeMessage(msg);
}

std::vector<uint8_t> EncodeSchedError(const Status& s) {
  capnp::MallocMessageBuilder msg;
  auto e = msg.initRoot<proto::SchedulingMessage>().initError();
  e.setCode(static_cast<uint16_t>(s.code()));
  e.setMessage(s.message());
  return net::EncodeMessage(msg);
}

Status StatusFromSchedError(proto::SchedError::Reader e) {
  uint16_t code = e.getCode();
  StatusCode c = code <= static_cast<uint16_t>(StatusCode::kInternal)
                     ? static_cast<StatusCode>(code)
                     : StatusCode::kInternal;
  if (c == StatusCode::kOk) c = StatusCode::kInternal;
  return Status(c, e.getMessage());
}

}  // namespace copse

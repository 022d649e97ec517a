#include "master/scheduling_protocol.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/net/message.h"
#include "common/task_messages.h"

namespace copse::master {

using proto::SchedulingMessage;

namespace {

void Send(net::Connection& conn, capnp::MallocMessageBuilder& msg) {
  conn.Send(net::Protocol::kScheduling, net::PayloadKind::kMessage, EncodeScheduling(msg));
}

proto::TaskStateOnMaster ToWire(TaskStateReport::State s) {
  switch (s) {
    case TaskStateReport::State::kWaiting:
      return proto::TaskStateOnMaster::WAITING;
    case TaskStateReport::State::kRunning:
      return proto::TaskStateOnMaster::RUNNING;
    case TaskStateReport::State::kUnknown:
      return proto::TaskStateOnMaster::UNKNOWN;
  }
  return proto::TaskStateOnMaster::UNKNOWN;
}

}  // namespace

void SchedulingConnections::OnWorkerRegistered(const std::string& computer, net::Connection& conn,
                                               const WorkerTasks&) {
  workers_[computer] = &conn;
}

void SchedulingConnections::AddRoot(uint64_t job, net::Connection& conn) {
  roots_[job] = &conn;
  root_of_conn_[conn.id()] = job;
}

std::optional<uint64_t> SchedulingConnections::RootJob(uint64_t conn) const {
  auto it = root_of_conn_.find(conn);
  if (it == root_of_conn_.end()) return std::nullopt;
  return it->second;
}

void SchedulingConnections::Closed(net::Connection& conn) {
  for (auto it = workers_.begin(); it != workers_.end();) {
    it = it->second->id() == conn.id() ? workers_.erase(it) : std::next(it);
  }
  if (auto it = root_of_conn_.find(conn.id()); it != root_of_conn_.end()) {
    auto r = roots_.find(it->second);
    if (r != roots_.end() && r->second->id() == conn.id()) roots_.erase(r);
    root_of_conn_.erase(it);
  }
}

net::Connection* SchedulingConnections::Worker(const std::string& computer) const {
  auto it = workers_.find(computer);
  return it != workers_.end() && it->second->open() ? it->second : nullptr;
}

SchedulingProtocol::SchedulingProtocol(const ClusterManager& cluster, SchedulingService& scheduling,
                                       JobService& jobs, SchedulingConnections& connections)
    : cluster_(cluster), scheduling_(scheduling), jobs_(jobs), connections_(connections) {}

void SchedulingProtocol::OnClose(net::Connection& conn) {
  connections_.Closed(conn);
  waiting_conns_.erase(conn.id());
}

Status SchedulingProtocol::OnFrame(net::Connection& conn, const net::Frame& frame) {
  if (frame.kind != net::PayloadKind::kMessage) {
    return InvalidArgument("raw bytes sent as a scheduling message");
  }
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<SchedulingMessage>();
    const std::string computer = cluster_.ComputerOfSession(conn.id());
    const std::optional<uint64_t> root_job = connections_.RootJob(conn.id());
    switch (root.which()) {
      case SchedulingMessage::TASK_STARTED:
      case SchedulingMessage::TASK_EXIT:
        if (computer.empty()) {
          return InvalidArgument("a task report from a connection that registered no computer");
        }
        return root.which() == SchedulingMessage::TASK_STARTED
                   ? OnTaskStarted(computer, root.getTaskStarted())
                   : OnTaskExit(computer, root.getTaskExit());
      case SchedulingMessage::ROOT_HELLO:
        return OnRootHello(conn, root.getRootHello());
      case SchedulingMessage::SUBMIT_TASKS:
      case SchedulingMessage::WITHDRAW_TASK:
      case SchedulingMessage::JOB_PROGRESS:
      case SchedulingMessage::JOB_OVER:
        break;
      default:
        return InvalidArgument("unexpected scheduling message for the master");
    }
    if (!root_job) return InvalidArgument("a root's message before its hello was accepted");
    const uint64_t job = *root_job;
    scheduling_.RootHeard(job);
    switch (root.which()) {
      case SchedulingMessage::SUBMIT_TASKS:
        return OnSubmitTasks(conn, job, root.getSubmitTasks());
      case SchedulingMessage::WITHDRAW_TASK:
        return OnWithdrawTask(job, root.getWithdrawTask());
      case SchedulingMessage::JOB_PROGRESS:
        return OnJobProgress(job, root.getJobProgress());
      default:
        return OnJobOver(conn, job, root.getJobOver());
    }
  });
}

Status SchedulingProtocol::OnTaskStarted(const std::string& computer,
                                         proto::TaskStarted::Reader r) {
  scheduling_.TaskStarted(computer, r.getTaskId(), r.getAttempt());
  return Status::Ok();
}

Status SchedulingProtocol::OnTaskExit(const std::string& computer, proto::TaskExit::Reader r) {
  scheduling_.TaskExited(computer, ReadExit(r));
  return Status::Ok();
}

Status SchedulingProtocol::OnRootHello(net::Connection& conn, proto::RootHello::Reader r) {
  Hello h{conn.id(), r.getJobId(), r.getIncarnation(), r.getTaskId(), {}};
  for (uint64_t t : r.getLiveTasks()) h.live.push_back(t);
  Result<RootAdmission> ok = jobs_.ValidateRoot(h.job, h.incarnation, h.root_task);
  if (!ok.ok()) {
    spdlog::warn("refused a root from {}: {}", conn.remote(), ok.status().ToString());
    conn.Send(net::Protocol::kScheduling, net::PayloadKind::kMessage,
              EncodeSchedError(ok.status()));
    return Status::Ok();
  }
  if (scheduling_.recovering()) {
    waiting_.push_back(std::move(h));
    waiting_conns_[conn.id()] = &conn;
    return Status::Ok();
  }
  Welcome(conn, h);
  return Status::Ok();
}

void SchedulingProtocol::Welcome(net::Connection& conn, const Hello& h) {
  Result<RootAdmission> ok = jobs_.ValidateRoot(h.job, h.incarnation, h.root_task);
  if (!ok.ok()) {
    conn.Send(net::Protocol::kScheduling, net::PayloadKind::kMessage,
              EncodeSchedError(ok.status()));
    return;
  }
  capnp::MallocMessageBuilder msg;
  auto w = msg.initRoot<SchedulingMessage>().initRootWelcome();
  w.setSpec(ok->spec);
  w.setJobName(ok->name);
  std::vector<TaskStateReport> states = scheduling_.RootHello(h.job, h.live);
  auto list = w.initTasks(static_cast<unsigned>(states.size()));
  for (unsigned i = 0; i < states.size(); ++i) {
    list[i].setTaskId(states[i].task);
    list[i].setState(ToWire(states[i].state));
    list[i].setAttempt(states[i].attempt);
    list[i].setComputer(states[i].computer);
  }
  Send(conn, msg);
  connections_.AddRoot(h.job, conn);
  spdlog::info("root of job {} (incarnation {}) connected from {}", h.job, h.incarnation,
               conn.remote());
  scheduling_.RootConnected(h.job);
  scheduling_.RootHeard(h.job);
}

void SchedulingProtocol::Recovered() {
  std::vector<Hello> waiting = std::move(waiting_);
  waiting_.clear();
  for (const Hello& h : waiting) {
    auto it = waiting_conns_.find(h.conn);
    if (it != waiting_conns_.end() && it->second->open()) Welcome(*it->second, h);
  }
  waiting_conns_.clear();
}

Status SchedulingProtocol::OnSubmitTasks(net::Connection& conn, uint64_t job,
                                         proto::SubmitTasks::Reader r) {
  std::vector<VertexTaskRequest> tasks;
  for (auto t : r.getTasks()) tasks.push_back(ReadVertexTask(t));
  Result<std::vector<uint64_t>> ids = scheduling_.Submit(job, std::move(tasks));
  if (!ids.ok()) {
    conn.Send(net::Protocol::kScheduling, net::PayloadKind::kMessage,
              EncodeSchedError(ids.status()));
    return Status::Ok();
  }
  capnp::MallocMessageBuilder msg;
  auto list = msg.initRoot<SchedulingMessage>().initSubmitTasksReply().initTaskIds(
      static_cast<unsigned>(ids->size()));
  for (unsigned i = 0; i < ids->size(); ++i) list.set(i, (*ids)[i]);
  Send(conn, msg);
  return Status::Ok();
}

Status SchedulingProtocol::OnWithdrawTask(uint64_t job, proto::WithdrawTask::Reader r) {
  Status s = scheduling_.Withdraw(job, r.getTaskId());
  if (!s.ok()) spdlog::warn("job {}: withdraw: {}", job, s.ToString());
  return Status::Ok();
}

Status SchedulingProtocol::OnJobProgress(uint64_t job, proto::JobProgress::Reader r) {
  auto json = r.getJson();
  jobs_.Progress(job, std::string_view(json.cStr(), json.size()));
  return Status::Ok();
}

Status SchedulingProtocol::OnJobOver(net::Connection& conn, uint64_t job,
                                     proto::JobOver::Reader r) {
  auto progress = r.getProgress();
  Status s = jobs_.Over(job, r.getSucceeded(), r.getReason(),
                        std::string_view(progress.cStr(), progress.size()));
  if (!s.ok()) {
    conn.Send(net::Protocol::kScheduling, net::PayloadKind::kMessage, EncodeSchedError(s));
    return Status::Ok();
  }
  capnp::MallocMessageBuilder msg;
  msg.initRoot<SchedulingMessage>().initJobOverReply();
  Send(conn, msg);
  return Status::Ok();
}

// ---- TaskMessenger ------------------------------------------------------------

bool SchedulingConnections::Launch(const std::string& computer, const LaunchRequest& r) {
  net::Connection* conn = Worker(computer);
  if (conn == nullptr) return false;
  capnp::MallocMessageBuilder msg;
  WriteLaunch(msg.initRoot<SchedulingMessage>().initLaunchTask(), r);
  Send(*conn, msg);
  return true;
}

bool SchedulingConnections::Kill(const std::string& computer, uint64_t task, uint32_t attempt,
                                 const std::string& reason) {
  net::Connection* conn = Worker(computer);
  if (conn == nullptr) return false;
  capnp::MallocMessageBuilder msg;
  auto k = msg.initRoot<SchedulingMessage>().initKillTask();
  k.setTaskId(task);
  k.setAttempt(attempt);
  k.setReason(reason);
  Send(*conn, msg);
  return true;
}

void SchedulingConnections::AckExit(const std::string& computer, uint64_t task, uint32_t attempt) {
  net::Connection* conn = Worker(computer);
  if (conn == nullptr) return;
  capnp::MallocMessageBuilder msg;
  auto a = msg.initRoot<SchedulingMessage>().initExitAck();
  a.setTaskId(task);
  a.setAttempt(attempt);
  Send(*conn, msg);
}

void SchedulingConnections::JobEnded(uint64_t job) {
  for (auto& [computer, conn] : workers_) {
    if (!conn->open()) continue;
    capnp::MallocMessageBuilder msg;
    msg.initRoot<SchedulingMessage>().initJobEnded().setJobId(job);
    Send(*conn, msg);
  }
}

bool SchedulingConnections::ToRoot(uint64_t job, const TaskEvent& e) {
  auto it = roots_.find(job);
  if (it == roots_.end() || !it->second->open()) return false;
  capnp::MallocMessageBuilder msg;
  WriteEvent(msg.initRoot<SchedulingMessage>().initTaskEvent(), e);
  Send(*it->second, msg);
  return true;
}

}  // namespace copse::master

#include "master/cluster_service.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "common/net/message.h"
#include "common/task_messages.h"
#include "proto/cluster.capnp.h"

namespace copse::master {
namespace {

using proto::ClusterMessage;

void Send(net::Connection& conn, capnp::MallocMessageBuilder& msg) {
  conn.Send(net::Protocol::kCluster, net::PayloadKind::kMessage, net::EncodeMessage(msg));
}

WorkerRegistration ReadRegistration(proto::RegisterRequest::Reader r, const std::string& remote) {
  WorkerRegistration reg;
  reg.computer = r.getComputer();
  reg.rack = r.getRack();
  reg.slots = static_cast<int>(r.getSlots());
  reg.host = r.getHost();
  reg.control_port = r.getControlPort();
  reg.data_port = r.getDataPort();
  reg.incarnation = r.getIncarnation();
  reg.pid = r.getPid();
  reg.remote = remote;
  reg.protocol_version = r.getProtocolVersion();
  return reg;
}

}  // namespace

ClusterService::ClusterService(asio::io_context& io, const ClusterConfig& config,
                               ClusterManager& cluster, const Clock& clock, DfsStatus dfs)
    : config_(config),
      cluster_(cluster),
      clock_(clock),
      started_(clock.Now()),
      dfs_(std::move(dfs)),
      timer_(io) {}

void ClusterService::Start() { ArmTimer(); }

void ClusterService::Stop() {
  stopped_ = true;
  timer_.cancel();
}

void ClusterService::ArmTimer() {
  if (stopped_) return;
  timer_.expires_after(std::chrono::microseconds(config_.heartbeat_interval.count() / 2));
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    CheckTimeouts();
    ArmTimer();
  });
}

void ClusterService::CheckTimeouts() { (void)cluster_.CheckTimeouts(clock_.Now()); }

void ClusterService::OnClose(net::Connection& conn) { cluster_.SessionClosed(conn.id()); }

Status ClusterService::OnFrame(net::Connection& conn, const net::Frame& frame) {
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<ClusterMessage>();
    switch (root.which()) {
      case ClusterMessage::REGISTER:
        return OnRegister(conn, root.getRegister());
      case ClusterMessage::HEARTBEAT:
        return OnHeartbeat(conn, root.getHeartbeat());
      case ClusterMessage::STATUS_REQUEST:
        return OnStatusRequest(conn);
      case ClusterMessage::DRAIN_REQUEST:
        return OnDrainRequest(conn, root.getDrainRequest());
      default:
        return InvalidArgument("unexpected cluster message for the master");
    }
  });
}

Status ClusterService::OnRegister(net::Connection& conn, proto::RegisterRequest::Reader r) {
  WorkerRegistration reg = ReadRegistration(r, conn.remote());
  ClusterManager::Decision d = cluster_.Register(conn.id(), reg, clock_.Now());
  capnp::MallocMessageBuilder reply;
  auto rr = reply.initRoot<ClusterMessage>().initRegisterReply();
  rr.setAccepted(d.accepted);
  rr.setReason(d.reason);
  rr.setHeartbeatIntervalMs(static_cast<uint32_t>(config_.heartbeat_interval.count() / 1000));
  Send(conn, reply);
  if (!d.accepted) {
    spdlog::warn("refused worker from {}: {}", conn.remote(), d.reason);
    return Status::Ok();
  }
  WorkerTasks tasks;
  for (auto t : r.getRunningTasks()) tasks.running.push_back(ReadRunning(t));
  for (auto e : r.getEndedTasks()) tasks.ended.push_back(ReadExit(e));
  for (WorkerListener* l : listeners_) l->OnWorkerRegistered(reg.computer, conn, tasks);
  return Status::Ok();
}

Status ClusterService::OnHeartbeat(net::Connection& conn, proto::Heartbeat::Reader hb) {
  bool known = cluster_.Heartbeat(conn.id(), static_cast<int>(hb.getBusySlots()), clock_.Now());
  // A heartbeat is answered only when the worker must register again: an
  // idle cluster's traffic is then one message per worker and interval.
  if (known) return Status::Ok();
  capnp::MallocMessageBuilder reply;
  reply.initRoot<ClusterMessage>().initHeartbeatReply().setReregister(true);
  Send(conn, reply);
  return Status::Ok();
}

Status ClusterService::OnStatusRequest(net::Connection& conn) {
  Timestamp now = clock_.Now();
  capnp::MallocMessageBuilder reply;
  auto st = reply.initRoot<ClusterMessage>().initStatus();
  st.setClusterName(config_.name);
  st.setMasterPid(static_cast<uint32_t>(::getpid()));
  st.setUptimeMs((now - started_).count() / 1000);
  if (dfs_.under_replicated)
    st.setUnderReplicatedBlocks(static_cast<uint32_t>(dfs_.under_replicated()));
  std::vector<ComputerView> views = cluster_.Snapshot(now);
  auto list = st.initComputers(static_cast<unsigned>(views.size()));
  for (unsigned i = 0; i < views.size(); ++i) {
    const ComputerView& v = views[i];
    list[i].setName(v.name);
    list[i].setRack(v.rack);
    list[i].setSlots(static_cast<uint32_t>(v.slots));
    list[i].setState(ComputerStateName(v.state));
    list[i].setHost(v.host);
    list[i].setLastHeartbeatAgoMs(v.last_heartbeat_ago_ms);
    list[i].setPid(v.pid);
    list[i].setBusySlots(static_cast<uint32_t>(v.busy_slots));
    list[i].setDraining(v.draining);
    if (v.draining && dfs_.drain_progress) {
      dfs::DrainProgress p = dfs_.drain_progress(v.name);
      list[i].setSoleBlocks(static_cast<uint32_t>(p.sole_blocks));
      list[i].setShortBlocks(static_cast<uint32_t>(p.short_blocks));
    }
  }
  Send(conn, reply);
  return Status::Ok();
}

Status ClusterService::OnDrainRequest(net::Connection& conn, proto::DrainRequest::Reader r) {
  std::string computer = r.getComputer();
  Result<std::string> done = cluster_.SetDraining(computer, r.getDrain(), r.getMoveTasks());
  capnp::MallocMessageBuilder reply;
  auto dr = reply.initRoot<ClusterMessage>().initDrainReply();
  if (done.ok()) {
    dr.setCode(0);
    dr.setMessage(*done);
  } else {
    dr.setCode(static_cast<uint16_t>(done.status().code()));
    dr.setMessage(done.status().message());
  }
  Send(conn, reply);
  return Status::Ok();
}

}  // namespace copse::master

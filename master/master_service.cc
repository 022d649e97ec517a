#include "master/master_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "common/net/message.h"
#include "proto/cluster.capnp.h"

namespace copse::master {

MasterService::MasterService(asio::io_context& io, const ClusterConfig& config, std::string secret,
                             const Clock& clock)
    : io_(io),
      config_(config),
      clock_(clock),
      started_(clock.Now()),
      cluster_(config, config.worker_timeout),
      server_(io, std::move(secret), "master", net::TransportOptions{}, this),
      timer_(io),
      dfs_timer_(io) {}

MasterService::~MasterService() { Stop(); }

Status MasterService::Start(uint16_t port_override) {
  uint16_t port = port_override ? port_override : config_.master.port;
  COPSE_ASSIGN_OR_RETURN(meta_, dfs::OpenRocksMetaStore(config_.master.data_dir / "namespace"));
  dfs_ = std::make_unique<DfsService>(config_, clock_, *meta_);
  COPSE_RETURN_IF_ERROR(dfs_->Load());
  cluster_.set_listener(dfs_.get());
  COPSE_RETURN_IF_ERROR(server_.Listen(config_.master.host, port));
  spdlog::info("master of cluster '{}' listening on {}:{} ({} computers in {} racks)", config_.name,
               config_.master.host, server_.port(), config_.computers.size(), config_.racks.size());
  ArmTimer();
  ArmDfsTimer();
  return Status::Ok();
}

void MasterService::Stop() {
  if (stopped_) return;
  stopped_ = true;
  timer_.cancel();
  dfs_timer_.cancel();
  server_.Stop();
}

void MasterService::ArmDfsTimer() {
  if (stopped_) return;
  dfs_timer_.expires_after(std::chrono::milliseconds(200));
  dfs_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    dfs_->Tick();
    ArmDfsTimer();
  });
}

void MasterService::ArmTimer() {
  if (stopped_) return;
  timer_.expires_after(std::chrono::microseconds(config_.heartbeat_interval.count() / 2));
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    CheckTimeouts();
    ArmTimer();
  });
}

void MasterService::CheckTimeouts() { (void)cluster_.CheckTimeouts(clock_.Now()); }

void MasterService::OnFrame(net::Connection& conn, net::Frame frame) {
  Status s;
  switch (frame.protocol) {
    case net::Protocol::kCluster:
      s = HandleCluster(conn, frame);
      break;
    case net::Protocol::kDfs:
      s = dfs_->Handle(conn, frame, cluster_.ComputerOfSession(conn.id()));
      break;
    default:
      s = InvalidArgument(fmt::format("the master does not serve the {} protocol",
                                      net::ProtocolName(frame.protocol)));
  }
  if (!s.ok()) conn.Close(s);
}

void MasterService::OnClose(net::Connection& conn, const Status& why) {
  (void)why;
  if (dfs_) dfs_->ConnectionClosed(conn.id());
  cluster_.SessionClosed(conn.id());
}

namespace {

void SendCluster(net::Connection& conn, capnp::MallocMessageBuilder& msg) {
  conn.Send(net::Protocol::kCluster, net::PayloadKind::kMessage, net::EncodeMessage(msg));
}

void FillStatus(proto::ClusterStatus::Builder out, const ClusterConfig& config,
                const std::vector<ComputerView>& views, int64_t uptime_ms) {
  out.setClusterName(config.name);
  out.setMasterPid(static_cast<uint32_t>(::getpid()));
  out.setUptimeMs(uptime_ms);
  auto list = out.initComputers(static_cast<unsigned>(views.size()));
  for (unsigned i = 0; i < views.size(); ++i) {
    const ComputerView& v = views[i];
    auto c = list[i];
    c.setName(v.name);
    c.setRack(v.rack);
    c.setSlots(static_cast<uint32_t>(v.slots));
    c.setState(ComputerStateName(v.state));
    c.setHost(v.host);
    c.setLastHeartbeatAgoMs(v.last_heartbeat_ago_ms);
    c.setPid(v.pid);
    c.setBusySlots(static_cast<uint32_t>(v.busy_slots));
  }
}

}  // namespace

Status MasterService::HandleCluster(net::Connection& conn, const net::Frame& frame) {
  return net::CatchDecodeErrors([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::ClusterMessage>();
    capnp::MallocMessageBuilder reply;
    auto out = reply.initRoot<proto::ClusterMessage>();
    switch (root.which()) {
      case proto::ClusterMessage::REGISTER: {
        auto r = root.getRegister();
        WorkerRegistration reg{
            r.getComputer(),    r.getRack(),        static_cast<int>(r.getSlots()),
            r.getHost(),        r.getControlPort(), r.getDataPort(),
            r.getIncarnation(), r.getPid(),         conn.remote()};
        ClusterManager::Decision d = cluster_.Register(conn.id(), reg, clock_.Now());
        auto rr = out.initRegisterReply();
        rr.setAccepted(d.accepted);
        rr.setReason(d.reason);
        rr.setHeartbeatIntervalMs(static_cast<uint32_t>(config_.heartbeat_interval.count() / 1000));
        if (!d.accepted) spdlog::warn("refused worker from {}: {}", conn.remote(), d.reason);
        if (d.accepted) dfs_->AttachWorker(reg.computer, conn);
        break;
      }
      case proto::ClusterMessage::HEARTBEAT: {
        auto hb = root.getHeartbeat();
        bool known =
            cluster_.Heartbeat(conn.id(), static_cast<int>(hb.getBusySlots()), clock_.Now());
        out.initHeartbeatReply().setReregister(!known);
        break;
      }
      case proto::ClusterMessage::STATUS_REQUEST: {
        Timestamp now = clock_.Now();
        FillStatus(out.initStatus(), config_, cluster_.Snapshot(now),
                   (now - started_).count() / 1000);
        break;
      }
      default:
        return InvalidArgument("unexpected cluster message for the master");
    }
    SendCluster(conn, reply);
    return Status::Ok();
  });
}

}  // namespace copse::master

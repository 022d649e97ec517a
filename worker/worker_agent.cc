#include "worker/worker_agent.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <memory>
#include <utility>

#include "common/net/message.h"
#include "proto/cluster.capnp.h"
#include "proto/scheduling.capnp.h"

namespace copse::worker {

WorkerAgent::WorkerAgent(asio::io_context& io, const ClusterConfig& config,
                         const ComputerConfig& computer, std::string secret, uint64_t incarnation,
                         FatalCallback on_fatal)
    : config_(config),
      computer_(computer),
      incarnation_(incarnation),
      on_fatal_(std::move(on_fatal)),
      own_link_(std::make_unique<net::ReconnectingLink>(
          io, config.master.host, config.master.port,
          net::AuthParams{false, std::move(secret), "", "worker " + computer.name}, incarnation,
          *this)),
      own_timer_(std::make_unique<net::AsioTimer>(io)),
      link_(*own_link_),
      heartbeat_timer_(*own_timer_),
      heartbeat_interval_(
          std::chrono::duration_cast<std::chrono::milliseconds>(config.heartbeat_interval)) {}

WorkerAgent::WorkerAgent(const ClusterConfig& config, const ComputerConfig& computer,
                         uint64_t incarnation, net::Link& link, net::Timer& heartbeat_timer,
                         FatalCallback on_fatal)
    : config_(config),
      computer_(computer),
      incarnation_(incarnation),
      on_fatal_(std::move(on_fatal)),
      link_(link),
      heartbeat_timer_(heartbeat_timer),
      heartbeat_interval_(
          std::chrono::duration_cast<std::chrono::milliseconds>(config.heartbeat_interval)) {}

WorkerAgent::~WorkerAgent() { Stop(); }

void WorkerAgent::Start() { link_.Start(); }

void WorkerAgent::Stop() {
  heartbeat_timer_.Cancel();
  link_.Stop();
  registered_ = false;
}

void WorkerAgent::OnLinkOpen(const std::string& remote) {
  spdlog::info("connected to master {}", remote);
  SendRegister();
}

void WorkerAgent::SendRegister() {
  capnp::MallocMessageBuilder msg;
  auto r = msg.initRoot<proto::ClusterMessage>().initRegister();
  r.setComputer(computer_.name);
  r.setRack(computer_.rack);
  r.setSlots(static_cast<uint32_t>(computer_.slots));
  r.setHost(computer_.host);
  r.setControlPort(computer_.control_port);
  r.setDataPort(computer_.data_port);
  r.setIncarnation(incarnation_);
  r.setPid(static_cast<uint32_t>(::getpid()));
  r.setProtocolVersion(proto::SCHEDULING_PROTOCOL_VERSION);
  for (auto& [protocol, part] : parts_) part->FillRegistration(r);
  (void)link_.Send(net::Protocol::kCluster, net::EncodeMessage(msg));
}

void WorkerAgent::SendHeartbeat() {
  if (!registered_) return;
  capnp::MallocMessageBuilder msg;
  auto hb = msg.initRoot<proto::ClusterMessage>().initHeartbeat();
  hb.setIncarnation(incarnation_);
  hb.setBusySlots(static_cast<uint32_t>(busy_slots_ ? busy_slots_() : 0));
  (void)link_.Send(net::Protocol::kCluster, net::EncodeMessage(msg));
}

void WorkerAgent::ArmHeartbeat() {
  heartbeat_timer_.Arm(heartbeat_interval_, [this] {
    if (!registered_) return;
    SendHeartbeat();
    ArmHeartbeat();
  });
}

void WorkerAgent::OnLinkFrame(const net::Frame& frame) {
  Status s = Handle(frame);
  if (!s.ok()) link_.Close(s);
}

bool WorkerAgent::Send(net::Protocol protocol, std::vector<uint8_t> payload) {
  if (!registered_) return false;
  return link_.Send(protocol, std::move(payload));
}

Status WorkerAgent::Handle(const net::Frame& frame) {
  if (frame.protocol != net::Protocol::kCluster) {
    auto it = parts_.find(frame.protocol);
    if (it == parts_.end()) {
      return InvalidArgument(fmt::format("this worker does not serve the {} protocol",
                                         net::ProtocolName(frame.protocol)));
    }
    return it->second->OnMasterFrame(frame);
  }
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::ClusterMessage>();
    switch (root.which()) {
      case proto::ClusterMessage::REGISTER_REPLY: {
        auto r = root.getRegisterReply();
        if (!r.getAccepted()) {
          Status refused = FailedPrecondition(fmt::format("the master refused computer {}: {}",
                                                          computer_.name, r.getReason().cStr()));
          spdlog::error("{}", refused.message());
          Stop();
          if (on_fatal_) on_fatal_(refused);
          return Status::Ok();
        }
        if (r.getHeartbeatIntervalMs() > 0)
          heartbeat_interval_ = std::chrono::milliseconds(r.getHeartbeatIntervalMs());
        bool first = !registered_;
        registered_ = true;
        if (first) spdlog::info("registered {} with the master", computer_.name);
        heartbeat_timer_.Cancel();
        ArmHeartbeat();
        for (auto& [protocol, part] : parts_) part->OnRegistered();
        return Status::Ok();
      }
      case proto::ClusterMessage::HEARTBEAT_REPLY:
        if (root.getHeartbeatReply().getReregister()) {
          spdlog::warn("the master no longer counts {} as live; registering again", computer_.name);
          registered_ = false;
          heartbeat_timer_.Cancel();
          SendRegister();
        }
        return Status::Ok();
      default:
        return InvalidArgument("unexpected cluster message from the master");
    }
  });
}

void WorkerAgent::OnLinkClose(const Status& why) {
  if (registered_) spdlog::warn("lost the master: {}; reconnecting", why.ToString());
  registered_ = false;
  heartbeat_timer_.Cancel();
}

}  // namespace copse::worker

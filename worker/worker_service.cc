#include "worker/worker_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "common/net/message.h"
#include "proto/cluster.capnp.h"

namespace copse::worker {

WorkerService::WorkerService(asio::io_context& io, const ClusterConfig& config,
                             const ComputerConfig& computer, std::string secret,
                             const WorkerAgent& agent, const Clock& clock)
    : config_(config),
      computer_(computer),
      agent_(agent),
      clock_(clock),
      started_(clock.Now()),
      server_(io, std::move(secret), "worker-control " + computer.name, net::TransportOptions{},
              this) {}

Status WorkerService::Start() {
  COPSE_RETURN_IF_ERROR(server_.Listen(computer_.host, computer_.control_port));
  spdlog::info("worker {} control port listening on {}:{}", computer_.name, computer_.host,
               server_.port());
  return Status::Ok();
}

void WorkerService::OnFrame(net::Connection& conn, net::Frame frame) {
  Status s = frame.protocol == net::Protocol::kCluster
                 ? HandleCluster(conn, frame)
                 : InvalidArgument(fmt::format("the worker control port does not serve the {} "
                                               "protocol",
                                               net::ProtocolName(frame.protocol)));
  if (!s.ok()) conn.Close(s);
}

void WorkerService::OnClose(net::Connection&, const Status&) {}

Status WorkerService::HandleCluster(net::Connection& conn, const net::Frame& frame) {
  return net::CatchDecodeErrors([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::ClusterMessage>();
    if (root.which() != proto::ClusterMessage::STATUS_REQUEST)
      return InvalidArgument("the worker control port only answers status requests");
    capnp::MallocMessageBuilder reply;
    auto st = reply.initRoot<proto::ClusterMessage>().initStatus();
    st.setClusterName(config_.name);
    st.setUptimeMs((clock_.Now() - started_).count() / 1000);
    auto self = st.initComputers(1)[0];
    self.setName(computer_.name);
    self.setRack(computer_.rack);
    self.setSlots(static_cast<uint32_t>(computer_.slots));
    self.setState(agent_.registered() ? "registered" : "unregistered");
    self.setHost(computer_.host);
    self.setLastHeartbeatAgoMs(-1);
    self.setPid(static_cast<uint32_t>(::getpid()));
    conn.Send(net::Protocol::kCluster, net::PayloadKind::kMessage, net::EncodeMessage(reply));
    return Status::Ok();
  });
}

}  // namespace copse::worker

#include "client/master_client.h"

#include <fmt/format.h>

#include <filesystem>

#include "client/netns.h"
#include "common/net/auth.h"
#include "common/net/message.h"
#include "proto/cluster.capnp.h"

namespace copse::client {

int ClusterStatus::LiveCount() const {
  int n = 0;
  for (const ComputerStatus& c : computers) n += c.state == "live";
  return n;
}

Result<std::unique_ptr<MasterClient>> MasterClient::Connect(const ClusterConfig& config,
                                                            std::chrono::milliseconds timeout) {
  COPSE_ASSIGN_OR_RETURN(std::string secret, net::LoadSecret(config.secret_file));
  auto channel = net::BlockingChannel::Connect(config.master.host, config.master.port, secret,
                                               "copse client", timeout);
  if (!channel.ok()) {
    Status s = channel.status();
    if (s.code() == StatusCode::kUnavailable) {
      // A cluster started in network namespaces is started again the same way.
      std::error_code ec;
      bool netns = std::filesystem::exists(NetnsStatePath(config), ec);
      return Unavailable(
          fmt::format("cannot reach the master of cluster '{}': {} (is the cluster "
                      "up? try `copse cluster up --config {}{}`)",
                      config.name, s.message(), config.source.string(), netns ? " --netns" : ""));
    }
    return s;
  }
  return std::unique_ptr<MasterClient>(new MasterClient(std::move(*channel), timeout));
}

Result<ClusterStatus> MasterClient::GetClusterStatus() {
  capnp::MallocMessageBuilder req;
  req.initRoot<proto::ClusterMessage>().initStatusRequest();
  COPSE_RETURN_IF_ERROR(channel_->Send(net::Protocol::kCluster, net::PayloadKind::kMessage,
                                       net::EncodeMessage(req), timeout_));
  COPSE_ASSIGN_OR_RETURN(net::Frame frame, channel_->Receive(timeout_));
  ClusterStatus out;
  copse::Status s = net::CatchDecodeErrors([&]() -> copse::Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::ClusterMessage>();
    if (root.which() != proto::ClusterMessage::STATUS) {
      return Corruption("the master answered a status request with something else");
    }
    auto st = root.getStatus();
    out.cluster = st.getClusterName();
    out.master_pid = st.getMasterPid();
    out.uptime_ms = st.getUptimeMs();
    for (auto c : st.getComputers()) {
      out.computers.push_back({c.getName(), c.getRack(), static_cast<int>(c.getSlots()),
                               c.getState(), c.getHost(), c.getLastHeartbeatAgoMs(), c.getPid(),
                               static_cast<int>(c.getBusySlots())});
    }
    return copse::Status::Ok();
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace copse::client

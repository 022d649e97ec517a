#include "worker/worker_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>

#include "common/net/message.h"
#include "proto/cluster.capnp.h"
#include "proto/job.capnp.h"

namespace copse::worker {

WorkerService::WorkerService(asio::io_context& io, const ClusterConfig& config,
                             const ComputerConfig& computer, std::string secret,
                             const WorkerAgent& agent, const TaskManager& tasks, const Clock& clock)
    : config_(config),
      computer_(computer),
      agent_(agent),
      tasks_(tasks),
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
  Status s;
  if (frame.protocol == net::Protocol::kCluster) {
    s = HandleCluster(conn, frame);
  } else if (frame.protocol == net::Protocol::kJob) {
    s = HandleJob(conn, frame);
  } else {
    s = InvalidArgument(fmt::format("the worker control port does not serve the {} protocol",
                                    net::ProtocolName(frame.protocol)));
  }
  if (!s.ok()) conn.Close(s);
}

void WorkerService::OnClose(net::Connection&, const Status&) {}

Status WorkerService::HandleCluster(net::Connection& conn, const net::Frame& frame) {
  return net::GuardRequest([&]() -> Status {
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

// The log of one run, or its end (TaskLogRequest.maxBytes), within a frame.
Status WorkerService::HandleJob(net::Connection& conn, const net::Frame& frame) {
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::JobMessage>();
    if (root.which() != proto::JobMessage::TASK_LOG) {
      return InvalidArgument("the worker control port only answers task log requests");
    }
    auto r = root.getTaskLog();
    capnp::MallocMessageBuilder reply;
    auto out = reply.initRoot<proto::JobMessage>();
    std::optional<std::filesystem::path> path =
        tasks_.LogPath(r.getJobId(), r.getTaskId(), r.getAttempt());
    if (!path) {
      auto e = out.initError();
      e.setCode(static_cast<uint16_t>(StatusCode::kNotFound));
      e.setMessage(
          fmt::format("{} keeps no log of task {} attempt {} of job {} (removed after "
                      "the retention time, or never run here)",
                      computer_.name, r.getTaskId(), r.getAttempt(), r.getJobId()));
    } else {
      const uint64_t limit = 8u << 20;  // well inside a frame
      uint64_t want = r.getMaxBytes() == 0 ? limit : std::min<uint64_t>(r.getMaxBytes(), limit);
      std::ifstream in(*path, std::ios::binary | std::ios::ate);
      uint64_t size = in ? static_cast<uint64_t>(in.tellg()) : 0;
      uint64_t from = size > want ? size - want : 0;
      std::string data(size - from, '\0');
      in.seekg(static_cast<std::streamoff>(from));
      in.read(data.data(), static_cast<std::streamsize>(data.size()));
      auto lr = out.initTaskLogReply();
      lr.setData(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(data.data()), data.size()));
      lr.setTruncated(from > 0);
    }
    conn.Send(net::Protocol::kJob, net::PayloadKind::kMessage, net::EncodeMessage(reply));
    return Status::Ok();
  });
}

}  // namespace copse::worker

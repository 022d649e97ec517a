#include "client/master_client.h"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "client/netns.h"
#include "common/net/auth.h"
#include "common/net/message.h"
#include "proto/cluster.capnp.h"
#include "proto/job.capnp.h"

namespace copse::client {

int ClusterStatus::LiveCount() const {
  int n = 0;
  for (const ComputerStatus& c : computers) n += c.state == "live";
  return n;
}

namespace {

Result<std::unique_ptr<net::BlockingChannel>> ConnectToMaster(const ClusterConfig& config,
                                                              std::chrono::milliseconds timeout,
                                                              const net::ConnectRetry& retry) {
  COPSE_ASSIGN_OR_RETURN(std::string secret, net::LoadSecret(config.secret_file));
  auto channel = net::BlockingChannel::Connect(config.master.host, config.master.port, secret,
                                               "copse client", timeout, retry);
  if (!channel.ok()) {
    Status s = channel.status();
    // Refused, or accepted and then dropped before the handshake ended (a
    // master killed a moment ago still completes connects from its backlog).
    if (s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDisconnected) {
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
  return channel;
}

}  // namespace

Result<std::unique_ptr<MasterClient>> MasterClient::Connect(const ClusterConfig& config,
                                                            std::chrono::milliseconds timeout,
                                                            net::ConnectRetry retry) {
  COPSE_ASSIGN_OR_RETURN(auto channel, net::RedialingChannel::Connect(
                                           [&config, timeout](const net::ConnectRetry& r) {
                                             return ConnectToMaster(config, timeout, r);
                                           },
                                           std::move(retry), timeout));
  return std::unique_ptr<MasterClient>(new MasterClient(std::move(channel)));
}

// Every request to the master is safe to send twice: reads, and a
// submission, which carries a request id the master recognises.
Result<net::Frame> MasterClient::Call(net::Protocol protocol, const std::vector<uint8_t>& request) {
  return channel_->Call(protocol, request, /*resend=*/true);
}

Result<ClusterStatus> MasterClient::GetClusterStatus() {
  capnp::MallocMessageBuilder req;
  req.initRoot<proto::ClusterMessage>().initStatusRequest();
  COPSE_ASSIGN_OR_RETURN(net::Frame frame, Call(net::Protocol::kCluster, net::EncodeMessage(req)));
  ClusterStatus out;
  copse::Status s = net::GuardRequest([&]() -> copse::Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::ClusterMessage>();
    if (root.which() != proto::ClusterMessage::STATUS) {
      return Corruption("the master answered a status request with something else");
    }
    auto st = root.getStatus();
    out.cluster = st.getClusterName();
    out.master_pid = st.getMasterPid();
    out.uptime_ms = st.getUptimeMs();
    out.under_replicated_blocks = static_cast<int>(st.getUnderReplicatedBlocks());
    for (auto c : st.getComputers()) {
      out.computers.push_back({c.getName(), c.getRack(), static_cast<int>(c.getSlots()),
                               c.getState(), c.getHost(), c.getLastHeartbeatAgoMs(), c.getPid(),
                               static_cast<int>(c.getBusySlots()), c.getDraining(),
                               static_cast<int>(c.getSoleBlocks()),
                               static_cast<int>(c.getShortBlocks())});
    }
    return copse::Status::Ok();
  });
  if (!s.ok()) return s;
  return out;
}

Result<std::string> MasterClient::Drain(const std::string& computer, bool drain, bool move_tasks) {
  capnp::MallocMessageBuilder req;
  auto r = req.initRoot<proto::ClusterMessage>().initDrainRequest();
  r.setComputer(computer);
  r.setDrain(drain);
  r.setMoveTasks(move_tasks);
  COPSE_ASSIGN_OR_RETURN(net::Frame frame, Call(net::Protocol::kCluster, net::EncodeMessage(req)));
  std::string warning;
  copse::Status s = net::GuardRequest([&]() -> copse::Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<proto::ClusterMessage>();
    if (root.which() != proto::ClusterMessage::DRAIN_REPLY) {
      return Corruption("the master answered a drain request with something else");
    }
    auto reply = root.getDrainReply();
    uint16_t code = reply.getCode();
    if (code != 0) {
      StatusCode c = code <= static_cast<uint16_t>(StatusCode::kInternal)
                         ? static_cast<StatusCode>(code)
                         : StatusCode::kInternal;
      return copse::Status(c, reply.getMessage());
    }
    warning = reply.getMessage();
    return copse::Status::Ok();
  });
  if (!s.ok()) return s;
  return warning;
}

Result<std::vector<uint8_t>> MasterClient::JobCall(std::vector<uint8_t> request) {
  COPSE_ASSIGN_OR_RETURN(net::Frame frame, Call(net::Protocol::kJob, request));
  if (frame.protocol != net::Protocol::kJob) {
    return Corruption("the master answered a job request with something else");
  }
  return std::move(frame.payload);
}

namespace {

// Decodes a job reply and runs `fn` on it; a JobError becomes its status.
template <typename Fn>
Status OnJobReply(const std::vector<uint8_t>& payload, Fn&& fn) {
  net::Frame f{net::Protocol::kJob, net::PayloadKind::kMessage, payload};
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(f));
    auto root = reader->getRoot<proto::JobMessage>();
    if (root.which() == proto::JobMessage::ERROR) {
      auto e = root.getError();
      uint16_t code = e.getCode();
      StatusCode c = code > 0 && code <= static_cast<uint16_t>(StatusCode::kInternal)
                         ? static_cast<StatusCode>(code)
                         : StatusCode::kInternal;
      return Status(c, e.getMessage());
    }
    return fn(root);
  });
}

std::vector<uint8_t> Request(const std::function<void(proto::JobMessage::Builder)>& fill) {
  capnp::MallocMessageBuilder msg;
  fill(msg.initRoot<proto::JobMessage>());
  return net::EncodeMessage(msg);
}

// A reply that is a JSON document.
Result<std::string> Document(const std::vector<uint8_t>& payload) {
  std::string out;
  COPSE_RETURN_IF_ERROR(OnJobReply(payload, [&](proto::JobMessage::Reader r) -> Status {
    if (r.which() != proto::JobMessage::DOCUMENT) return Corruption("unexpected reply");
    out = r.getDocument().getJson();
    return Status::Ok();
  }));
  return out;
}

}  // namespace

Result<uint64_t> MasterClient::SubmitJob(const std::string& spec) {
  // Sent again after a dropped connection, the same id makes it one job.
  std::string request_id = net::RandomHex(16);
  COPSE_ASSIGN_OR_RETURN(auto reply, JobCall(Request([&](auto m) {
                           auto sub = m.initSubmit();
                           sub.setSpec(spec);
                           sub.setRequestId(request_id);
                         })));
  uint64_t id = 0;
  COPSE_RETURN_IF_ERROR(OnJobReply(reply, [&](proto::JobMessage::Reader r) -> Status {
    if (r.which() != proto::JobMessage::SUBMIT_REPLY) return Corruption("unexpected reply");
    id = r.getSubmitReply().getJobId();
    return Status::Ok();
  }));
  return id;
}

Result<std::string> MasterClient::JobStatus(uint64_t job) {
  COPSE_ASSIGN_OR_RETURN(auto reply,
                         JobCall(Request([&](auto m) { m.initStatus().setJobId(job); })));
  return Document(reply);
}

Result<std::string> MasterClient::WaitJob(uint64_t job, std::chrono::milliseconds bound,
                                          std::chrono::milliseconds poll) {
  for (auto end = std::chrono::steady_clock::now() + bound;
       std::chrono::steady_clock::now() < end;) {
    COPSE_ASSIGN_OR_RETURN(std::string text, JobStatus(job));
    nlohmann::json st = nlohmann::json::parse(text, nullptr, false);
    std::string state = st.is_object() ? st.value("state", "") : "";
    if (state == "succeeded") return text;
    if (state == "failed" || state == "killed") {
      return Internal(fmt::format("job {} {}: {}", job, state, st.value("failure", "")));
    }
    std::this_thread::sleep_for(poll);
  }
  return DeadlineExceeded(
      fmt::format("job {} did not end in {} s", job,
                  std::chrono::duration_cast<std::chrono::seconds>(bound).count()));
}

Result<std::string> MasterClient::ListJobs() {
  COPSE_ASSIGN_OR_RETURN(auto reply, JobCall(Request([&](auto m) { m.initList(); })));
  return Document(reply);
}

Result<MasterClient::KillOutcome> MasterClient::KillJob(uint64_t job) {
  COPSE_ASSIGN_OR_RETURN(auto reply, JobCall(Request([&](auto m) { m.initKill().setJobId(job); })));
  KillOutcome out;
  COPSE_RETURN_IF_ERROR(OnJobReply(reply, [&](proto::JobMessage::Reader r) -> Status {
    if (r.which() != proto::JobMessage::KILL_REPLY) return Corruption("unexpected reply");
    out.state = r.getKillReply().getState();
    out.already_over = r.getKillReply().getAlreadyOver();
    return Status::Ok();
  }));
  return out;
}

Result<std::string> MasterClient::LogIndex(uint64_t job) {
  COPSE_ASSIGN_OR_RETURN(auto reply,
                         JobCall(Request([&](auto m) { m.initLogIndex().setJobId(job); })));
  return Document(reply);
}

Result<std::string> MasterClient::EngineStats(bool reset) {
  COPSE_ASSIGN_OR_RETURN(auto reply,
                         JobCall(Request([&](auto m) { m.initEngineStats().setReset(reset); })));
  return Document(reply);
}

Result<std::string> MasterClient::AppPut(const AppPutRequest& req) {
  COPSE_ASSIGN_OR_RETURN(auto reply, JobCall(Request([&](auto m) {
                           auto p = m.initAppPut();
                           p.setName(req.name);
                           p.setVersion(req.version);
                           p.setSize(req.size);
                           p.setEntry(req.entry);
                           p.setShadow(req.shadow);
                           p.setSha256(req.sha256);
                           p.setCommit(req.commit);
                           p.setExecutable(req.executable);
                         })));
  return Document(reply);
}

Result<std::string> MasterClient::AppList(const std::string& name) {
  COPSE_ASSIGN_OR_RETURN(auto reply,
                         JobCall(Request([&](auto m) { m.initAppList().setName(name); })));
  return Document(reply);
}

Result<std::string> MasterClient::AppRemove(const std::string& name, const std::string& version) {
  COPSE_ASSIGN_OR_RETURN(auto reply, JobCall(Request([&](auto m) {
                           auto r = m.initAppRemove();
                           r.setName(name);
                           r.setVersion(version);
                         })));
  return Document(reply);
}

}  // namespace copse::client

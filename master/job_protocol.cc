#include "master/job_protocol.h"

#include <nlohmann/json.hpp>

#include "common/net/message.h"

namespace copse::master {

using proto::JobMessage;

Status JobProtocol::OnFrame(net::Connection& conn, const net::Frame& frame) {
  if (frame.kind != net::PayloadKind::kMessage)
    return InvalidArgument("raw bytes sent as a job request");
  return net::CatchDecodeErrors([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<JobMessage>();
    capnp::MallocMessageBuilder reply;
    Builder out = reply.initRoot<JobMessage>();
    Status s;
    switch (root.which()) {
      case JobMessage::SUBMIT:
        s = OnSubmit(root.getSubmit(), out);
        break;
      case JobMessage::STATUS:
        s = OnStatus(root.getStatus(), out);
        break;
      case JobMessage::LIST:
        s = OnList(out);
        break;
      case JobMessage::KILL:
        s = OnKill(root.getKill(), out);
        break;
      case JobMessage::LOG_INDEX:
        s = OnLogIndex(root.getLogIndex(), out);
        break;
      case JobMessage::ENGINE_STATS:
        s = OnEngineStats(root.getEngineStats(), out);
        break;
      default:
        return InvalidArgument("unexpected job message for the master");
    }
    if (!s.ok()) {
      capnp::MallocMessageBuilder error;
      auto e = error.initRoot<JobMessage>().initError();
      e.setCode(static_cast<uint16_t>(s.code()));
      e.setMessage(s.message());
      conn.Send(net::Protocol::kJob, net::PayloadKind::kMessage, net::EncodeMessage(error));
      return Status::Ok();
    }
    conn.Send(net::Protocol::kJob, net::PayloadKind::kMessage, net::EncodeMessage(reply));
    return Status::Ok();
  });
}

Status JobProtocol::OnSubmit(proto::SubmitJob::Reader r, Builder out) {
  auto spec = r.getSpec();
  COPSE_ASSIGN_OR_RETURN(uint64_t id, jobs_.Submit(std::string_view(spec.cStr(), spec.size())));
  out.initSubmitReply().setJobId(id);
  return Status::Ok();
}

Status JobProtocol::OnStatus(proto::JobStatusRequest::Reader r, Builder out) {
  COPSE_ASSIGN_OR_RETURN(std::string doc, jobs_.StatusJson(r.getJobId()));
  out.initDocument().setJson(doc);
  return Status::Ok();
}

Status JobProtocol::OnList(Builder out) {
  out.initDocument().setJson(jobs_.ListJson());
  return Status::Ok();
}

Status JobProtocol::OnKill(proto::KillJob::Reader r, Builder out) {
  COPSE_ASSIGN_OR_RETURN(KillResult k, jobs_.Kill(r.getJobId()));
  auto kr = out.initKillReply();
  kr.setState(JobStateName(k.state));
  kr.setAlreadyOver(k.already_over);
  return Status::Ok();
}

Status JobProtocol::OnLogIndex(proto::LogIndexRequest::Reader r, Builder out) {
  COPSE_ASSIGN_OR_RETURN(std::string doc, jobs_.LogIndexJson(r.getJobId()));
  out.initDocument().setJson(doc);
  return Status::Ok();
}

Status JobProtocol::OnEngineStats(proto::EngineStatsRequest::Reader r, Builder out) {
  const std::deque<int64_t>& lat = scheduling_.decision_latencies();
  nlohmann::json doc = {{"decision_latency_us", std::vector<int64_t>(lat.begin(), lat.end())}};
  out.initDocument().setJson(doc.dump());
  if (r.getReset()) scheduling_.ResetStats();
  return Status::Ok();
}

}  // namespace copse::master

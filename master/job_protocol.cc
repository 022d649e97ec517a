#include "master/job_protocol.h"

#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/net/message.h"

namespace copse::master {

using proto::JobMessage;

// A client's request (common/net/guard.h): a request that fails, for
// whatever reason, is answered with a JobError; the job service changes
// nothing before its store took the change.
Status JobProtocol::OnFrame(net::Connection& conn, const net::Frame& frame) {
  if (frame.kind != net::PayloadKind::kMessage)
    return InvalidArgument("raw bytes sent as a job request");
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(frame));
    auto root = reader->getRoot<JobMessage>();
    capnp::MallocMessageBuilder reply;
    Builder out = reply.initRoot<JobMessage>();
    Status s = net::GuardRequest([&]() -> Status {
      switch (root.which()) {
        case JobMessage::SUBMIT:
          return OnSubmit(root.getSubmit(), out);
        case JobMessage::STATUS:
          return OnStatus(root.getStatus(), out);
        case JobMessage::LIST:
          return OnList(out);
        case JobMessage::KILL:
          return OnKill(root.getKill(), out);
        case JobMessage::LOG_INDEX:
          return OnLogIndex(root.getLogIndex(), out);
        case JobMessage::ENGINE_STATS:
          return OnEngineStats(root.getEngineStats(), out);
        default:
          return InvalidArgument("unexpected job message for the master");
      }
    });
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
  auto request_id = r.getRequestId();
  COPSE_ASSIGN_OR_RETURN(uint64_t id,
                         jobs_.Submit(std::string_view(spec.cStr(), spec.size()),
                                      std::string_view(request_id.cStr(), request_id.size())));
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
  out.initDocument().setJson(DumpJson(doc));
  if (r.getReset()) scheduling_.ResetStats();
  return Status::Ok();
}

}  // namespace copse::master

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
        case JobMessage::APP_PUT:
          return OnAppPut(root.getAppPut(), out);
        case JobMessage::APP_LIST:
          return OnAppList(root.getAppList(), out);
        case JobMessage::APP_REMOVE:
          return OnAppRemove(root.getAppRemove(), out);
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
  const std::deque<int64_t>& lat = record_.decision_latencies();
  nlohmann::json doc = {{"decision_latency_us", std::vector<int64_t>(lat.begin(), lat.end())}};
  out.initDocument().setJson(DumpJson(doc));
  if (r.getReset()) record_.ResetStats();
  return Status::Ok();
}

namespace {

nlohmann::json AppJson(const AppRecord& r) {
  return {{"name", r.name},          {"version", r.version}, {"sha256", r.sha256},
          {"size", r.size},          {"entry", r.entry},     {"executable", r.executable},
          {"shadow", r.shadow},      {"path", r.path()},     {"put_ms", r.put_ms},
          {"put", IsoTime(r.put_ms)}};
}

}  // namespace

Status JobProtocol::OnAppPut(proto::AppPutRequest::Reader r, Builder out) {
  AppPut put;
  put.name = r.getName();
  put.version = r.getVersion();
  put.size = r.getSize();
  put.entry = r.getEntry();
  put.shadow = r.getShadow();
  put.sha256 = r.getSha256();
  put.executable = r.getExecutable();
  COPSE_ASSIGN_OR_RETURN(AppRecord rec, r.getCommit() ? apps_.Commit(put) : apps_.Prepare(put));
  out.initDocument().setJson(DumpJson(AppJson(rec)));
  return Status::Ok();
}

Status JobProtocol::OnAppList(proto::AppListRequest::Reader r, Builder out) {
  nlohmann::json list = nlohmann::json::array();
  for (const AppRecord& rec : apps_.List(r.getName().cStr())) list.push_back(AppJson(rec));
  out.initDocument().setJson(DumpJson(nlohmann::json{{"programs", list}}));
  return Status::Ok();
}

Status JobProtocol::OnAppRemove(proto::AppRemoveRequest::Reader r, Builder out) {
  COPSE_ASSIGN_OR_RETURN(std::vector<AppRecord> gone,
                         apps_.Remove(r.getName(), r.getVersion(),
                                      [this](const std::string& name, const std::string& version) {
                                        return jobs_.PinnedBy(name, version);
                                      }));
  nlohmann::json list = nlohmann::json::array();
  for (const AppRecord& rec : gone) list.push_back(AppJson(rec));
  out.initDocument().setJson(DumpJson(nlohmann::json{{"removed", list}}));
  return Status::Ok();
}

}  // namespace copse::master

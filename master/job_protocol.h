// JobProtocol: the job protocol (proto/job.capnp) on the master, adapted
// onto the JobService, the AppService (the program store) and, for engine
// statistics, the SchedulingRecord: `copse job submit|status|list|kill|logs`,
// `copse app put|ls|show|rm` and `copse bench engine`. One handler per
// request; a failed request gets a JobError with the status.
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include "master/app_service.h"
#include "master/job_service.h"
#include "master/protocol_service.h"
#include "master/scheduling_record.h"
#include "proto/job.capnp.h"

namespace copse::master {

class JobProtocol final : public ProtocolService {
 public:
  // REQUIRES: every argument outlives this.
  JobProtocol(JobService& jobs, AppService& apps, SchedulingRecord& record)
      : jobs_(jobs), apps_(apps), record_(record) {}

  Status OnFrame(net::Connection& conn, const net::Frame& frame) override;

 private:
  using Builder = proto::JobMessage::Builder;
  Status OnSubmit(proto::SubmitJob::Reader r, Builder out);
  Status OnStatus(proto::JobStatusRequest::Reader r, Builder out);
  Status OnList(Builder out);
  Status OnKill(proto::KillJob::Reader r, Builder out);
  Status OnLogIndex(proto::LogIndexRequest::Reader r, Builder out);
  Status OnEngineStats(proto::EngineStatsRequest::Reader r, Builder out);
  Status OnAppPut(proto::AppPutRequest::Reader r, Builder out);
  Status OnAppList(proto::AppListRequest::Reader r, Builder out);
  Status OnAppRemove(proto::AppRemoveRequest::Reader r, Builder out);

  JobService& jobs_;
  AppService& apps_;
  SchedulingRecord& record_;
};

}  // namespace copse::master

#include "master/master.h"

#include <spdlog/spdlog.h>

#include <asio/post.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <utility>

#include "common/net/auth.h"
#include "common/process.h"
#include "master/api.h"
#include "master/app_service.h"
#include "master/cluster_manager.h"
#include "master/cluster_service.h"
#include "master/dfs_service.h"
#include "master/job_files.h"
#include "master/job_protocol.h"
#include "master/job_service.h"
#include "master/master_service.h"
#include "master/scheduling_service.h"
#include "proto/scheduling.capnp.h"
#include "scheduler/scheduler.h"

namespace copse::master {

Master::Master(asio::io_context& io, const ClusterConfig& config, std::string secret,
               const Clock& clock, const Clock& wall, Options options)
    : io_(io),
      config_(config),
      secret_(std::move(secret)),
      clock_(clock),
      wall_(wall),
      options_(std::move(options)),
      sweep_(io) {}

Master::~Master() = default;

Result<std::unique_ptr<Master>> Master::Open(asio::io_context& io, const ClusterConfig& config,
                                             std::string secret, const Clock& clock,
                                             const Clock& wall, Options options) {
  std::unique_ptr<Master> m(
      new Master(io, config, std::move(secret), clock, wall, std::move(options)));
  COPSE_ASSIGN_OR_RETURN(m->meta_, dfs::OpenRocksMetaStore(config.master.data_dir / "namespace"));
  COPSE_RETURN_IF_ERROR(m->OpenCluster());
  COPSE_ASSIGN_OR_RETURN(bool restarted, m->OpenJobs());
  COPSE_RETURN_IF_ERROR(m->OpenScheduling(restarted));
  return m;
}

Status Master::OpenCluster() {
  cluster_ = std::make_unique<ClusterManager>(config_, config_.worker_timeout,
                                              proto::SCHEDULING_PROTOCOL_VERSION);
  COPSE_RETURN_IF_ERROR(cluster_->LoadDrains(*meta_));
  dfs_ = std::make_unique<DfsService>(io_, config_, clock_, *meta_, *cluster_);
  COPSE_RETURN_IF_ERROR(dfs_->Load());
  DfsService& dfs = *dfs_;
  cluster_service_ = std::make_unique<ClusterService>(
      io_, config_, *cluster_, clock_,
      DfsStatus{[&dfs](const std::string& computer) { return dfs.names().Drain(computer); },
                [&dfs] { return dfs.names().UnderReplicatedBlocks(); }});
  cluster_->AddListener(dfs_.get());
  cluster_service_->AddWorkerListener(dfs_.get());
  return Status::Ok();
}

Result<bool> Master::OpenJobs() {
  const std::filesystem::path apps_dir =
      config_.apps_dir.empty() ? DefaultAppsDir() : config_.apps_dir;
  app_files_ = std::make_unique<NameServiceAppFiles>(dfs_->names());
  apps_ = std::make_unique<AppService>(
      *meta_, *app_files_, wall_, AppService::Options{apps_dir, config_.apps.max_program_bytes});
  COPSE_RETURN_IF_ERROR(apps_->Load());
  files_ = std::make_unique<NameServiceJobFiles>(dfs_->names());
  JobService::Options jo;
  jo.apps_dir = apps_dir;
  jo.apps = apps_.get();
  jo.defer = [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); };
  jobs_ = std::make_unique<JobService>(config_, *meta_, *files_, wall_, jo);
  return jobs_->Load();
}

Status Master::OpenScheduling(bool restarted) {
  // The steady clock times each Quincy round's phases for the HTTP API.
  COPSE_ASSIGN_OR_RETURN(auto scheduler,
                         scheduler::Scheduler::FromConfig(config_, /*seed=*/1, &clock_));
  SchedulingService::Options so;
  so.recovery = RecoveryWindow(config_);
  so.restarted = restarted;
  SchedulingService::Peers peers{connections_, *jobs_, *files_, &record_, [this] {
                                   jobs_->AfterRecovery();
                                   scheduling_protocol_->Recovered();
                                 }};
  scheduling_ = std::make_unique<SchedulingService>(io_, config_, std::move(scheduler), *meta_,
                                                    clock_, std::move(peers), so);
  scheduling_protocol_ =
      std::make_unique<SchedulingProtocol>(*cluster_, *scheduling_, *jobs_, connections_);
  job_protocol_ = std::make_unique<JobProtocol>(*jobs_, *apps_, record_);
  cluster_->AddListener(scheduling_.get());
  // The connection first: what the scheduling service does when a worker
  // registers (adopting, killing, acknowledging) is sent on it.
  cluster_service_->AddWorkerListener(&connections_);
  cluster_service_->AddWorkerListener(scheduling_.get());
  return Status::Ok();
}

Status Master::Start() {
  COPSE_RETURN_IF_ERROR(scheduling_->Start());
  COPSE_RETURN_IF_ERROR(jobs_->Resume(*scheduling_));
  ArmSweep();
  server_ = std::make_unique<MasterService>(io_, secret_);
  server_->Route(net::Protocol::kCluster, cluster_service_.get());
  server_->Route(net::Protocol::kDfs, dfs_.get());
  server_->Route(net::Protocol::kScheduling, scheduling_protocol_.get());
  server_->Route(net::Protocol::kJob, job_protocol_.get());
  uint16_t listen_port = options_.port != 0 ? options_.port : config_.master.port;
  COPSE_RETURN_IF_ERROR(server_->Listen(config_.master.host, listen_port));
  spdlog::info("master of cluster '{}' listening on {}:{} ({} computers in {} racks)", config_.name,
               config_.master.host, server_->port(), config_.computers.size(),
               config_.racks.size());
  cluster_service_->Start();
  dfs_->Start();
  if (config_.http.enabled) return StartApi();
  return Status::Ok();
}

void Master::ArmSweep() {
  sweep_.expires_after(std::chrono::minutes(1));
  sweep_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    jobs_->Sweep();
    ArmSweep();
  });
}

// The read-only HTTP API and dashboard (docs/design.md §13).
Status Master::StartApi() {
  Api::Options ao;
  ao.dashboard_dir = InstalledDir("dashboard", "share/copse/dashboard");
  ao.metrics = &metrics_;
  if (!config_.http.token_file.empty()) {
    auto token = net::LoadSecret(config_.http.token_file);
    if (!token.ok()) return token.status().WithContext("[http] token_file");
    ao.token = *token;
  }
  api_ = std::make_unique<Api>(io_, config_, clock_, wall_, *cluster_, *dfs_, *jobs_, *scheduling_,
                               record_, ao);
  COPSE_RETURN_IF_ERROR(api_->Start());
  spdlog::info("dashboard and API on http://{}:{}/", config_.http.host, api_->port());
  return Status::Ok();
}

void Master::Stop() {
  if (api_) api_->Stop();
  sweep_.cancel();
  if (scheduling_) scheduling_->Stop();
  if (cluster_service_) cluster_service_->Stop();
  if (dfs_) dfs_->Stop();
  if (server_) server_->Stop();
}

}  // namespace copse::master

// The client library (copse/client.h), over the `copse` tool's own master
// client and the DFS client.
#include "copse/client.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "client/master_client.h"
#include "client/terminal.h"
#include "common/config.h"
#include "common/json.h"
#include "common/net/auth.h"
#include "dfs/client.h"

namespace copse {
namespace {

using Json = nlohmann::json;

Result<JobInfo> Parse(uint64_t id, const std::string& doc) {
  COPSE_ASSIGN_OR_RETURN(Json j, ParseJson(doc, "a job status"));
  JobInfo info;
  info.id = id;
  info.json = doc;
  info.name = j.value("name", "");
  info.state = j.value("state", "");
  info.failure = j.value("failure", "");
  if (auto v = j.find("vertices"); v != j.end() && v->is_object()) {
    info.vertices = v->value("total", 0);
    info.done = v->value("done", 0);
  }
  return info;
}

}  // namespace

struct Client::Impl {
  ClusterConfig config;
  Options options;
  std::unique_ptr<client::MasterClient> master;
  std::unique_ptr<dfs::DfsClient> dfs;

  Result<dfs::DfsClient*> Dfs() {
    if (!dfs) {
      COPSE_ASSIGN_OR_RETURN(std::string secret, net::LoadSecret(config.secret_file));
      dfs::DfsClientOptions o;
      o.computer = options.computer;
      o.connect_retry = client::MasterWait(config, options.master_wait);
      COPSE_ASSIGN_OR_RETURN(dfs, dfs::DfsClient::Connect(config, secret, o));
    }
    return dfs.get();
  }
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::Connect(const Options& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  std::optional<std::string> flag;
  if (!options.config.empty()) flag = options.config;
  COPSE_ASSIGN_OR_RETURN(impl->config, LoadClusterConfig(ResolveConfigPath(flag)));
  COPSE_ASSIGN_OR_RETURN(
      impl->master,
      client::MasterClient::Connect(impl->config, std::chrono::seconds(30),
                                    client::MasterWait(impl->config, options.master_wait)));
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Result<uint64_t> Client::Submit(const JobSpec& spec) {
  COPSE_ASSIGN_OR_RETURN(std::string text, spec.ToJson());
  return Submit(text);
}

Result<uint64_t> Client::Submit(std::string_view spec_json) {
  return impl_->master->SubmitJob(std::string(spec_json));
}

Result<JobInfo> Client::GetJob(uint64_t job) {
  COPSE_ASSIGN_OR_RETURN(std::string doc, impl_->master->JobStatus(job));
  return Parse(job, doc);
}

Result<JobInfo> Client::Wait(uint64_t job, const std::function<void(const JobInfo&)>& progress,
                             std::chrono::seconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  int last_done = -1;
  std::string last_state;
  auto poll = std::chrono::milliseconds(20);
  while (true) {
    COPSE_ASSIGN_OR_RETURN(JobInfo info, GetJob(job));
    if (progress && (info.done != last_done || info.state != last_state)) progress(info);
    last_done = info.done;
    last_state = info.state;
    if (info.ended()) return info;
    if (std::chrono::steady_clock::now() >= deadline) {
      return DeadlineExceeded(fmt::format("job {} has not ended after {} s (it is {})", job,
                                          bound.count(), info.state));
    }
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, std::chrono::milliseconds(500));
  }
}

Status Client::Kill(uint64_t job) { return impl_->master->KillJob(job).status(); }

Status Client::ReadFile(const std::string& path,
                        const std::function<Status(std::string_view bytes)>& sink) {
  COPSE_ASSIGN_OR_RETURN(dfs::DfsClient * dfs, impl_->Dfs());
  COPSE_ASSIGN_OR_RETURN(dfs::FileStatus st, dfs->Stat(path));
  for (int p = 0; p < static_cast<int>(st.partitions.size()); ++p) {
    COPSE_RETURN_IF_ERROR(dfs->ReadPartition(st, p, [&](std::span<const uint8_t> b) {
      return sink(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
    }));
  }
  return Status::Ok();
}

Result<std::string> Client::ReadFile(const std::string& path) {
  std::string out;
  COPSE_RETURN_IF_ERROR(ReadFile(path, [&](std::string_view b) {
    out.append(b);
    return Status::Ok();
  }));
  return out;
}

Status Client::WriteFile(const std::string& path, std::string_view data, int partitions) {
  if (partitions < 1) return InvalidArgument("WriteFile: partitions must be at least 1");
  COPSE_ASSIGN_OR_RETURN(dfs::DfsClient * dfs, impl_->Dfs());
  dfs::CreateOptions co;
  co.partitions = partitions;
  co.replication = impl_->config.replication;
  COPSE_RETURN_IF_ERROR(dfs->Create(path, co));
  // Cut at line ends near equal shares: no line straddles two partitions.
  size_t start = 0;
  for (int p = 0; p < partitions; ++p) {
    size_t end = data.size();
    if (p + 1 < partitions) {
      size_t target = std::max(start, data.size() * static_cast<size_t>(p + 1) /
                                          static_cast<size_t>(partitions));
      size_t nl = target == 0 ? std::string_view::npos : data.find('\n', target - 1);
      end = target == 0 ? 0 : (nl == std::string_view::npos ? data.size() : nl + 1);
    }
    COPSE_RETURN_IF_ERROR(dfs->BeginPartition(p));
    std::string_view part = data.substr(start, end - start);
    COPSE_RETURN_IF_ERROR(dfs->Append(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(part.data()), part.size())));
    COPSE_RETURN_IF_ERROR(dfs->EndPartition().status());
    start = end;
  }
  return Status::Ok();
}

}  // namespace copse

#include "master/job_files.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "dfs/paths.h"

namespace copse::master {

Result<uint64_t> NameServiceAppFiles::FileSize(const std::string& path) {
  COPSE_ASSIGN_OR_RETURN(dfs::FileStatus st, names_.Stat(path));
  return st.size;
}

Status NameServiceAppFiles::Delete(const std::string& path) {
  Status s = names_.Delete(path);
  return s.code() == StatusCode::kNotFound ? Status::Ok() : s;
}

Result<std::map<std::string, rootjob::FileFacts>> NameServiceJobFiles::InputFacts(
    const std::vector<std::string>& paths) {
  std::map<std::string, rootjob::FileFacts> out;
  for (const std::string& p : paths) {
    Result<dfs::FileStatus> st = names_.Stat(p);
    if (!st.ok()) {
      if (st.status().code() == StatusCode::kNotFound) {
        return NotFound(fmt::format("job input {} does not exist", p));
      }
      return st.status().WithContext("job input " + p);
    }
    if (!st->scratch_job.empty()) {
      return InvalidArgument(fmt::format("job input {} is a job's scratch data", p));
    }
    out[p] =
        rootjob::FileFacts{static_cast<int>(st->partitions.size()), static_cast<int64_t>(st->size)};
  }
  return out;
}

Status NameServiceJobFiles::OutputsFree(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    COPSE_RETURN_IF_ERROR(dfs::ValidatePath(p).WithContext("job output " + p));
    Result<dfs::FileStatus> st = names_.Stat(p);
    if (st.ok()) return AlreadyExists(fmt::format("job output {} exists already", p));
    if (st.status().code() != StatusCode::kNotFound) return st.status().WithContext(p);
  }
  return Status::Ok();
}

Status NameServiceJobFiles::PublishOutputs(uint64_t job) {
  return names_.PublishJobOutputs(std::to_string(job)).status();
}

void NameServiceJobFiles::DropOutputs(uint64_t job) {
  Result<int> n = names_.DropJobOutputs(std::to_string(job));
  if (!n.ok()) spdlog::error("job {}: dropping its outputs: {}", job, n.status().ToString());
}

void NameServiceJobFiles::DeleteScratch(uint64_t job) {
  Result<int> n = names_.DeleteJob(std::to_string(job));
  if (!n.ok() && n.status().code() != StatusCode::kNotFound) {
    spdlog::error("job {}: deleting its scratch data: {}", job, n.status().ToString());
  }
}

std::set<uint64_t> NameServiceJobFiles::JobsWithFiles() {
  std::set<uint64_t> out;
  auto add = [&](const std::vector<std::string>& names) {
    for (const std::string& n : names) {
      char* end = nullptr;
      uint64_t id = std::strtoull(n.c_str(), &end, 10);
      if (end != n.c_str() && *end == '\0') out.insert(id);
    }
  };
  add(names_.PendingOutputJobs());
  add(names_.ScratchJobs());
  return out;
}

void NameServiceJobFiles::AbandonRun(uint64_t task, uint32_t attempt) {
  Result<dfs::DroppedWrites> r = names_.AbandonRun(task, attempt);
  if (!r.ok())
    spdlog::error("abandoning task {} attempt {}: {}", task, attempt, r.status().ToString());
}

}  // namespace copse::master

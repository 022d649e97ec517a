// NameServiceJobFiles: the name service's part in the life of jobs and task
// runs (JobFiles for the job service, TaskFiles for the scheduling service),
// over the master's own NameService: input facts, outputs taken, publishing
// or dropping a job's outputs, deleting its scratch data, abandoning a run's
// unfinished files. Scratch areas and outputs are named by the job id in
// decimal. NameServiceAppFiles: the program store's files (AppFiles).
// Thread-safety: the master's io_context thread, like the name service.
#pragma once

#include "dfs/name_service.h"
#include "master/app_service.h"
#include "master/job_service.h"
#include "master/scheduling_service.h"

namespace copse::master {

// The program store's files in the name service.
class NameServiceAppFiles final : public AppFiles {
 public:
  // REQUIRES: names outlives this.
  explicit NameServiceAppFiles(dfs::NameService& names) : names_(names) {}
  Result<uint64_t> FileSize(const std::string& path) override;
  Status Delete(const std::string& path) override;

 private:
  dfs::NameService& names_;
};

class NameServiceJobFiles final : public JobFiles, public TaskFiles {
 public:
  // REQUIRES: names outlives this.
  explicit NameServiceJobFiles(dfs::NameService& names) : names_(names) {}

  Result<std::map<std::string, rootjob::FileFacts>> InputFacts(
      const std::vector<std::string>& paths) override;
  Status OutputsFree(const std::vector<std::string>& paths) override;
  Status PublishOutputs(uint64_t job) override;
  void DropOutputs(uint64_t job) override;
  void DeleteScratch(uint64_t job) override;
  std::set<uint64_t> JobsWithFiles() override;
  void AbandonRun(uint64_t task, uint32_t attempt) override;

 private:
  dfs::NameService& names_;
};

}  // namespace copse::master

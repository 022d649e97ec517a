// The Namespace's operations for the execution engine (dfs/namespace.h): a
// job's output files, its scratch files, and what a task run left behind.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "dfs/namespace.h"
#include "dfs/paths.h"

namespace copse::dfs {

Result<FileView> Namespace::OpenOutput(const std::string& path) const {
  COPSE_RETURN_IF_ERROR(ValidatePath(path));
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return NotFound(fmt::format("no job output {} is being written", path));
  const File& f = files_.at(it->second);
  if (f.output_job.empty()) {
    return NotFound(fmt::format(
        "{} is not a job output being written ({})", path,
        f.visible ? "it is a visible file: published, or not a job output" : "a plain write"));
  }
  return View(f);
}

Result<int> Namespace::PublishJobOutputs(const std::string& job) {
  COPSE_RETURN_IF_ERROR(ValidateJobName(job));
  // by_path_ order: the first missing partition named is the same every time.
  std::vector<File> outputs;
  for (const auto& [path, id] : by_path_) {
    const File& f = files_.at(id);
    if (f.output_job != job) continue;
    for (size_t i = 0; i < f.partitions.size(); ++i) {
      if (!f.partitions[i].committed) {
        return FailedPrecondition(
            fmt::format("cannot publish the outputs of job {}: partition {} of {} is not committed",
                        job, i, f.path));
      }
    }
    outputs.push_back(f);
  }
  // Every partition is committed, so no block of these files is pending: a
  // partition's commit dropped the other runs' blocks of it.
  Change c;
  for (File& f : outputs) {
    f.visible = true;
    f.output_job.clear();  // a regular file from now on
    PutFile(&c, f);
  }
  COPSE_RETURN_IF_ERROR(Commit(std::move(c)));  // one store write: all or none
  return static_cast<int>(outputs.size());
}

Result<int> Namespace::RemoveFilesOf(const std::string& job, std::string File::*role,
                                     Deletions* deletions) {
  COPSE_RETURN_IF_ERROR(ValidateJobName(job));
  Change c;
  int n = 0;
  for (const auto& [id, f] : files_) {
    if (f.*role != job) continue;
    RemoveFile(&c, f, deletions);
    ++n;
  }
  COPSE_RETURN_IF_ERROR(Commit(std::move(c)));
  return n;
}

Result<int> Namespace::DropJobOutputs(const std::string& job, Deletions* deletions) {
  return RemoveFilesOf(job, &File::output_job, deletions);
}

Result<DroppedWrites> Namespace::AbandonRun(const RunId& run, Deletions* deletions) {
  if (run.empty()) return InvalidArgument("task 0 names no task run");
  Change c;
  DroppedWrites dropped;
  std::set<FileId> removed;
  for (const auto& [id, f] : files_) {
    // A job's output file belongs to the job, whichever run created it.
    if (f.run != run || !f.output_job.empty() || f.complete()) continue;
    RemoveFile(&c, f, deletions);
    removed.insert(id);
    ++dropped.files;
  }
  for (const auto& [id, b] : blocks_) {
    if (b.committed || b.run != run || removed.count(b.file)) continue;
    RemoveBlock(&c, b, deletions);
    ++dropped.blocks;
  }
  COPSE_RETURN_IF_ERROR(Commit(std::move(c)));
  return dropped;
}

std::vector<std::string> Namespace::PendingOutputJobs() const {
  std::set<std::string> jobs;
  for (const auto& [id, f] : files_)
    if (!f.output_job.empty()) jobs.insert(f.output_job);
  return {jobs.begin(), jobs.end()};
}

std::vector<std::string> Namespace::ScratchJobs() const {
  std::set<std::string> jobs;
  for (const auto& [id, f] : files_)
    if (!f.scratch_job.empty()) jobs.insert(f.scratch_job);
  return {jobs.begin(), jobs.end()};
}

Result<int> Namespace::DeleteJob(const std::string& job, Deletions* deletions) {
  return RemoveFilesOf(job, &File::scratch_job, deletions);
}

}  // namespace copse::dfs

// AppService: the master's program store (docs/sdk.md "Programs shipped
// through the DFS"). `copse app put` stores a program — one executable, or a
// .tar archive of a directory with an entry point — as the DFS file
// /.apps/NAME/VERSION, replicated like any file; this service keeps each
// version's record (its SHA-256, size, kind, entry point, when it was put)
// in the master's store, under "app/".
//
// A put is two steps around the upload: Prepare checks the name, picks or
// checks the version and reserves it for the put (so two puts at once get
// two versions, and neither drops the other's upload), refuses a name of
// the apps directory unless the put shadows it, and drops what an earlier
// failed upload left at the path; Commit checks that the uploaded file
// holds the announced bytes and records the version with the SHA-256 the
// client computed while uploading. (The master does not read the bytes;
// every worker checks them against that hash before it runs them, and
// refuses a copy that does not match.) A Commit sent again after its answer
// was lost finds its version recorded with the same hash: ok.
// A reservation lapses after kReservation without a Commit. Versions never change once recorded: NAME@VERSION
// names one content for good, so a job pinned to it at submission runs
// exactly that content in every attempt. A version is removed only when no
// job that has not ended uses it.
//
// Resolve turns a spec's program (NAME, the newest version, or
// NAME@VERSION) into its record; a name not in the store is looked up in
// the cluster's apps directory by the caller.
// Thread-safety: everything runs on the master's io_context thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "copse/status.h"
#include "common/tasks.h"
#include "dfs/meta_store.h"
#include "dfs/paths.h"

namespace copse::master {


// The name service's part: the stored programs' files.
class AppFiles {
 public:
  virtual ~AppFiles() = default;
  // The size of the visible file at `path`; kNotFound when there is none.
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
  // Deletes the file (visible or still being written); ok when there is none.
  virtual Status Delete(const std::string& path) = 0;
};

struct AppRecord {
  std::string name;
  std::string version;
  std::string sha256;  // of the file as put
  uint64_t size = 0;
  std::string entry;  // an archive's entry point; empty: a single executable
  bool executable = true;  // a single file put with its execute bit
  int64_t put_ms = 0;
  uint64_t seq = 0;  // order of puts: the newest version has the highest
  bool shadow = false;

  std::string path() const;  // /.apps/NAME/VERSION
  ProgramRef Ref() const;
};

struct AppPut {
  std::string name;
  std::string version;  // empty: the next whole number
  uint64_t size = 0;
  std::string entry;  // a .tar: the entry point in it
  bool executable = true;
  bool shadow = false;
  std::string sha256;  // Commit only
};

class AppService {
 public:
  static constexpr Duration kReservation{3'600'000'000};  // an hour
  struct Options {
    std::filesystem::path apps_dir;  // the cluster's apps directory
    uint64_t max_bytes = 256u << 20;  // [apps] max_program_mb
  };
  // REQUIRES: store, files and wall outlive the service.
  AppService(dfs::MetaStore& store, AppFiles& files, const Clock& wall, Options options);

  Status Load();

  // Before the upload. kInvalidArgument names a bad name, version, size or
  // entry; kAlreadyExists a version that exists or a name of the apps
  // directory (without shadow). Returns the record to upload for (its
  // version chosen, its path free).
  Result<AppRecord> Prepare(const AppPut& put);
  // After the upload. kFailedPrecondition when the file is missing or its
  // size is not the announced one.
  Result<AppRecord> Commit(const AppPut& put);

  // Every version, by name then put order; of one name only when given.
  std::vector<AppRecord> List(std::string_view name = {}) const;
  // Removes NAME@VERSION, or every version of NAME (empty version).
  // `in_use` says which job (not ended) pins a version, if one does:
  // kFailedPrecondition names it.
  using InUse = std::function<std::optional<uint64_t>(const std::string& name,
                                                      const std::string& version)>;
  Result<std::vector<AppRecord>> Remove(const std::string& name, const std::string& version,
                                        const InUse& in_use);

  // NAME or NAME@VERSION. nullopt when NAME is not in the store;
  // kNotFound for a version of a stored name that does not exist;
  // kInvalidArgument for a malformed program.
  Result<std::optional<AppRecord>> Resolve(std::string_view program) const;
  // Whether the apps directory has an executable of this name.
  bool InAppsDir(const std::string& name) const;

 private:
  Status CheckPut(const AppPut& put) const;
  std::string NextVersion(const std::string& name) const;

  dfs::MetaStore& store_;
  AppFiles& files_;
  const Clock& wall_;
  Options options_;
  std::map<std::string, std::map<std::string, AppRecord>> apps_;  // name -> version -> record
  // Versions Prepare handed out that are not committed yet, with when.
  std::map<std::pair<std::string, std::string>, Timestamp> reserved_;
  uint64_t next_seq_ = 1;
};

// Splits "NAME@VERSION" (VERSION empty when there is no '@').
// kInvalidArgument names what is wrong with either part.
Status SplitProgram(std::string_view program, std::string* name, std::string* version);
// 1 to 32 of [A-Za-z0-9._-], not starting with '.' or '-'.
bool ValidAppVersion(std::string_view version);

}  // namespace copse::master

// MetaStore: the master's durable key-value store (its RocksDB), where the
// name service keeps the DFS namespace so that a restarted master finds it
// again. An in-memory implementation serves tests.
// Thread-safety: implementations are thread-safe.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "copse/status.h"

namespace copse::dfs {

class MetaStore {
 public:
  struct Write {
    std::string key;
    std::optional<std::string> value;  // nullopt: delete the key
  };
  using Entries = std::vector<std::pair<std::string, std::string>>;

  virtual ~MetaStore() = default;
  // Applies every write atomically. With `sync`, durable (synced) when it
  // returns ok; without, through the store's log unsynced: a killed process
  // loses nothing, a crash of the machine may lose it (until the next synced
  // Apply, which makes every earlier write durable too).
  virtual Status Apply(const std::vector<Write>& writes, bool sync = true) = 0;
  // Every key starting with `prefix`, in key order, with its value.
  virtual Result<Entries> Scan(const std::string& prefix) const = 0;
};

// Opens (creating when missing) a RocksDB-backed store in `dir`. Fails with
// kUnavailable when another process holds it.
Result<std::unique_ptr<MetaStore>> OpenRocksMetaStore(const std::filesystem::path& dir);

class MemMetaStore final : public MetaStore {
 public:
  Status Apply(const std::vector<Write>& writes, bool sync = true) override;
  Result<Entries> Scan(const std::string& prefix) const override;
  // Testing: the next Apply fails with this status (once).
  void FailNextApply(Status s) { fail_next_ = std::move(s); }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> data_;  // GUARDED_BY(mu_)
  Status fail_next_;
};

}  // namespace copse::dfs

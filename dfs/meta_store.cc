#include "dfs/meta_store.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <atomic>

namespace copse::dfs {
namespace {

class RocksMetaStore final : public MetaStore {
 public:
  RocksMetaStore(std::unique_ptr<rocksdb::DB> db, std::filesystem::path dir)
      : db_(std::move(db)), dir_(std::move(dir)) {}
  ~RocksMetaStore() override { (void)db_->Close(); }

  Status Apply(const std::vector<Write>& writes, bool sync) override {
    rocksdb::WriteBatch batch;
    for (const Write& w : writes) {
      rocksdb::Status s = w.value ? batch.Put(w.key, *w.value) : batch.Delete(w.key);
      if (!s.ok()) return IoError(fmt::format("{}: {}", dir_.string(), s.ToString()));
    }
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    // A failed write (a full disk) stops RocksDB writing until it is told to
    // resume; it is, before the next write, which then succeeds once there
    // is space again.
    if (failed_.load()) (void)db_->Resume();
    rocksdb::Status s = db_->Write(wo, &batch);
    failed_.store(!s.ok());
    if (s.IsNoSpace()) {
      return ResourceExhausted(
          fmt::format("no space on the master: disk full under {}", dir_.string()));
    }
    if (!s.ok()) return IoError(fmt::format("writing {}: {}", dir_.string(), s.ToString()));
    return Status::Ok();
  }

  Result<Entries> Scan(const std::string& prefix) const override {
    Entries out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      out.emplace_back(it->key().ToString(), it->value().ToString());
    }
    if (!it->status().ok())
      return IoError(fmt::format("reading {}: {}", dir_.string(), it->status().ToString()));
    return out;
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::filesystem::path dir_;
  std::atomic<bool> failed_{false};
};

}  // namespace

Result<std::unique_ptr<MetaStore>> OpenRocksMetaStore(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  rocksdb::Options o;
  o.create_if_missing = true;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.keep_log_file_num = 2;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, dir.string(), &db);
  if (!s.ok()) {
    if (s.ToString().find("lock") != std::string::npos) {
      return Unavailable(
          fmt::format("{} is in use by another process (is a master already "
                      "running for this cluster?)",
                      dir.string()));
    }
    return IoError(fmt::format("cannot open {}: {}", dir.string(), s.ToString()));
  }
  return std::unique_ptr<MetaStore>(new RocksMetaStore(std::unique_ptr<rocksdb::DB>(db), dir));
}

Status MemMetaStore::Apply(const std::vector<Write>& writes, bool /*sync*/) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fail_next_.ok()) {
    Status s = std::move(fail_next_);
    fail_next_ = Status::Ok();
    return s;
  }
  for (const Write& w : writes) {
    if (w.value) {
      data_[w.key] = *w.value;
    } else {
      data_.erase(w.key);
    }
  }
  return Status::Ok();
}

Result<MetaStore::Entries> MemMetaStore::Scan(const std::string& prefix) const {
  std::lock_guard<std::mutex> lock(mu_);
  Entries out;
  for (auto it = data_.lower_bound(prefix); it != data_.end() && it->first.starts_with(prefix);
       ++it) {
    out.emplace_back(it->first, it->second);
  }
  return out;
}

}  // namespace copse::dfs

// The program store with an in-memory store, fake files and a manual clock:
// names, versions, shadowing, pinning by resolution, removal while pinned,
// and what a restarted master finds.
#include "master/app_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <map>

namespace copse::master {
namespace {

class FakeAppFiles final : public AppFiles {
 public:
  Result<uint64_t> FileSize(const std::string& path) override {
    auto it = files.find(path);
    if (it == files.end()) return NotFound("no file " + path);
    return it->second;
  }
  Status Delete(const std::string& path) override {
    files.erase(path);
    deleted.push_back(path);
    return Status::Ok();
  }
  std::map<std::string, uint64_t> files;
  std::vector<std::string> deleted;
};

const std::string kSha(64, 'a');
const std::string kSha2(64, 'b');

class AppServiceTest : public ::testing::Test {
 protected:
  AppServiceTest() {
    char tmpl[] = "/tmp/copse-apps-XXXXXX";
    apps_dir_ = ::mkdtemp(tmpl);
    std::filesystem::path p = apps_dir_ / "wordcount";
    std::ofstream(p) << "#!/bin/sh\n";
    ::chmod(p.c_str(), 0755);
    service_ =
        std::make_unique<AppService>(store_, files_, clock_, AppService::Options{apps_dir_, 1000});
    EXPECT_TRUE(service_->Load().ok());
  }
  ~AppServiceTest() override {
    std::error_code ec;
    std::filesystem::remove_all(apps_dir_, ec);
  }

  // Prepare, "upload" (the fake file), commit.
  Result<AppRecord> Put(const std::string& name, const std::string& version, const std::string& sha,
                        uint64_t size = 100, bool shadow = false) {
    AppPut put{name, version, size, "", true, shadow, ""};
    COPSE_ASSIGN_OR_RETURN(AppRecord prepared, service_->Prepare(put));
    files_.files[prepared.path()] = size;
    put.version = prepared.version;
    put.sha256 = sha;
    return service_->Commit(put);
  }

  std::filesystem::path apps_dir_;
  dfs::MemMetaStore store_;
  FakeAppFiles files_;
  ManualClock clock_{Timestamp{1'700'000'000'000'000}};
  std::unique_ptr<AppService> service_;
};

TEST_F(AppServiceTest, VersionsCountUpAndNameOneContentForGood) {
  auto v1 = Put("grep", "", kSha);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->version, "1");
  EXPECT_EQ(v1->path(), "/.apps/grep/1");
  EXPECT_EQ(v1->put_ms, 1'700'000'000'000);
  auto v2 = Put("grep", "", kSha2);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->version, "2");
  auto named = Put("grep", "beta-1.0", kSha);
  ASSERT_TRUE(named.ok());
  auto again = Put("grep", "2", kSha);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("grep@2 exists already"), std::string::npos);
  // NAME is the newest put; NAME@V that version.
  auto newest = service_->Resolve("grep");
  ASSERT_TRUE(newest.ok() && newest->has_value());
  EXPECT_EQ((*newest)->version, "beta-1.0");
  auto pinned = service_->Resolve("grep@2");
  ASSERT_TRUE(pinned.ok() && pinned->has_value());
  EXPECT_EQ((*pinned)->sha256, kSha2);
  EXPECT_EQ((*pinned)->Ref().name, "grep@2");
  auto missing = service_->Resolve("grep@9");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("the store has: 1, 2, beta-1.0"), std::string::npos)
      << missing.status().message();
  // A name not in the store is the apps directory's business.
  auto other = service_->Resolve("wordcount");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
}

TEST_F(AppServiceTest, BadNamesVersionsSizesAndEntriesAreRefusedBeforeTheUpload) {
  struct Case {
    AppPut put;
    std::string why;
  } cases[] = {
      {{"Grep", "", 10}, "not a program name"},
      {{"../x", "", 10}, "not a program name"},
      {{"grep@1", "", 10}, "--version"},
      {{"grep", "-rf", 10}, "not a version"},
      {{"grep", std::string(40, '1'), 10}, "not a version"},
      {{"grep", "", 0}, "empty"},
      {{"grep", "", 5000}, "over the limit of 1000"},
      {{"grep", "", 10, "../run"}, "entry point"},
      {{"grep", "", 10, "/bin/sh"}, "entry point"},
  };
  for (const Case& c : cases) {
    auto r = service_->Prepare(c.put);
    ASSERT_FALSE(r.ok()) << c.why;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.why;
    EXPECT_NE(r.status().message().find(c.why), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(files_.deleted.empty());
}

TEST_F(AppServiceTest, ANameOfTheAppsDirectoryNeedsShadow) {
  auto refused = Put("wordcount", "", kSha);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(refused.status().message().find("--shadow"), std::string::npos);
  auto shadow = Put("wordcount", "", kSha, 100, /*shadow=*/true);
  ASSERT_TRUE(shadow.ok()) << shadow.status().ToString();
  auto resolved = service_->Resolve("wordcount");
  ASSERT_TRUE(resolved.ok() && resolved->has_value());
  EXPECT_TRUE((*resolved)->shadow);
}

TEST_F(AppServiceTest, ACommitChecksTheUploadAndTheHash) {
  AppPut put{"grep", "", 100};
  auto prepared = service_->Prepare(put);
  ASSERT_TRUE(prepared.ok());
  put.version = prepared->version;
  put.sha256 = kSha;
  EXPECT_EQ(service_->Commit(put).status().code(), StatusCode::kFailedPrecondition);  // no upload
  files_.files[prepared->path()] = 99;
  auto short_upload = service_->Commit(put);
  EXPECT_EQ(short_upload.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(short_upload.status().message().find("holds 99 bytes, not 100"), std::string::npos);
  files_.files[prepared->path()] = 100;
  put.sha256 = "not-a-hash";
  EXPECT_EQ(service_->Commit(put).status().code(), StatusCode::kInvalidArgument);
  put.sha256 = kSha;
  EXPECT_TRUE(service_->Commit(put).ok());
}

TEST_F(AppServiceTest, PrepareDropsWhatAFailedUploadLeft) {
  files_.files["/.apps/grep/1"] = 50;  // an upload that never committed
  auto r = Put("grep", "", kSha);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(files_.deleted.empty());
  EXPECT_EQ(files_.deleted.front(), "/.apps/grep/1");
}

TEST_F(AppServiceTest, RemovalIsRefusedWhileAJobPinsTheVersion) {
  ASSERT_TRUE(Put("grep", "", kSha).ok());
  ASSERT_TRUE(Put("grep", "", kSha2).ok());
  auto pinned_by_7 = [](const std::string&, const std::string& v) -> std::optional<uint64_t> {
    return v == "1" ? std::optional<uint64_t>(7) : std::nullopt;
  };
  auto refused = service_->Remove("grep", "1", pinned_by_7);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("pinned by job 7"), std::string::npos);
  // Every version at once is refused as a whole.
  EXPECT_FALSE(service_->Remove("grep", "", pinned_by_7).ok());
  EXPECT_EQ(service_->List("grep").size(), 2u);
  auto gone = service_->Remove("grep", "2", pinned_by_7);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(files_.files.count("/.apps/grep/2"), 0u);
  EXPECT_EQ(service_->Remove("grep", "5", pinned_by_7).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(service_->Remove("nope", "", pinned_by_7).status().code(), StatusCode::kNotFound);
}

TEST_F(AppServiceTest, ARestartedMasterFindsEveryVersionAndTheirOrder) {
  ASSERT_TRUE(Put("grep", "", kSha).ok());
  ASSERT_TRUE(Put("sed", "", kSha).ok());
  ASSERT_TRUE(Put("grep", "", kSha2).ok());
  (void)store_.Apply({{"app/bad/1", "{not json"}});  // one unreadable record is left out
  AppService again(store_, files_, clock_, AppService::Options{apps_dir_, 1000});
  ASSERT_TRUE(again.Load().ok());
  EXPECT_EQ(again.List().size(), 3u);
  auto newest = again.Resolve("grep");
  ASSERT_TRUE(newest.ok() && newest->has_value());
  EXPECT_EQ((*newest)->version, "2");
  // The next put goes on counting.
  AppPut put{"grep", "", 10};
  auto prepared = again.Prepare(put);
  ASSERT_TRUE(prepared.ok());
  EXPECT_EQ(prepared->version, "3");
}

TEST_F(AppServiceTest, AStoreThatRefusesTheRecordLeavesNothingBehind) {
  AppPut put{"grep", "", 100};
  auto prepared = service_->Prepare(put);
  ASSERT_TRUE(prepared.ok());
  files_.files[prepared->path()] = 100;
  put.version = prepared->version;
  put.sha256 = kSha;
  store_.FailNextApply(IoError("disk full"));
  EXPECT_FALSE(service_->Commit(put).ok());
  EXPECT_TRUE(service_->List().empty());
  auto r = service_->Resolve("grep");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

}  // namespace
}  // namespace copse::master

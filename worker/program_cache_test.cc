// Where a worker's programs come from, without a cluster: the apps
// directory, the vertex-contract mark, and a cached program of the store
// that is checked once and dropped when it changed. (Fetching through the
// DFS is tested on a real cluster: tests/sdk_test.cc.)
#include "worker/program_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <future>

#include "common/net/free_ports.h"
#include "common/sha256.h"
#include "copse/vertex.h"

namespace copse::worker {
namespace {

class ProgramCacheTest : public ::testing::Test {
 protected:
  ProgramCacheTest() {
    char tmpl[] = "/tmp/copse-programs-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    std::filesystem::create_directories(dir_ / "apps");
    // A master nobody listens for: fetching fails at once.
    auto ports = net::FreePorts(1);
    config_.master.host = "127.0.0.1";
    config_.master.port = ports.ok() ? (*ports)[0] : 1;
  }
  ~ProgramCacheTest() override {
    cache_.reset();
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(dir_, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::error_code e2;
      if (it->is_directory(e2)) {
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, e2);
      }
    }
    std::filesystem::remove_all(dir_, ec);
  }
  ProgramCache& Cache() {
    if (!cache_) {
      ProgramCache::Options o;
      o.dir = dir_ / "programs";
      o.apps_dir = dir_ / "apps";
      o.max_bytes = 1 << 20;
      o.computer = "c00";
      o.post = [](std::function<void()> fn) { fn(); };  // answers on the cache's thread
      cache_ = std::make_unique<ProgramCache>(config_, std::string(32, 's'), o);
    }
    return *cache_;
  }
  Result<ResolvedProgram> Resolve(const std::string& name, std::vector<ProgramRef> pinned = {}) {
    std::promise<Result<ResolvedProgram>> p;
    Cache().Resolve(name, pinned, [&](Result<ResolvedProgram> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  void Write(const std::filesystem::path& p, const std::string& bytes, mode_t mode = 0755) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    ::chmod(p.c_str(), mode);
  }

  std::filesystem::path dir_;
  ClusterConfig config_;
  std::unique_ptr<ProgramCache> cache_;
};

TEST_F(ProgramCacheTest, TheContractMarkIsReadFromTheBinary) {
  // The marks are spelt in pieces: a whole one in this test's own text
  // would be a mark of this binary too (read last below).
  const std::string mark = std::string("copse-vertex-") + "contract=";
  Write(dir_ / "marked", std::string(3 << 20, 'x') + mark + "7;" + "tail");
  Write(dir_ / "plain", "#!/usr/bin/env python3\nprint('hi')\n");
  Write(dir_ / "broken", mark + ";");
  EXPECT_EQ(*ReadContractMark(dir_ / "marked"), 7);
  EXPECT_EQ(*ReadContractMark(dir_ / "plain"), 0);
  EXPECT_EQ(*ReadContractMark(dir_ / "broken"), 0);
  EXPECT_FALSE(ReadContractMark(dir_ / "missing").ok());
  // This very test links the runtime's header: it carries today's mark.
  EXPECT_EQ(*ReadContractMark("/proc/self/exe"), kVertexContract);
}

TEST_F(ProgramCacheTest, TheAppsDirectoryIsLookedInForNamesThatAreNotPinned) {
  Write(dir_ / "apps" / "mapper", "#!/bin/sh\ncat\n");
  auto r = Resolve("mapper");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exec, dir_ / "apps" / "mapper");
  EXPECT_EQ(r->contract, 0);  // a streaming program
  EXPECT_TRUE(r->lease.empty());
  auto missing = Resolve("absent");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no program 'absent' in the apps directory"),
            std::string::npos);
  EXPECT_EQ(Resolve("../etc/passwd").status().code(), StatusCode::kInvalidArgument);
  // Without the execute bit it is no program.
  Write(dir_ / "apps" / "data", "x", 0644);
  EXPECT_EQ(Resolve("data").status().code(), StatusCode::kNotFound);
}

TEST_F(ProgramCacheTest, ACachedProgramIsCheckedOnceAndFetchedAgainWhenItChanged) {
  const std::string content = "#!/bin/sh\necho cached\n";
  const std::string sha = Sha256Hex(content);
  // Left by an earlier worker process.
  Write(dir_ / "programs" / sha / "program", content, 0555);
  ProgramRef ref{"tool@1", sha, "/.apps/tool/1", content.size(), "", true};
  auto first = Resolve("tool@1", {ref});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->exec, dir_ / "programs" / sha / "program");
  EXPECT_FALSE(first->fetched);
  EXPECT_EQ(first->lease, sha);
  Cache().Release(first->lease);
  // A byte changed on disk: the entry is dropped and fetched again (here
  // the master is away, so the fetch fails and says so).
  ::chmod(first->exec.c_str(), 0755);
  Write(first->exec, "#!/bin/sh\necho tampered\n");
  auto second = Resolve("tool@1", {ref});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable) << second.status().ToString();
  EXPECT_NE(second.status().message().find("program tool@1"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "programs" / sha));
}

TEST_F(ProgramCacheTest, AnEntryFromAnEarlierWorkerWithTheWrongHashIsNotRun) {
  const std::string sha = Sha256Hex("the real content");
  Write(dir_ / "programs" / sha / "program", "something else", 0555);
  ProgramRef ref{"tool@1", sha, "/.apps/tool/1", 16, "", true};
  auto r = Resolve("tool@1", {ref});
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "programs" / sha));
}

TEST_F(ProgramCacheTest, APinWithoutAHashIsRefused) {
  auto r = Resolve("tool@1", {ProgramRef{"tool@1", "", "/.apps/tool/1", 10, "", true}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace copse::worker

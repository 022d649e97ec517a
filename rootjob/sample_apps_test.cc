#include "rootjob/sample_apps.h"

#include <gtest/gtest.h>

#include <map>

namespace copse::rootjob {
namespace {

TEST(SampleAppsTest, PaperWorkloadFileHasThirtyInstancesPrimeLargeFirst) {
  Result<std::vector<InstanceSpec>> w =
      LoadWorkload(std::filesystem::path(COPSE_TEST_SOURCE_DIR) / "bench/workloads/quincy30.toml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->size(), 30u);
  EXPECT_EQ(w->front().name, "PrimeLarge");
  std::map<std::string, int> per_app;
  for (const InstanceSpec& s : *w) ++per_app[s.app];
  EXPECT_EQ(per_app["prime_small"], 13);
  EXPECT_EQ(per_app["prime_large"], 1);
  EXPECT_EQ(per_app["wordcount"], 10);
  EXPECT_EQ(per_app["databasejoin"], 2);
  EXPECT_EQ(per_app["sort"], 3);
  EXPECT_EQ(per_app["pagerank"], 1);
}

TEST(SampleAppsTest, DatabaseJoinCoLocatesItsTables) {
  InstanceSpec s{"DJ", "databasejoin", 40, "confine 5 r1"};
  Result<JobDag> d = BuildSampleJob(s);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->files.size(), 2u);
  EXPECT_EQ(FilePlacement(s, *d, 0), "confine 5 r1");
  EXPECT_EQ(FilePlacement(s, *d, 1), "colocate small");
  EXPECT_EQ(d->files[1].partition_bytes * 40, 41'800'000'000);
}

TEST(SampleAppsTest, SyntheticJobsCarryArrivalAndTaskTime) {
  auto r = ParseWorkload(
      "[[instance]]\nname = \"j\"\napp = \"synthetic\"\npartitions = 3\n"
      "submit_s = 12.5\ntask_seconds = 40\n",
      "w");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ((*r)[0].submit_s, 12.5);
  EXPECT_DOUBLE_EQ((*r)[0].task_seconds, 40);
  Result<JobDag> d = BuildSampleJob((*r)[0]);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->files.empty());
  EXPECT_EQ(d->TotalVertices(), 3);
  r = ParseWorkload("[[instance]]\nname = \"j\"\napp = \"synthetic\"\npartitions = 3\n", "w");
  EXPECT_FALSE(r.ok());
  r = ParseWorkload(
      "[[instance]]\nname = \"j\"\napp = \"synthetic\"\npartitions = 3\n"
      "task_seconds = 1\nsubmit_s = -1\n",
      "w");
  EXPECT_FALSE(r.ok());
}

TEST(SampleAppsTest, BadWorkloadsAreRejectedWithWhere) {
  auto r = ParseWorkload("[[instance]]\nname = \"a\"\napp = \"nope\"\npartitions = 2\n", "w.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("w.toml: instance 1"), std::string::npos);
  EXPECT_NE(r.status().message().find("unknown app"), std::string::npos);
  r = ParseWorkload("[[instance]]\nname = \"a\"\napp = \"sort\"\n", "w.toml");
  EXPECT_FALSE(r.ok());
  r = ParseWorkload(
      "[[instance]]\nname = \"a\"\napp = \"sort\"\npartitions = 2\n"
      "[[instance]]\nname = \"a\"\napp = \"sort\"\npartitions = 2\n",
      "w.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("duplicate"), std::string::npos);
  r = ParseWorkload("[[instance]]\nname = \"a\"\napp = \"sort\"\npartitions = 2\nx = 1\n", "w");
  EXPECT_FALSE(r.ok());
  r = ParseWorkload("not toml [", "w");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace copse::rootjob

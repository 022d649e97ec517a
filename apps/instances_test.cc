#include "apps/instances.h"

#include <gtest/gtest.h>

#include <map>

namespace copse::apps {

using rootjob::Connection;
using rootjob::JobDag;
namespace {

TEST(InstancesTest, PaperWorkloadFileHasThirtyInstancesPrimeLargeFirst) {
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

TEST(InstancesTest, DatabaseJoinCoLocatesItsTables) {
  InstanceSpec s{"DJ", "databasejoin", 40, "confine 5 r1"};
  Result<JobDag> d = BuildInstanceDag(s);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->files.size(), 2u);
  EXPECT_EQ(FilePlacement(s, *d, 0), "confine 5 r1");
  EXPECT_EQ(FilePlacement(s, *d, 1), "colocate /DJ/small");
  EXPECT_EQ(d->files[1].partition_bytes * 40, 41'800'000'000);
}

TEST(InstancesTest, AConfinedInstanceLargerThanItsRackSpreadsOverTheRack) {
  Result<ClusterConfig> c = ParseClusterConfig(
      "[cluster]\nname = \"t\"\ndata_root = \"d\"\n[master]\nhost = \"127.0.0.1\"\n"
      "port = 7000\nworker_port_base = 7010\n[[racks]]\nname = \"r0\"\ncount = 4\n"
      "[[racks]]\nname = \"r1\"\ncount = 3\n",
      "/tmp/t.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(FitPlacement("confine 5 r1", *c), "confine 3 r1");
  EXPECT_EQ(FitPlacement("confine 2 r1", *c), "confine 2 r1");
  EXPECT_EQ(FitPlacement("confine 5 r0", *c), "confine 4 r0");
  EXPECT_EQ(FitPlacement("confine 5 r9", *c), "confine 5 r9");  // placing it names the rack
  // A rack too small for the replicas: the whole cluster.
  EXPECT_EQ(FitPlacement("confine 5 r1", *c, 4), "random");
  EXPECT_EQ(FitPlacement("confine 3 r1", *c, 4), "confine 3 r1");  // as asked: placing refuses
  EXPECT_EQ(FitPlacement("random", *c), "random");
  EXPECT_EQ(FitPlacement("colocate /x", *c), "colocate /x");
}

TEST(InstancesTest, TheInstanceJobIsTheJobCopseRunSubmits) {
  InstanceSpec s{"WC", "wordcount", 8};
  Result<InstanceJob> j = BuildInstanceJob(s, 0.01, "/WC/out-x");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->app, "wordcount");
  EXPECT_EQ(j->options.inputs, std::vector<std::string>{"/WC/text"});
  EXPECT_EQ(j->options.output, "/WC/out-x");
  EXPECT_EQ(j->options.partitions, 1);
  EXPECT_EQ(j->facts.at("/WC/text").bytes, 8 * 500'000);
  Result<InstanceJob> p = BuildInstanceJob({"P", "prime_large", 4});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->app, "prime");
  EXPECT_EQ(p->options.output, "/P/out");
}

TEST(InstancesTest, SyntheticJobsCarryArrivalAndTaskTime) {
  auto r = ParseWorkload(
      "[[instance]]\nname = \"j\"\napp = \"synthetic\"\npartitions = 3\n"
      "submit_s = 12.5\ntask_seconds = 40\n",
      "w");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ((*r)[0].submit_s, 12.5);
  EXPECT_DOUBLE_EQ((*r)[0].task_seconds, 40);
  Result<JobDag> d = BuildInstanceDag((*r)[0]);
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

TEST(InstancesTest, BadWorkloadsAreRejectedWithWhere) {
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

// The simulator's jobs are the jobs `copse run` submits: the stages of the
// app's builder, named by program and role, with the app's size model.
TEST(InstancesTest, AnInstanceIsItsAppsJobWithThePapersSizes) {
  Result<JobDag> d = BuildInstanceDag({"Sort40", "sort", 40, "random"});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->app, "sort");
  ASSERT_EQ(d->files.size(), 1u);
  EXPECT_EQ(d->files[0].name, "/Sort40/records");
  EXPECT_EQ(d->files[0].partition_bytes, 4'000'000'000);
  ASSERT_EQ(d->stages.size(), 3u);
  EXPECT_EQ(d->stages[0].name, "sort.sample");
  EXPECT_EQ(d->stages[0].vertices, 1);
  EXPECT_EQ(d->stages[0].inputs[0].connection, Connection::kGather);
  EXPECT_DOUBLE_EQ(d->stages[0].inputs[0].fraction, 0.01);
  EXPECT_EQ(d->stages[1].name, "sort.partition");
  EXPECT_EQ(d->stages[1].inputs[1].connection, Connection::kBroadcast);
  EXPECT_EQ(d->stages[2].name, "sort.sort");
  EXPECT_EQ(d->stages[2].vertices, 40);
  EXPECT_EQ(d->stages[2].inputs[0].connection, Connection::kAllToAll);

  // Prime counts per partition, then one vertex adds the counts up.
  d = BuildInstanceDag({"P", "prime_large", 240, "random"});
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->stages.size(), 2u);
  EXPECT_EQ(d->stages[0].name, "prime.count");
  EXPECT_EQ(d->stages[1].name, "prime.total");
  EXPECT_EQ(d->TotalVertices(), 241);
  EXPECT_EQ(d->files[0].partition_bytes, 3'500'000);

  // WordCount writes one output partition: count -> sum.
  d = BuildInstanceDag({"WC", "wordcount", 5, "random"});
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->stages.size(), 2u);
  EXPECT_EQ(d->stages[1].name, "wordcount.sum");
  EXPECT_EQ(d->stages[1].inputs[0].connection, Connection::kGather);
  EXPECT_EQ(d->stages[1].output_fixed_bytes, 1000);

  d = BuildInstanceDag({"PR", "pagerank", 8, "random"});
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->stages.size(), 6u);
  EXPECT_EQ(d->stages[2].name, "pagerank.phase1");
  ASSERT_EQ(d->stages[2].inputs.size(), 2u);
  EXPECT_EQ(d->stages[2].inputs[1].source, 1);
  EXPECT_EQ(d->stages[2].output_fixed_bytes, 625'000'000);
}

TEST(InstancesTest, AScaleShrinksPartitionsAndFixedOutputs) {
  Result<JobDag> d = BuildInstanceDag({"PR", "pagerank", 4, "random"}, 0.001);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->files[0].partition_bytes, 1'000'000);
  EXPECT_EQ(d->stages[0].output_fixed_bytes, 625'000);
  EXPECT_DOUBLE_EQ(d->stages[1].output_ratio, 0.0);
  EXPECT_FALSE(BuildInstanceDag({"PR", "pagerank", 4, "random"}, 0).ok());
  EXPECT_FALSE(BuildInstanceDag({"S", "synthetic", 4, "random"}, 1).ok());  // no task_seconds
}

}  // namespace
}  // namespace copse::apps

#include "rootjob/job_dag.h"

#include <gtest/gtest.h>

#include "rootjob/sample_apps.h"

namespace copse::rootjob {
namespace {

std::vector<std::vector<std::vector<int>>> OneReplicaEach(const JobDag& d) {
  std::vector<std::vector<std::vector<int>>> r;
  for (const FileSpec& f : d.files) {
    std::vector<std::vector<int>> parts;
    for (int p = 0; p < f.partitions; ++p) parts.push_back({p});
    r.push_back(parts);
  }
  return r;
}

TEST(JobDagTest, SortRunsSampleThenPartitionThenSort) {
  Result<JobDag> dag = BuildSampleJob({"Sort4", "sort", 4, "random"});
  ASSERT_TRUE(dag.ok()) << dag.status().ToString();
  DagState st(*dag, OneReplicaEach(*dag));
  std::vector<VertexId> ready = st.TakeReady();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0], (VertexId{0, 0}));
  // The sample reads 1% of each of the four 4 GB partitions.
  std::vector<InputPiece> in = st.Inputs(ready[0]);
  ASSERT_EQ(in.size(), 4u);
  EXPECT_EQ(in[2].bytes, 40'000'000);
  EXPECT_EQ(in[2].replicas, std::vector<int>{2});
  EXPECT_TRUE(st.TakeReady().empty());
  st.Completed(ready[0], 7, 1000);
  ready = st.TakeReady();
  ASSERT_EQ(ready.size(), 4u);  // every partition vertex
  in = st.Inputs(ready[1]);
  ASSERT_EQ(in.size(), 2u);  // its partition and the broadcast sample
  EXPECT_EQ(in[1].replicas, std::vector<int>{7});
  for (int i = 0; i < 3; ++i) st.Completed(ready[i], 10 + i, 400);
  EXPECT_TRUE(st.TakeReady().empty());  // all-to-all waits for the whole stage
  st.Completed(ready[3], 13, 400);
  ready = st.TakeReady();
  ASSERT_EQ(ready.size(), 4u);
  in = st.Inputs(ready[0]);
  ASSERT_EQ(in.size(), 4u);  // one bucket of each upstream vertex
  EXPECT_EQ(in[3].bytes, 100);
  EXPECT_EQ(in[3].replicas, std::vector<int>{13});
  for (VertexId v : ready) st.Completed(v, 0, 1);
  EXPECT_TRUE(st.Done());
  EXPECT_EQ(st.completed(), 9);
}

TEST(JobDagTest, PageRankHasThreeIterationsOfTwoPhases) {
  Result<JobDag> dag = BuildSampleJob({"PR", "pagerank", 3, "random"});
  ASSERT_TRUE(dag.ok());
  ASSERT_EQ(dag->stages.size(), 6u);
  DagState st(*dag, OneReplicaEach(*dag));
  std::vector<VertexId> ready = st.TakeReady();
  ASSERT_EQ(ready.size(), 3u);
  st.Completed(ready[0], 0, 300);
  st.Completed(ready[1], 1, 300);
  st.Completed(ready[2], 2, 300);
  ready = st.TakeReady();
  ASSERT_EQ(ready.size(), 3u);
  st.Completed(ready[1], 5, 10);
  // Iteration 2's phase 1 vertex 1 needs phase 2 vertex 1 only (pointwise).
  ready = st.TakeReady();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0], (VertexId{2, 1}));
  std::vector<InputPiece> in = st.Inputs(ready[0]);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[1].replicas, std::vector<int>{5});
}

TEST(JobDagTest, RejectsBadShapes) {
  JobDag d{"bad", "x", {{"f", 4, 10}}, {}};
  d.stages.push_back({"s", 3, {{true, 0, Connection::kPointwise, 1.0}}, 0, 0});
  EXPECT_EQ(ValidateDag(d).code(), StatusCode::kInvalidArgument);
  d.stages[0] = {"s", 2, {{true, 0, Connection::kGather, 1.0}}, 0, 0};
  EXPECT_EQ(ValidateDag(d).code(), StatusCode::kInvalidArgument);
  d.stages[0] = {"s", 1, {{false, 0, Connection::kGather, 1.0}}, 0, 0};
  EXPECT_EQ(ValidateDag(d).code(), StatusCode::kInvalidArgument);
  d.stages[0] = {"s", 1, {{true, 0, Connection::kGather, 1.0}}, 0, 0};
  EXPECT_TRUE(ValidateDag(d).ok());
}

}  // namespace
}  // namespace copse::rootjob

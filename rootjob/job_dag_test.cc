#include "rootjob/job_dag.h"

#include <gtest/gtest.h>


namespace copse::rootjob {
namespace {

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
  // Two all-to-all consumers of one stage must agree on its bucket count.
  d.stages.push_back({"t", 1, {{false, 0, Connection::kAllToAll, 1.0}}, 0, 0});
  d.stages.push_back({"u", 2, {{false, 0, Connection::kAllToAll, 1.0}}, 0, 0});
  Status s = ValidateDag(d);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bucket"), std::string::npos) << s.message();
  d.stages[2].vertices = 1;
  EXPECT_TRUE(ValidateDag(d).ok());
}

}  // namespace
}  // namespace copse::rootjob

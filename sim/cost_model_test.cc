#include "sim/cost_model.h"

#include <gtest/gtest.h>

namespace copse::sim {
namespace {

TEST(CostModelTest, JsonRoundTrips) {
  CostModel m = PaperCostModel();
  m.root_startup_s = 0.75;
  m.task_startup_s = 0.125;
  m.stages["sort/sort.sort"] = {0.5, 33.25};
  Result<CostModel> back = CostModelFromJson(CostModelToJson(m), "costs.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->root_startup_s, 0.75);
  EXPECT_EQ(back->task_startup_s, 0.125);
  ASSERT_EQ(back->stages.size(), m.stages.size());
  EXPECT_EQ(back->stages.at("sort/sort.sort").fixed_s, 0.5);
  EXPECT_EQ(back->stages.at("sort/sort.sort").per_gb_s, 33.25);
  Result<double> s = back->Seconds("sort", "sort.sort", 2'000'000'000);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(*s, 0.125 + 0.5 + 2 * 33.25);
}

TEST(CostModelTest, BadFilesAreNamedWithWhatIsWrong) {
  auto err = [](const std::string& text) {
    Result<CostModel> r = CostModelFromJson(text, "c.json");
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(err("[1]").find("c.json: not a JSON object"), std::string::npos);
  EXPECT_NE(err(R"({"root_startup_s": 1, "stages": {}})").find("task_startup_s"),
            std::string::npos);
  EXPECT_NE(err(R"({"root_startup_s": 1, "task_startup_s": -1, "stages": {}})")
                .find("task_startup_s must be a number >= 0"),
            std::string::npos);
  EXPECT_NE(err(R"({"root_startup_s": 1, "task_startup_s": 1, "stages": {}, "x": 2})")
                .find("unknown key 'x'"),
            std::string::npos);
  EXPECT_NE(err(R"({"root_startup_s": 1, "task_startup_s": 1,
                    "stages": {"a/b.c": {"fixed_s": 1}}})")
                .find("stages.a/b.c."),
            std::string::npos);
  EXPECT_NE(err(R"({"root_startup_s": 1, "task_startup_s": 1,
                    "stages": {"a/b.c": {"fixed_s": 1, "per_gb_s": "x"}}})")
                .find("stages.a/b.c.per_gb_s must be a number >= 0"),
            std::string::npos);
}

}  // namespace
}  // namespace copse::sim

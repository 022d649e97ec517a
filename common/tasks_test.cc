#include "common/tasks.h"

#include <gtest/gtest.h>

namespace copse {
namespace {

TEST(VertexLabelTest, FormatsAndParsesBack) {
  VertexLabel l{"sort.partition", 12, 3};
  EXPECT_EQ(FormatVertexLabel(l), "sort.partition[12] v3");
  VertexLabel back;
  ASSERT_TRUE(ParseVertexLabel(FormatVertexLabel(l), &back));
  EXPECT_EQ(back.stage, "sort.partition");
  EXPECT_EQ(back.index, 12);
  EXPECT_EQ(back.version, 3u);
  // A stage name may itself hold brackets: the last "[N] vM" is the vertex.
  ASSERT_TRUE(ParseVertexLabel("odd[name][0] v1", &back));
  EXPECT_EQ(back.stage, "odd[name]");
  EXPECT_EQ(back.index, 0);
}

TEST(VertexLabelTest, AnythingElseIsNotAVertex) {
  VertexLabel l;
  for (const char* bad : {"root", "", "[1] v2", "s[1]", "s[1] v", "s[x] v1", "s[1] vx", "s[-1] v1",
                          "s[1] v1 ", "s[12345678901] v1", "s1] v1"}) {
    EXPECT_FALSE(ParseVertexLabel(bad, &l)) << bad;
  }
}

}  // namespace
}  // namespace copse

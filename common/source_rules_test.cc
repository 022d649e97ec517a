// Rules the sources themselves follow, checked over the tree: the ones that
// a reviewer would otherwise have to remember.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Every product source file (tests excluded): .cc and .h outside build/
// and tests/, not named *_test.cc.
std::vector<fs::path> ProductSources() {
  fs::path root = COPSE_SOURCE_DIR;
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    if (it->is_directory() && (name == "build" || name == "tests" || name[0] == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    std::string ext = p.extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    if (name.size() > 8 && name.compare(name.size() - 8, 8, "_test.cc") == 0) continue;
    out.push_back(p);
  }
  return out;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// nlohmann's dump() throws on a string that is not UTF-8: a vertex's log
// tail in a failure reason took the master down that way. Documents are
// written with copse::DumpJson (common/json.h), which replaces such bytes.
TEST(SourceRulesTest, JsonIsWrittenOnlyThroughDumpJson) {
  std::vector<std::string> offenders;
  for (const fs::path& p : ProductSources()) {
    if (p.filename() == "json.cc" && p.parent_path().filename() == "common") continue;
    std::string text = Read(p);
    size_t line = 1;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') ++line;
      if (text.compare(i, 6, ".dump(") == 0) {
        offenders.push_back(p.string() + ":" + std::to_string(line));
      }
    }
  }
  EXPECT_GT(ProductSources().size(), 100u)
      << "the walk found too few sources under " << COPSE_SOURCE_DIR;
  for (const std::string& o : offenders) ADD_FAILURE() << o << " calls .dump(); use DumpJson";
}

}  // namespace

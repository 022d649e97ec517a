// grep-count: counts, for each of a list of patterns, the lines of its
// input that hold the pattern. One program, two roles (the stage parameter
// "role"):
//   match  reads its input lines and emits `pattern<TAB>count` for every
//          pattern (the parameter "patterns", a comma-separated list),
//          partitioned by pattern;
//   sum    reads such records from every match vertex and emits each
//          pattern's total.
// Counters: lines_read, lines_matched.
#include <copse/vertex.h>

#include <charconv>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

copse::Status Match(copse::Vertex& v) {
  std::optional<std::string> list = v.StringParam("patterns");
  if (!list || Split(*list).empty()) {
    return copse::InvalidArgument("the parameter 'patterns' (a comma-separated list) is missing");
  }
  const std::vector<std::string> patterns = Split(*list);
  std::map<std::string, int64_t> hits;
  int64_t lines = 0, matched = 0;
  for (size_t i = 0; i < v.inputs(); ++i) {
    COPSE_RETURN_IF_ERROR(v.ReadLines(i, [&](std::string_view line) {
      ++lines;
      bool any = false;
      for (const std::string& p : patterns) {
        if (line.find(p) != std::string_view::npos) {
          ++hits[p];
          any = true;
        }
      }
      matched += any ? 1 : 0;
      return copse::Status::Ok();
    }));
  }
  COPSE_RETURN_IF_ERROR(v.Count("lines_read", lines));
  COPSE_RETURN_IF_ERROR(v.Count("lines_matched", matched));
  for (const std::string& p : patterns) {
    COPSE_RETURN_IF_ERROR(v.Emit(p, std::to_string(hits[p])));
  }
  return copse::Status::Ok();
}

copse::Status Sum(copse::Vertex& v) {
  std::map<std::string, int64_t> totals;
  for (size_t i = 0; i < v.inputs(); ++i) {
    COPSE_RETURN_IF_ERROR(
        v.ReadRecords(i, copse::RecordFormat::kText, [&](const copse::Record& r) -> copse::Status {
          int64_t n = 0;
          auto [end, err] = std::from_chars(r.value.data(), r.value.data() + r.value.size(), n);
          if (err != std::errc() || end != r.value.data() + r.value.size()) {
            return copse::InvalidArgument("input " + std::to_string(i) +
                                          ": a count that is not a number");
          }
          totals[std::string(r.key)] += n;
          return copse::Status::Ok();
        }));
  }
  for (const auto& [pattern, n] : totals) {
    COPSE_RETURN_IF_ERROR(v.Emit(pattern, std::to_string(n)));
  }
  return copse::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  return copse::RunVertex(argc, argv, [](copse::Vertex& v) -> copse::Status {
    std::string role = v.StringParam("role").value_or("");
    if (role == "match") return Match(v);
    if (role == "sum") return Sum(v);
    return copse::InvalidArgument("the parameter 'role' must be \"match\" or \"sum\"");
  });
}

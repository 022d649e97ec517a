// wordcount: the WordCount vertex program (docs/design.md §12, apps/catalog.h).
// Words are maximal runs of bytes other than ASCII whitespace (space, \t,
// \n, \v, \f, \r); the output is `word<TAB>count` for every distinct word,
// count descending then word ascending (byte order). Its parameter "role"
// says which stage it plays:
//   count  reads its text partition, counts words, and writes each word's
//          count into bucket FNV-1a(word) mod buckets (copse::HashPartitioner)
//   sum    adds up its bucket of every count vertex; writes its words sorted
//   merge  merges every sum vertex's sorted words and cuts the global order
//          into as many runs of equal line counts as it has buckets
//   write  copies its run into its partition of the output
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "apps/runtime/vertex_internal.h"

namespace {

using copse::Status;
using Counts = std::unordered_map<std::string, uint64_t>;

bool Space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Counts words in a stream cut at arbitrary points (a word may straddle two
// pieces).
class WordCounter {
 public:
  explicit WordCounter(Counts* counts) : counts_(counts) {}
  void Feed(std::span<const uint8_t> b) {
    for (uint8_t c : b) {
      if (Space(c)) {
        Flush();
      } else {
        word_.push_back(static_cast<char>(c));
      }
    }
  }
  void Flush() {
    if (!word_.empty()) ++(*counts_)[word_];
    word_.clear();
  }

 private:
  Counts* counts_;
  std::string word_;
};

// Adds `word<TAB>count` lines to `counts`.
Status ParseCounts(const std::string& text, Counts* counts, size_t input) {
  size_t pos = 0, line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line;
    std::string_view l(text.data() + pos, end - pos);
    size_t tab = l.rfind('\t');
    if (tab == std::string_view::npos || tab == 0 || tab + 1 == l.size()) {
      return copse::InvalidArgument("input " + std::to_string(input) + " line " +
                                    std::to_string(line) + ": not `word<TAB>count`");
    }
    uint64_t n = std::stoull(std::string(l.substr(tab + 1)));
    (*counts)[std::string(l.substr(0, tab))] += n;
    pos = end + 1;
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, uint64_t>> Sorted(Counts&& counts) {
  std::vector<std::pair<std::string, uint64_t>> v(std::make_move_iterator(counts.begin()),
                                                  std::make_move_iterator(counts.end()));
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return v;
}

std::string Line(const std::pair<std::string, uint64_t>& wc) {
  return wc.first + "\t" + std::to_string(wc.second) + "\n";
}

Status Count(copse::Vertex& v) {
  Counts counts;
  WordCounter counter(&counts);
  for (size_t i = 0; i < v.inputs(); ++i) {
    COPSE_RETURN_IF_ERROR(v.Read(i, [&](std::span<const uint8_t> b) {
      counter.Feed(b);
      return Status::Ok();
    }));
    counter.Flush();
  }
  const int buckets = std::max(1, v.buckets());
  std::vector<std::string> out(static_cast<size_t>(buckets));
  const std::unique_ptr<copse::Partitioner> by_word = copse::HashPartitioner();
  for (const auto& [word, n] : counts) {
    out[static_cast<size_t>(by_word->Bucket(word, buckets))] += Line({word, n});
  }
  for (int b = 0; b < buckets; ++b) COPSE_RETURN_IF_ERROR(v.Write(b, out[b]));
  v.CountRecords(counts.size());
  return Status::Ok();
}

Status Sum(copse::Vertex& v) {
  Counts counts;
  for (size_t i = 0; i < v.inputs(); ++i) {
    std::string text;
    COPSE_RETURN_IF_ERROR(v.ReadAll(i, &text));
    COPSE_RETURN_IF_ERROR(ParseCounts(text, &counts, i));
  }
  std::string out;
  auto sorted = Sorted(std::move(counts));
  for (const auto& wc : sorted) out += Line(wc);
  v.CountRecords(sorted.size());
  return v.Write(0, out);
}

Status Merge(copse::Vertex& v) {
  Counts counts;
  for (size_t i = 0; i < v.inputs(); ++i) {
    std::string text;
    COPSE_RETURN_IF_ERROR(v.ReadAll(i, &text));
    COPSE_RETURN_IF_ERROR(ParseCounts(text, &counts, i));
  }
  auto sorted = Sorted(std::move(counts));
  const size_t buckets = static_cast<size_t>(std::max(1, v.buckets()));
  for (size_t b = 0; b < buckets; ++b) {
    size_t from = sorted.size() * b / buckets, to = sorted.size() * (b + 1) / buckets;
    std::string out;
    for (size_t k = from; k < to; ++k) out += Line(sorted[k]);
    COPSE_RETURN_IF_ERROR(v.Write(static_cast<int>(b), out));
  }
  v.CountRecords(sorted.size());
  return Status::Ok();
}

Status Write(copse::Vertex& v) {
  uint64_t lines = 0;
  for (size_t i = 0; i < v.inputs(); ++i) {
    std::string text;
    COPSE_RETURN_IF_ERROR(v.ReadAll(i, &text));
    lines += static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
    COPSE_RETURN_IF_ERROR(v.Write(0, text));
  }
  v.CountRecords(lines);
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t start = copse::apps::MarkStart();
  auto v = copse::Vertex::Open(argc, argv, start);
  if (!v.ok()) return copse::Vertex::FailEarly(v.status());
  std::string role = copse::apps::ParamsOf(**v).value("role", "");
  Status s;
  if (role == "count") {
    s = Count(**v);
  } else if (role == "sum") {
    s = Sum(**v);
  } else if (role == "merge") {
    s = Merge(**v);
  } else if (role == "write") {
    s = Write(**v);
  } else {
    s = copse::InvalidArgument("wordcount: params.role must be count, sum, merge or write, not '" +
                               role + "'");
  }
  return (*v)->Finish(s);
}

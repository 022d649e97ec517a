// prime: the Prime vertex program (docs/design.md §12, apps/catalog.h): inputs
// hold one decimal integer a line; the output is one line, the number of
// primes among them, each tested by the paper's naive test (trial division
// by every smaller integer). Its parameter "role":
//   count  counts the primes of its input partition; writes the count
//   total  adds the counts it gathers; writes the total as one line
#include <cstdint>
#include <string>
#include <string_view>

#include "apps/runtime/vertex_internal.h"
#include "common/text.h"

namespace {

using copse::Status;

// The paper's naive test (§5.1): trial division by every d from 2 to n − 1,
// O(n) for a prime, so that the job is compute-bound.
template <typename T>
bool IsPrimeNaive(T n) {
  if (n < 2) return false;
  for (T d = 2; d < n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

bool IsPrime(uint64_t n) {
  // 32-bit division is several times faster where it suffices.
  return n <= UINT32_MAX ? IsPrimeNaive(static_cast<uint32_t>(n)) : IsPrimeNaive(n);
}

// Calls `fn` on each non-empty line's integer; a line that is not one is an
// error naming it.
template <typename Fn>
Status ForEachInteger(const std::string& text, size_t input, Fn&& fn) {
  size_t pos = 0, line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line;
    std::string_view l(text.data() + pos, end - pos);
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.remove_suffix(1);
    if (!l.empty()) {
      uint64_t n = 0;
      for (char c : l) {
        if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10) {
          return copse::InvalidArgument("input " + std::to_string(input) + " line " +
                                        std::to_string(line) + ": '" + copse::Excerpt(l) +
                                        "' is not a non-negative decimal integer");
        }
        n = n * 10 + static_cast<uint64_t>(c - '0');
      }
      fn(n);
    }
    pos = end + 1;
  }
  return Status::Ok();
}

Status Count(copse::Vertex& v, bool total) {
  uint64_t sum = 0, records = 0;
  for (size_t i = 0; i < v.inputs(); ++i) {
    std::string text;
    COPSE_RETURN_IF_ERROR(v.ReadAll(i, &text));
    COPSE_RETURN_IF_ERROR(ForEachInteger(text, i, [&](uint64_t n) {
      sum += total ? n : (IsPrime(n) ? 1 : 0);
      ++records;
    }));
  }
  v.CountRecords(1);
  return v.Write(0, std::to_string(sum) + "\n");
}

}  // namespace

int main(int argc, char** argv) {
  int64_t start = copse::apps::MarkStart();
  auto v = copse::Vertex::Open(argc, argv, start);
  if (!v.ok()) return copse::Vertex::FailEarly(v.status());
  std::string role = copse::apps::ParamsOf(**v).value("role", "");
  Status s;
  if (role == "count" || role == "total") {
    s = Count(**v, role == "total");
  } else {
    s = copse::InvalidArgument("prime: params.role must be count or total, not '" + role + "'");
  }
  return (*v)->Finish(s);
}

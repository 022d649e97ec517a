#include "tests/harness/exposition.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <utility>

namespace copse::testing {
namespace {

bool NameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9'); }
bool LabelStart(char c) { return NameStart(c) && c != ':'; }
bool LabelChar(char c) { return NameChar(c) && c != ':'; }

bool ValidMetricName(const std::string& s) {
  if (s.empty() || !NameStart(s[0])) return false;
  for (char c : s) {
    if (!NameChar(c)) return false;
  }
  return true;
}

// A float as the format writes one: Go's ParseFloat syntax, or NaN, +Inf, -Inf.
bool ParseValue(const std::string& s, double* out) {
  if (s == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s == "+Inf" || s == "Inf") {
    *out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "-Inf") {
    *out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      return false;
    }
  }
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*out);
}

bool ParseTimestamp(const std::string& s) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// The family a sample belongs to, given the TYPEs seen: X_bucket, X_sum and
// X_count belong to histogram X; X_sum and X_count to summary X.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  if (types.count(name)) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    std::string sfx = suffix;
    if (name.size() <= sfx.size() || name.compare(name.size() - sfx.size(), sfx.size(), sfx) != 0)
      continue;
    std::string base = name.substr(0, name.size() - sfx.size());
    auto it = types.find(base);
    if (it == types.end()) continue;
    if (it->second == "histogram") return base;
    if (it->second == "summary" && sfx != "_bucket") return base;
  }
  return name;
}

class Parser {
 public:
  explicit Parser(Exposition* out) : out_(*out) {}

  void Error(int line, const std::string& what) {
    out_.errors.push_back(fmt::format("line {}: {}", line, what));
  }

  void Line(int n, const std::string& line) {
    if (line.empty()) return;
    if (line[0] == '#') {
      Comment(n, line);
      return;
    }
    Sample(n, line);
  }

  void Comment(int n, const std::string& line) {
    // "# HELP name text", "# TYPE name type"; anything else is a comment.
    if (line.rfind("# HELP ", 0) != 0 && line.rfind("# TYPE ", 0) != 0) return;
    bool help = line[2] == 'H';
    std::string rest = line.substr(7);
    size_t sp = rest.find(' ');
    std::string name = rest.substr(0, sp);
    std::string text = sp == std::string::npos ? "" : rest.substr(sp + 1);
    if (!ValidMetricName(name)) {
      Error(n, fmt::format("'{}' is not a metric name", name));
      return;
    }
    Enter(n, name);
    if (help) {
      if (out_.helps.count(name)) Error(n, fmt::format("a second HELP for {}", name));
      std::string plain;
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\') {
          plain += text[i];
          continue;
        }
        if (i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
          plain += text[i + 1] == 'n' ? '\n' : '\\';
          ++i;
        } else {
          Error(n, fmt::format("HELP text of {} has an escape other than \\\\ and \\n", name));
          break;
        }
      }
      out_.helps[name] = plain;
      return;
    }
    static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                 "untyped"};
    if (kTypes.count(text) == 0) {
      Error(n, fmt::format("TYPE of {} is '{}', not counter, gauge, histogram, summary or untyped",
                           name, text));
      return;
    }
    if (out_.types.count(name)) {
      Error(n, fmt::format("a second TYPE for {}", name));
      return;
    }
    if (sampled_.count(name) || sampled_.count(name + "_bucket") || sampled_.count(name + "_sum") ||
        sampled_.count(name + "_count")) {
      Error(n, fmt::format("TYPE of {} after its samples", name));
      return;
    }
    out_.types[name] = text;
  }

  // The lines of family `name` start or go on here.
  void Enter(int n, const std::string& family) {
    if (family == current_) return;
    if (finished_.count(family)) {
      Error(n, fmt::format("the lines of {} are not together", family));
    }
    if (!current_.empty()) finished_.insert(current_);
    current_ = family;
  }

  void Sample(int n, const std::string& line) {
    size_t i = 0;
    while (i < line.size() && NameChar(line[i])) ++i;
    PromSample s;
    s.name = line.substr(0, i);
    s.line = n;
    if (!ValidMetricName(s.name)) {
      Error(n, fmt::format("'{}' does not start with a metric name", line.substr(0, 40)));
      return;
    }
    if (i < line.size() && line[i] == '{') {
      ++i;
      if (!Labels(n, line, &i, &s)) return;
    }
    if (i >= line.size() || line[i] != ' ') {
      Error(n, fmt::format("{}: expected a space and a value", s.name));
      return;
    }
    std::string rest = line.substr(i + 1);
    size_t sp = rest.find(' ');
    std::string value = rest.substr(0, sp);
    if (!ParseValue(value, &s.value)) {
      Error(n, fmt::format("{}: '{}' is not a value", s.name, value));
      return;
    }
    if (sp != std::string::npos && !ParseTimestamp(rest.substr(sp + 1))) {
      Error(n, fmt::format("{}: '{}' is not a timestamp", s.name, rest.substr(sp + 1)));
      return;
    }
    std::string family = FamilyOf(s.name, out_.types);
    Enter(n, family);
    sampled_.insert(family);
    std::string series = s.name;
    for (const auto& [k, v] : s.labels) series += "\x1f" + k + "=" + v;
    if (!series_.insert(series).second) {
      Error(n, fmt::format("{}: the same series twice", s.name));
    }
    out_.samples.push_back(std::move(s));
  }

  bool Labels(int n, const std::string& line, size_t* at, PromSample* s) {
    size_t& i = *at;
    while (true) {
      if (i < line.size() && line[i] == '}') {
        ++i;
        return true;
      }
      size_t start = i;
      if (i >= line.size() || !LabelStart(line[i])) {
        Error(n, fmt::format("{}: expected a label name at column {}", s->name, i + 1));
        return false;
      }
      while (i < line.size() && LabelChar(line[i])) ++i;
      std::string key = line.substr(start, i - start);
      if (key.rfind("__", 0) == 0) Error(n, fmt::format("{}: label {} is reserved", s->name, key));
      if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
        Error(n, fmt::format("{}: expected =\" after label {}", s->name, key));
        return false;
      }
      i += 2;
      std::string value;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          value += c;
          continue;
        }
        if (i >= line.size() || (line[i] != '\\' && line[i] != '"' && line[i] != 'n')) {
          Error(n, fmt::format("{}: label {} has an escape other than \\\\, \\\" and \\n", s->name,
                               key));
          return false;
        }
        value += line[i] == 'n' ? '\n' : line[i];
        ++i;
      }
      if (!closed) {
        Error(n, fmt::format("{}: the value of label {} is not closed", s->name, key));
        return false;
      }
      if (!s->labels.emplace(key, value).second) {
        Error(n, fmt::format("{}: label {} twice", s->name, key));
      }
      if (i < line.size() && line[i] == ',')
        ++i;
      else if (i >= line.size() || line[i] != '}') {
        Error(n, fmt::format("{}: expected , or }} after label {}", s->name, key));
        return false;
      }
    }
  }

  // Rules that need a whole family: counters, histograms, summaries.
  void Families() {
    for (const PromSample& s : out_.samples) {
      std::string family = FamilyOf(s.name, out_.types);
      auto t = out_.types.find(family);
      std::string type = t == out_.types.end() ? "untyped" : t->second;
      if (type == "counter" && !(s.value >= 0)) {
        Error(s.line, fmt::format("counter {} is {}", s.name, s.value));
      }
      if (type == "histogram") Histogram(family, s);
      if (type == "summary") Summary(family, s);
    }
    for (auto& [key, h] : histograms_) {
      const std::string& family = key.first;
      if (h.buckets.empty() || !std::isinf(h.buckets.back().first)) {
        Error(h.line, fmt::format("histogram {}{}: no +Inf bucket", family, key.second));
      }
      if (!h.has_sum) Error(h.line, fmt::format("histogram {}{}: no _sum", family, key.second));
      if (!h.has_count) {
        Error(h.line, fmt::format("histogram {}{}: no _count", family, key.second));
      } else if (!h.buckets.empty() && h.buckets.back().second != h.count) {
        Error(h.line, fmt::format("histogram {}{}: _count {} is not the +Inf bucket's {}", family,
                                  key.second, h.count, h.buckets.back().second));
      }
      for (size_t b = 1; b < h.buckets.size(); ++b) {
        if (!(h.buckets[b].first > h.buckets[b - 1].first)) {
          Error(h.line, fmt::format("histogram {}{}: le {} after le {}", family, key.second,
                                    h.buckets[b].first, h.buckets[b - 1].first));
        }
        if (h.buckets[b].second < h.buckets[b - 1].second) {
          Error(h.line, fmt::format("histogram {}{}: bucket le={} holds {}, fewer than le={}'s {}",
                                    family, key.second, h.buckets[b].first, h.buckets[b].second,
                                    h.buckets[b - 1].first, h.buckets[b - 1].second));
        }
      }
    }
    for (auto& [key, q] : summaries_) {
      if (!q.first || !q.second) {
        Error(0, fmt::format("summary {}{}: needs a _sum and a _count", key.first, key.second));
      }
    }
  }

 private:
  struct Hist {
    std::vector<std::pair<double, double>> buckets;  // (le, count), in the text's order
    bool has_sum = false, has_count = false;
    double count = 0;
    int line = 0;
  };

  // The series a sample belongs to, without `drop` (le, quantile).
  static std::string SeriesKey(const PromSample& s, const char* drop) {
    std::string key = "{";
    for (const auto& [k, v] : s.labels) {
      if (k != drop) key += k + "=\"" + v + "\",";
    }
    return key + "}";
  }

  void Histogram(const std::string& family, const PromSample& s) {
    Hist& h = histograms_[{family, SeriesKey(s, "le")}];
    if (h.line == 0) h.line = s.line;
    if (s.name == family + "_bucket") {
      auto le = s.labels.find("le");
      double bound = 0;
      if (le == s.labels.end() || !ParseValue(le->second, &bound)) {
        Error(s.line, fmt::format("{}: a bucket without a valid le label", s.name));
        return;
      }
      h.buckets.push_back({bound, s.value});
    } else if (s.name == family + "_sum") {
      h.has_sum = true;
    } else if (s.name == family + "_count") {
      h.has_count = true;
      h.count = s.value;
    } else {
      Error(s.line, fmt::format("{} in histogram {}: not _bucket, _sum or _count", s.name, family));
    }
    if (s.name != family + "_bucket" && s.labels.count("le")) {
      Error(s.line, fmt::format("{}: le label outside a bucket", s.name));
    }
  }

  void Summary(const std::string& family, const PromSample& s) {
    auto& q = summaries_[{family, SeriesKey(s, "quantile")}];
    if (s.name == family) {
      auto it = s.labels.find("quantile");
      double v = 0;
      if (it == s.labels.end() || !ParseValue(it->second, &v) || v < 0 || v > 1) {
        Error(s.line, fmt::format("{}: a quantile label in [0, 1] is required", s.name));
      }
    } else if (s.name == family + "_sum") {
      q.first = true;
    } else if (s.name == family + "_count") {
      q.second = true;
    }
  }

  Exposition& out_;
  std::string current_;
  std::set<std::string> finished_;
  std::set<std::string> sampled_;
  std::set<std::string> series_;
  std::map<std::pair<std::string, std::string>, Hist> histograms_;
  std::map<std::pair<std::string, std::string>, std::pair<bool, bool>> summaries_;
};

}  // namespace

Exposition ParseExposition(const std::string& text) {
  Exposition out;
  Parser p(&out);
  int n = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    ++n;
    if (end == std::string::npos) {
      p.Error(n, "the text does not end with a newline");
      end = text.size();
    }
    p.Line(n, text.substr(at, end - at));
    at = end + 1;
  }
  p.Families();
  return out;
}

double SampleValue(const Exposition& e, const std::string& name,
                   const std::map<std::string, std::string>& labels) {
  for (const PromSample& s : e.samples) {
    if (s.name == name && s.labels == labels) return s.value;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double SampleSum(const Exposition& e, const std::string& name) {
  double sum = 0;
  bool any = false;
  for (const PromSample& s : e.samples) {
    if (s.name != name) continue;
    sum += s.value;
    any = true;
  }
  return any ? sum : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace copse::testing

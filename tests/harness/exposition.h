// A checker of the Prometheus text exposition format (version 0.0.4), for
// tests that scrape /metrics: it parses a scrape and lists every way it breaks
// the format's rules, by line.
//
//   - `# HELP name text` (text escapes only \\ and \n) and `# TYPE name
//     counter|gauge|histogram|summary|untyped`, at most one of each per
//     name, TYPE before the family's first sample; other `#` lines are
//     comments;
//   - samples `name{label="value",...} value [timestamp]`: names match
//     [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* and not
//     starting with "__", label values escape only \\, \" and \n, values are
//     floats (or NaN, +Inf, -Inf), timestamps integers;
//   - a family's lines are together; no series (name and labels) twice; no
//     label twice in one sample;
//   - a counter's samples are not negative; a histogram's series each have
//     _bucket samples with increasing `le` ending in +Inf and non-decreasing
//     counts, a _sum and a _count equal to the +Inf bucket; a summary's
//     quantiles are in [0, 1] with a _sum and a _count;
//   - the text ends with a newline.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace copse::testing {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;  // unescaped values
  double value = 0;
  int line = 0;
};

struct Exposition {
  std::vector<std::string> errors;           // "line N: what", empty when the text is valid
  std::map<std::string, std::string> types;  // family -> its TYPE
  std::map<std::string, std::string> helps;  // family -> its HELP text, unescaped
  std::vector<PromSample> samples;
};

Exposition ParseExposition(const std::string& text);

// The value of the sample `name` whose labels are exactly `labels`; NaN when
// there is none.
double SampleValue(const Exposition& e, const std::string& name,
                   const std::map<std::string, std::string>& labels = {});

// The sum of every sample `name` whatever its labels; NaN when there is none.
double SampleSum(const Exposition& e, const std::string& name);

}  // namespace copse::testing

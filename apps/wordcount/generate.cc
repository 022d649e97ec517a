// WordCount's input: text lines of 1 to 16 words drawn from a vocabulary of
// 50,000 made-up words (syllables spelling the word's rank) with Zipf
// frequencies (s = 1.1), as natural text is skewed.
#include "apps/generate.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "apps/gen_support.h"

namespace copse::apps {
namespace {

constexpr int kVocabulary = 50'000;

struct Vocabulary {
  std::vector<std::string> words;
  std::vector<double> cdf;  // cumulative Zipf weights, unnormalised
  Vocabulary() {
    const char* syllables[] = {"ka", "lo", "mi", "ne", "tu", "ra", "shi", "po", "em", "ul"};
    double sum = 0;
    for (int i = 0; i < kVocabulary; ++i) {
      std::string w;
      int x = i;
      do {
        w += syllables[x % 10];
        x /= 10;
      } while (x > 0);
      words.push_back(std::move(w));
      cdf.push_back(sum += 1.0 / std::pow(i + 1, 1.1));
    }
  }
};

}  // namespace

Status GenerateWordCount(const GenPartition& p, const ChunkSink& sink) {
  static const Vocabulary vocabulary;
  const int64_t target = p.file_bytes.at(static_cast<size_t>(p.file));
  GenRandom rng = GenRandom::For(p);
  Pieces out(sink, 16 * 16);  // 16 words of at most 15 letters, separators
  const double total = vocabulary.cdf.back();
  while (out.written() < target) {
    int n = 1 + static_cast<int>(rng.Below(16));
    for (int k = 0; k < n; ++k) {
      auto it = std::lower_bound(vocabulary.cdf.begin(), vocabulary.cdf.end(), rng.Unit() * total);
      size_t w =
          std::min<size_t>(static_cast<size_t>(it - vocabulary.cdf.begin()), kVocabulary - 1);
      if (k > 0) out.buf() += ' ';
      out.buf() += vocabulary.words[w];
    }
    out.buf() += '\n';
    COPSE_RETURN_IF_ERROR(out.RecordDone());
  }
  return out.Flush();
}

}  // namespace copse::apps

// WordCount's input: text lines of 1 to 16 words drawn from a vocabulary of
// 50,000 made-up words (syllables spelling the word's rank) with Zipf
// frequencies (s = 1.1), as natural text is skewed.
#include "apps/generate.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace copse::apps {
namespace {

constexpr int kVocabulary = 50'000;
constexpr size_t kPiece = 1 << 20;

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

// A uniform double in [0, 1) from 53 random bits (portable across standard
// libraries, unlike the distributions).
double Unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

Status GenerateWordCount(const GenPartition& p, const ChunkSink& sink) {
  static const Vocabulary vocabulary;
  const int64_t target = p.file_bytes.at(static_cast<size_t>(p.file));
  std::mt19937_64 rng(p.seed * 1'000'003 + static_cast<uint64_t>(p.partition));
  std::string piece;
  int64_t written = 0;
  const double total = vocabulary.cdf.back();
  while (written < target) {
    int n = 1 + static_cast<int>(rng() % 16);
    for (int k = 0; k < n; ++k) {
      auto it = std::lower_bound(vocabulary.cdf.begin(), vocabulary.cdf.end(), Unit(rng) * total);
      size_t w =
          std::min<size_t>(static_cast<size_t>(it - vocabulary.cdf.begin()), kVocabulary - 1);
      if (k > 0) piece += ' ';
      piece += vocabulary.words[w];
    }
    piece += '\n';
    if (piece.size() >= kPiece || written + static_cast<int64_t>(piece.size()) >= target) {
      written += static_cast<int64_t>(piece.size());
      COPSE_RETURN_IF_ERROR(sink(piece));
      piece.clear();
    }
  }
  return Status::Ok();
}

}  // namespace copse::apps

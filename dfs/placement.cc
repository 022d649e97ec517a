#include "dfs/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

namespace copse::dfs {
namespace {

std::vector<std::string_view> SplitWords(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '\t')) ++i;
    size_t j = i;
    // A colocate path may contain ':' only after the mode word; keep it whole.
    bool path = !out.empty() && out[0] == "colocate";
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && (path || text[j] != ':')) ++j;
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

const PlacementComputer* Find(const std::vector<PlacementComputer>& live, const std::string& name) {
  for (const PlacementComputer& c : live)
    if (c.name == name) return &c;
  return nullptr;
}

// A uniformly random element of `pool`, or nullptr when it is empty.
const PlacementComputer* Pick(const std::vector<const PlacementComputer*>& pool,
                              std::mt19937_64& rng) {
  if (pool.empty()) return nullptr;
  std::uniform_int_distribution<size_t> d(0, pool.size() - 1);
  return pool[d(rng)];
}

}  // namespace

std::string PlacementMode::ToString() const {
  switch (kind) {
    case Kind::kWriter:
      return "writer";
    case Kind::kRandom:
      return "random";
    case Kind::kColocate:
      return "colocate " + colocate_path;
    case Kind::kConfine:
      return fmt::format("confine {} {}", confine_count, confine_rack);
  }
  return "writer";
}

Result<PlacementMode> ParsePlacementMode(std::string_view text) {
  std::vector<std::string_view> w = SplitWords(text);
  const char* kForms =
      "expected a placement mode: writer, random, 'colocate PATH' or 'confine N RACK'";
  if (w.empty()) return InvalidArgument(std::string(kForms) + ", got an empty string");
  PlacementMode m;
  if (w[0] == "writer" && w.size() == 1) return m;
  if (w[0] == "random" && w.size() == 1) {
    m.kind = PlacementMode::Kind::kRandom;
    return m;
  }
  if (w[0] == "colocate" && w.size() == 2) {
    m.kind = PlacementMode::Kind::kColocate;
    m.colocate_path = std::string(w[1]);
    return m;
  }
  if (w[0] == "confine" && w.size() == 3) {
    int n = 0;
    auto [p, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), n);
    if (ec != std::errc() || p != w[1].data() + w[1].size() || n < 1) {
      return InvalidArgument(
          fmt::format("placement '{}': N in 'confine N RACK' must be a "
                      "positive number of computers",
                      text));
    }
    m.kind = PlacementMode::Kind::kConfine;
    m.confine_count = n;
    m.confine_rack = std::string(w[2]);
    return m;
  }
  return InvalidArgument(fmt::format("placement '{}': {}", text, kForms));
}

std::vector<std::string> CompleteReplicaSet(const std::vector<PlacementComputer>& live,
                                            std::vector<std::string> chosen, int replication,
                                            const std::set<std::string>& exclude,
                                            std::mt19937_64& rng) {
  while (static_cast<int>(chosen.size()) < replication) {
    std::map<std::string, int> per_rack;
    for (const std::string& c : chosen)
      if (const PlacementComputer* pc = Find(live, c)) per_rack[pc->rack]++;
    std::vector<const PlacementComputer*> free;
    for (const PlacementComputer& c : live) {
      if (exclude.count(c.name) || std::find(chosen.begin(), chosen.end(), c.name) != chosen.end())
        continue;
      free.push_back(&c);
    }
    if (free.empty()) break;
    auto in_rack = [&](const std::string& rack, bool same) {
      std::vector<const PlacementComputer*> out;
      for (const PlacementComputer* c : free)
        if ((c->rack == rack) == same) out.push_back(c);
      return out;
    };
    const PlacementComputer* pick = nullptr;
    const PlacementComputer* first = chosen.empty() ? nullptr : Find(live, chosen[0]);
    const PlacementComputer* second = chosen.size() < 2 ? nullptr : Find(live, chosen[1]);
    if (chosen.size() == 1 && first) {
      pick = Pick(in_rack(first->rack, false), rng);  // another rack
    } else if (chosen.size() == 2 && first && second) {
      pick = first->rack != second->rack ? Pick(in_rack(second->rack, true), rng)
                                         : Pick(in_rack(second->rack, false), rng);
    } else if (chosen.size() >= 3) {
      // Spread further replicas over the racks holding the fewest.
      int fewest = INT32_MAX;
      for (const PlacementComputer* c : free) fewest = std::min(fewest, per_rack[c->rack]);
      std::vector<const PlacementComputer*> pool;
      for (const PlacementComputer* c : free)
        if (per_rack[c->rack] == fewest) pool.push_back(c);
      pick = Pick(pool, rng);
    }
    if (!pick) pick = Pick(free, rng);
    chosen.push_back(pick->name);
  }
  return chosen;
}

namespace {

Result<std::vector<std::vector<std::string>>> PlaceConfined(
    const std::vector<PlacementComputer>& live, const PlacementRequest& req, std::mt19937_64& rng) {
  const PlacementMode& m = req.mode;
  std::vector<std::string> in_rack;
  for (const PlacementComputer& c : live)
    if (c.rack == m.confine_rack) in_rack.push_back(c.name);
  if (in_rack.empty()) {
    return FailedPrecondition(
        fmt::format("placement '{}': rack '{}' has no live computer (is it in the config?)",
                    m.ToString(), m.confine_rack));
  }
  if (m.confine_count < req.replication) {
    return InvalidArgument(fmt::format("placement '{}': {} computers cannot hold {} replicas",
                                       m.ToString(), m.confine_count, req.replication));
  }
  if (static_cast<int>(in_rack.size()) < m.confine_count) {
    return FailedPrecondition(
        fmt::format("placement '{}': not enough computers: rack {} has {} live computer(s)",
                    m.ToString(), m.confine_rack, in_rack.size()));
  }
  std::shuffle(in_rack.begin(), in_rack.end(), rng);
  in_rack.resize(static_cast<size_t>(m.confine_count));
  std::vector<std::vector<std::string>> out;
  for (int p = 0; p < req.partitions; ++p) {
    std::vector<std::string> set;
    for (int r = 0; r < req.replication; ++r)
      set.push_back(in_rack[static_cast<size_t>((p + r) % m.confine_count)]);
    out.push_back(std::move(set));
  }
  return out;
}

}  // namespace

Result<std::vector<std::vector<std::string>>> PlaceFile(const std::vector<PlacementComputer>& live,
                                                        const PlacementRequest& req,
                                                        std::mt19937_64& rng) {
  if (req.replication < 1)
    return InvalidArgument(fmt::format("replication must be at least 1, got {}", req.replication));
  if (req.partitions < 1)
    return InvalidArgument(
        fmt::format("a file needs at least 1 partition, got {}", req.partitions));
  if (static_cast<int>(live.size()) < req.replication) {
    return FailedPrecondition(fmt::format(
        "not enough computers for the requested replication: {} replicas need {} live "
        "computers, {} {} live",
        req.replication, req.replication, live.size(), live.size() == 1 ? "is" : "are"));
  }
  if (req.mode.kind == PlacementMode::Kind::kConfine) return PlaceConfined(live, req, rng);
  if (req.mode.kind == PlacementMode::Kind::kColocate && req.colocate_sets.empty()) {
    return InvalidArgument(fmt::format(
        "placement '{}': that file has no partitions to colocate with", req.mode.ToString()));
  }
  std::vector<const PlacementComputer*> all;
  for (const PlacementComputer& c : live) all.push_back(&c);
  std::vector<std::vector<std::string>> out;
  for (int p = 0; p < req.partitions; ++p) {
    std::vector<std::string> start;
    switch (req.mode.kind) {
      case PlacementMode::Kind::kWriter:
        start.push_back(Find(live, req.writer) ? req.writer : Pick(all, rng)->name);
        break;
      case PlacementMode::Kind::kRandom:
        start.push_back(Pick(all, rng)->name);
        break;
      case PlacementMode::Kind::kColocate:
        for (const std::string& c :
             req.colocate_sets[static_cast<size_t>(p) % req.colocate_sets.size()]) {
          if (Find(live, c) && std::find(start.begin(), start.end(), c) == start.end() &&
              static_cast<int>(start.size()) < req.replication)
            start.push_back(c);
        }
        break;
      case PlacementMode::Kind::kConfine:
        break;
    }
    out.push_back(CompleteReplicaSet(live, std::move(start), req.replication, {}, rng));
  }
  return out;
}

}  // namespace copse::dfs

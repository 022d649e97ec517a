#include "rootjob/locality.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace copse::rootjob {

namespace {

// Indices whose bytes exceed `threshold`, most bytes first, at most `max`.
template <typename Map>
std::vector<std::pair<int, int64_t>> Preferred(const Map& held, double threshold, int max) {
  std::vector<std::pair<int, int64_t>> out;
  for (const auto& [index, bytes] : held) {
    if (static_cast<double>(bytes) > threshold) out.emplace_back(index, bytes);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (static_cast<int>(out.size()) > max) out.resize(max);
  return out;
}

}  // namespace

scheduler::TaskLocality ComputeLocality(const std::vector<InputPiece>& pieces,
                                        const std::vector<int>& rack_of, int num_racks,
                                        const LocalityOptions& options) {
  int64_t total = 0;
  std::map<int, int64_t> local;  // computer -> bytes held there
  std::vector<int64_t> in_rack(num_racks, 0);
  for (const InputPiece& p : pieces) {
    total += p.bytes;
    std::set<int> computers(p.replicas.begin(), p.replicas.end());
    std::set<int> racks;
    for (int c : computers) {
      local[c] += p.bytes;
      racks.insert(rack_of[c]);
    }
    for (int r : racks) in_rack[r] += p.bytes;
  }
  scheduler::TaskLocality loc;
  if (total == 0) return loc;
  int64_t least = *std::min_element(in_rack.begin(), in_rack.end());
  loc.worst = {least, total - least};
  double tc = options.delta_c * static_cast<double>(total);
  for (const auto& [c, bytes] : Preferred(local, tc, options.max_entries)) {
    int64_t rack_bytes = in_rack[rack_of[c]];
    loc.computers.push_back({c, {rack_bytes - bytes, total - rack_bytes}});
  }
  std::map<int, int64_t> racks;
  for (int r = 0; r < num_racks; ++r) racks[r] = in_rack[r];
  double tr = options.delta_r * static_cast<double>(total);
  for (const auto& [r, bytes] : Preferred(racks, tr, options.max_entries)) {
    loc.racks.push_back({r, {bytes, total - bytes}});
  }
  return loc;
}

std::vector<PlannedRead> PlanReads(const std::vector<InputPiece>& pieces, int computer,
                                   const std::vector<int>& rack_of) {
  std::vector<PlannedRead> reads;
  reads.reserve(pieces.size());
  int rack = rack_of[computer];
  for (const InputPiece& p : pieces) {
    PlannedRead r{p.bytes, p.replicas.front(), ReadLevel::kCore};
    if (std::find(p.replicas.begin(), p.replicas.end(), computer) != p.replicas.end()) {
      r.source = computer;
      r.level = ReadLevel::kLocal;
    } else {
      for (int c : p.replicas) {
        if (rack_of[c] == rack) {
          r.source = c;
          r.level = ReadLevel::kRack;
          break;
        }
      }
    }
    reads.push_back(r);
  }
  return reads;
}

}  // namespace copse::rootjob

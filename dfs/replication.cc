#include "dfs/replication.h"

#include <algorithm>

namespace copse::dfs {
namespace {

const PlacementComputer* Find(const std::vector<PlacementComputer>& list, const std::string& name) {
  for (const PlacementComputer& c : list)
    if (c.name == name) return &c;
  return nullptr;
}

template <typename T>
const T* PickRandom(const std::vector<const T*>& pool, std::mt19937_64& rng) {
  if (pool.empty()) return nullptr;
  std::uniform_int_distribution<size_t> d(0, pool.size() - 1);
  return pool[d(rng)];
}

struct Short {
  const ReplicatedBlock* block;
  std::vector<std::string> live;  // live replicas (possible sources), draining ones included
  int staying;                    // live replicas not on draining computers
  int missing;
};

}  // namespace

std::vector<CopyTask> PlanCopies(const std::vector<ReplicatedBlock>& blocks,
                                 const ReplicationState& state, std::mt19937_64& rng) {
  std::vector<Short> shorts;
  for (const ReplicatedBlock& b : blocks) {
    if (b.scratch) continue;
    int counted = 0, staying = 0;
    std::vector<std::string> live;
    for (const std::string& r : b.replicas) {
      const bool leaving = state.draining.count(r) > 0;
      counted += state.counted.count(r) > 0 && !leaving;
      if (Find(state.live, r)) {
        live.push_back(r);
        staying += !leaving;
      }
    }
    auto flight = state.in_flight.find(b.id);
    int pending = flight == state.in_flight.end() ? 0 : static_cast<int>(flight->second.size());
    int missing = b.replication - counted - pending;
    if (missing > 0 && !live.empty()) shorts.push_back({&b, std::move(live), staying, missing});
  }
  std::stable_sort(shorts.begin(), shorts.end(), [](const Short& a, const Short& b) {
    if (a.staying != b.staying) return a.staying < b.staying;
    return a.block->id < b.block->id;
  });
  std::map<std::string, int> busy = state.busy;
  std::vector<CopyTask> out;
  for (const Short& s : shorts) {
    const ReplicatedBlock& b = *s.block;
    std::vector<std::string> holders = s.live;  // live replicas plus targets chosen so far
    if (auto f = state.in_flight.find(b.id); f != state.in_flight.end())
      holders.insert(holders.end(), f->second.begin(), f->second.end());
    auto avoid = state.avoid.find(b.id);
    for (int k = 0; k < s.missing; ++k) {
      std::set<std::string> racks;
      for (const std::string& h : holders) {
        const PlacementComputer* c = Find(state.live, h);
        if (c && !state.draining.count(h)) racks.insert(c->rack);
      }
      std::vector<const PlacementComputer*> pool, other_rack;
      for (const PlacementComputer& c : state.live) {
        if (state.draining.count(c.name)) continue;
        if (std::find(b.replicas.begin(), b.replicas.end(), c.name) != b.replicas.end()) continue;
        if (std::find(holders.begin(), holders.end(), c.name) != holders.end()) continue;
        if (avoid != state.avoid.end() && avoid->second.count(c.name)) continue;
        if (busy[c.name] >= state.max_copies_per_computer) continue;
        if (!b.confine_rack.empty() && c.rack != b.confine_rack) continue;
        pool.push_back(&c);
        if (!racks.count(c.rack)) other_rack.push_back(&c);
      }
      bool need_other_rack = racks.size() < 2 && b.confine_rack.empty();
      const PlacementComputer* target = need_other_rack && !other_rack.empty()
                                            ? PickRandom(other_rack, rng)
                                            : PickRandom(pool, rng);
      if (!target) break;
      // Sources by preference: staying and in the target's rack, staying,
      // draining and in the target's rack, draining.
      std::vector<const PlacementComputer*> tiers[4];
      for (const std::string& r : s.live) {
        const PlacementComputer* c = Find(state.live, r);
        if (!c || busy[c->name] >= state.max_copies_per_computer) continue;
        tiers[(state.draining.count(r) ? 2 : 0) + (c->rack == target->rack ? 0 : 1)].push_back(c);
      }
      const PlacementComputer* source = nullptr;
      for (const auto& tier : tiers) {
        if (!source) source = PickRandom(tier, rng);
      }
      if (!source) break;
      busy[source->name]++;
      busy[target->name]++;
      holders.push_back(target->name);
      out.push_back({b.id, b.size, source->name, target->name, static_cast<int>(s.live.size())});
    }
  }
  return out;
}

std::vector<TrimTask> PlanTrims(const std::vector<ReplicatedBlock>& blocks,
                                const std::vector<PlacementComputer>& usable,
                                const std::set<std::string>& draining) {
  std::vector<TrimTask> out;
  for (const ReplicatedBlock& b : blocks) {
    if (b.scratch) continue;
    std::vector<const PlacementComputer*> live;
    for (const std::string& r : b.replicas) {
      const PlacementComputer* c = Find(usable, r);
      if (c && !draining.count(r)) live.push_back(c);
    }
    while (static_cast<int>(live.size()) > b.replication) {
      std::map<std::string, int> per_rack;
      for (const PlacementComputer* c : live) per_rack[c->rack]++;
      // The most crowded rack loses one; among its computers, the copy made
      // last (the end of the replica list) goes.
      std::string rack;
      int most = 0;
      for (const auto& [r, n] : per_rack) {
        if (n > most) {
          most = n;
          rack = r;
        }
      }
      for (size_t i = live.size(); i-- > 0;) {
        if (live[i]->rack != rack) continue;
        out.push_back({b.id, live[i]->name});
        live.erase(live.begin() + static_cast<long>(i));
        break;
      }
    }
  }
  return out;
}

}  // namespace copse::dfs

#include "scheduler/flow/dimacs.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace copse::flow {

namespace {

// Concatenates its arguments (a stream, not operator+, which trips a GCC 12
// -Wrestrict false positive at -O3).
template <typename... Args>
std::string Cat(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  return s.str();
}

Status LineError(std::string_view origin, int line, const std::string& what) {
  return InvalidArgument(Cat(origin, ":", line, ": ", what));
}

// Splits `line` into whitespace-separated fields.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool ParseInt(std::string_view s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

Status ParseNumbers(const std::vector<std::string_view>& f, size_t count, std::string_view origin,
                    int line, int64_t* out) {
  if (f.size() != count + 1) {
    return LineError(origin, line,
                     Cat("'", f[0], "' line needs ", count, " numbers, found ", f.size() - 1));
  }
  for (size_t i = 0; i < count; ++i) {
    if (!ParseInt(f[i + 1], out[i])) {
      return LineError(origin, line, Cat("'", f[i + 1], "' is not an integer"));
    }
  }
  return Status::Ok();
}

Status ParseLine(std::string_view text, int line, std::string_view origin, bool& seen_p,
                 DimacsProblem& p) {
  std::vector<std::string_view> f = Fields(text);
  if (f.empty() || f[0] == "c") return Status::Ok();
  if (f[0] == "p") {
    if (seen_p) return LineError(origin, line, "second 'p' line");
    if (f.size() != 4 || f[1] != "min") {
      return LineError(origin, line, "expected 'p min NODES ARCS'");
    }
    int64_t v[2];
    if (!ParseInt(f[2], v[0]) || !ParseInt(f[3], v[1]) || v[0] < 0 || v[1] < 0) {
      return LineError(origin, line, "bad node or arc count");
    }
    p.declared_nodes = v[0];
    p.declared_arcs = v[1];
    seen_p = true;
    return Status::Ok();
  }
  if (!seen_p) return LineError(origin, line, Cat("'", f[0], "' before the 'p' line"));
  if (f[0] == "n") {
    int64_t v[2];
    COPSE_RETURN_IF_ERROR(ParseNumbers(f, 2, origin, line, v));
    if (v[0] <= 0) return LineError(origin, line, "node ids must be positive");
    p.supply[v[0]] += v[1];
    return Status::Ok();
  }
  if (f[0] == "a") {
    int64_t v[5];
    COPSE_RETURN_IF_ERROR(ParseNumbers(f, 5, origin, line, v));
    if (v[0] <= 0 || v[1] <= 0) return LineError(origin, line, "node ids must be positive");
    if (v[2] < 0 || v[3] < v[2]) {
      return LineError(origin, line, "need 0 <= lower bound <= capacity");
    }
    p.arcs.push_back({v[0], v[1], v[2], v[3], v[4], line});
    p.supply.try_emplace(v[0], 0);
    p.supply.try_emplace(v[1], 0);
    return Status::Ok();
  }
  return LineError(origin, line, Cat("unknown line type '", f[0], "'"));
}

// Copies the items of `in` into `out` ordered by key(item) < bound, keeping
// their order among equal keys.
template <typename Key>
void StableCountingSort(const std::vector<uint32_t>& in, uint32_t bound, Key key,
                        std::vector<uint32_t>& count, std::vector<uint32_t>& out) {
  count.assign(bound + 1, 0);
  for (uint32_t x : in) ++count[key(x) + 1];
  for (uint32_t k = 0; k < bound; ++k) count[k + 1] += count[k];
  out.resize(in.size());
  for (uint32_t x : in) out[count[key(x)]++] = x;
}

// Orders `in` by (tail, head) into `out`, keeping their order within a pair.
template <typename Tail, typename Head>
void SortByEnds(SnapshotScratch& s, const std::vector<uint32_t>& in, uint32_t bound, Tail tail,
                Head head, std::vector<uint32_t>& out) {
  StableCountingSort(in, bound, head, s.count, s.sorted_tmp);
  StableCountingSort(s.sorted_tmp, bound, tail, s.count, out);
}

uint64_t EndsKey(NodeId tail, NodeId head) { return (uint64_t{tail} << 32) | head; }

// Removes the nodes that `next` lacks, then adds or updates the others in id
// order with their supply after moving the arcs' lower bounds out of them;
// fills s.tail and s.head with the graph ends of next's arcs.
void SyncNodes(LoadedProblem& l, const DimacsProblem& next) {
  FlowGraph& g = l.graph;
  SnapshotScratch& s = l.scratch;
  for (auto it = l.node_of.begin(); it != l.node_of.end();) {
    if (next.supply.count(it->first) == 0) {
      g.RemoveNode(it->second);
      it = l.node_of.erase(it);
    } else {
      ++it;
    }
  }
  // Lower bounds are rare: their supply shifts, by node id, merged below.
  s.shift.clear();
  for (const DimacsArc& a : next.arcs) {
    if (a.low == 0) continue;
    s.shift.push_back({a.tail, -a.low});
    s.shift.push_back({a.head, a.low});
  }
  std::sort(s.shift.begin(), s.shift.end());
  size_t k = 0;
  for (auto [id, supply] : next.supply) {
    for (; k < s.shift.size() && s.shift[k].first == id; ++k) supply += s.shift[k].second;
    auto [it, added] = l.node_of.try_emplace(id, kNoId);
    if (added) {
      it->second = g.AddNode(supply);
    } else {
      g.SetSupply(it->second, supply);
    }
  }
  s.tail.resize(next.arcs.size());
  s.head.resize(next.arcs.size());
  for (size_t i = 0; i < next.arcs.size(); ++i) {
    s.tail[i] = l.node_of.find(next.arcs[i].tail)->second;
    s.head[i] = l.node_of.find(next.arcs[i].head)->second;
  }
}

// Pairs next's arcs with the graph's live arcs of l.arc_of that have the same
// ends, the k-th with the k-th: s.arc_of[i] is arc i's match or kNoId, and
// s.stale lists the graph arcs left unpaired.
void MatchArcs(LoadedProblem& l, const DimacsProblem& next) {
  const FlowGraph& g = l.graph;
  SnapshotScratch& s = l.scratch;
  const uint32_t bound = g.node_id_bound();
  s.unsorted.clear();
  for (ArcId a : l.arc_of) {
    if (g.IsArc(a)) s.unsorted.push_back(a);
  }
  SortByEnds(
      s, s.unsorted, bound, [&](uint32_t a) { return g.tail(a); },
      [&](uint32_t a) { return g.head(a); }, s.old_sorted);
  s.unsorted.resize(next.arcs.size());
  for (uint32_t i = 0; i < s.unsorted.size(); ++i) s.unsorted[i] = i;
  SortByEnds(
      s, s.unsorted, bound, [&](uint32_t i) { return s.tail[i]; },
      [&](uint32_t i) { return s.head[i]; }, s.next_sorted);
  s.arc_of.assign(next.arcs.size(), kNoId);
  s.stale.clear();
  size_t i = 0, j = 0;
  while (i < s.old_sorted.size() || j < s.next_sorted.size()) {
    constexpr uint64_t kEnd = ~uint64_t{0};
    uint32_t a = i < s.old_sorted.size() ? s.old_sorted[i] : 0;
    uint32_t b = j < s.next_sorted.size() ? s.next_sorted[j] : 0;
    uint64_t old_key = i < s.old_sorted.size() ? EndsKey(g.tail(a), g.head(a)) : kEnd;
    uint64_t next_key = j < s.next_sorted.size() ? EndsKey(s.tail[b], s.head[b]) : kEnd;
    if (old_key == next_key) {
      s.arc_of[b] = a;
      ++i, ++j;
    } else if (old_key < next_key) {
      s.stale.push_back(a);
      ++i;
    } else {
      ++j;
    }
  }
}

}  // namespace

Result<DimacsProblem> ReadDimacs(std::istream& in, std::string_view origin) {
  DimacsProblem p;
  bool seen_p = false;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    COPSE_RETURN_IF_ERROR(ParseLine(text, line, origin, seen_p, p));
  }
  if (!seen_p) return LineError(origin, line, "no 'p min' line");
  if (static_cast<int64_t>(p.arcs.size()) != p.declared_arcs) {
    return LineError(
        origin, line,
        Cat("the 'p' line declares ", p.declared_arcs, " arcs but the file has ", p.arcs.size()));
  }
  if (static_cast<int64_t>(p.supply.size()) > p.declared_nodes) {
    return LineError(origin, line,
                     Cat("the 'p' line declares ", p.declared_nodes, " nodes but the file names ",
                         p.supply.size()));
  }
  return p;
}

Result<LoadedProblem> LoadDimacs(const DimacsProblem& p, std::string_view origin) {
  LoadedProblem out;
  auto changes = ApplySnapshot(out, p, origin);
  if (!changes.ok()) return changes.status();
  return out;
}

Result<size_t> ApplySnapshot(LoadedProblem& l, const DimacsProblem& next, std::string_view origin) {
  FlowGraph& g = l.graph;
  SnapshotScratch& s = l.scratch;
  SyncNodes(l, next);
  MatchArcs(l, next);
  l.cost_offset = 0;
  for (size_t i = 0; i < next.arcs.size(); ++i) {
    const DimacsArc& a = next.arcs[i];
    if (s.arc_of[i] != kNoId) {
      g.SetCost(s.arc_of[i], a.cost);
      g.SetCapacity(s.arc_of[i], a.cap - a.low);
    } else {
      s.arc_of[i] = g.AddArc(s.tail[i], s.head[i], a.cap - a.low, a.cost);
    }
    l.cost_offset += a.low * a.cost;
  }
  for (ArcId a : s.stale) g.RemoveArc(a);
  l.arc_of.swap(s.arc_of);
  (void)origin;
  return g.change_count();
}

void WriteDimacs(const FlowGraph& g, std::ostream& out, std::string_view comment) {
  std::ostringstream buf;
  if (!comment.empty()) buf << "c " << comment << "\n";
  buf << "p min " << g.node_id_bound() << " " << g.arc_count() << "\n";
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (g.IsNode(v) && g.supply(v) != 0) buf << "n " << v + 1 << " " << g.supply(v) << "\n";
  }
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!g.IsArc(a)) continue;
    buf << "a " << g.tail(a) + 1 << " " << g.head(a) + 1 << " 0 " << g.capacity(a) << " "
        << g.cost(a) << "\n";
  }
  out << buf.str();
}

}  // namespace copse::flow

#include "scheduler/flow/dimacs.h"

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

// Supplies after moving each arc's lower bound out of the arc.
std::map<int64_t, int64_t> EffectiveSupplies(const DimacsProblem& p) {
  std::map<int64_t, int64_t> s = p.supply;
  for (const DimacsArc& a : p.arcs) {
    s[a.tail] -= a.low;
    s[a.head] += a.low;
  }
  return s;
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
  for (const auto& [id, s] : EffectiveSupplies(p)) out.node_of[id] = out.graph.AddNode(s);
  for (const DimacsArc& a : p.arcs) {
    out.arc_of.push_back(
        out.graph.AddArc(out.node_of[a.tail], out.node_of[a.head], a.cap - a.low, a.cost));
    out.cost_offset += a.low * a.cost;
  }
  (void)origin;
  return out;
}

Result<size_t> ApplySnapshot(LoadedProblem& l, const DimacsProblem& next, std::string_view origin) {
  FlowGraph& g = l.graph;
  std::map<int64_t, int64_t> supplies = EffectiveSupplies(next);
  for (auto it = l.node_of.begin(); it != l.node_of.end();) {
    if (supplies.count(it->first) == 0) {
      g.RemoveNode(it->second);
      it = l.node_of.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [id, s] : supplies) {
    auto it = l.node_of.find(id);
    if (it == l.node_of.end()) {
      l.node_of[id] = g.AddNode(s);
    } else {
      g.SetSupply(it->second, s);
    }
  }
  // Current arcs by (tail, head), in order.
  std::map<std::pair<NodeId, NodeId>, std::vector<ArcId>> current;
  for (ArcId a : l.arc_of) {
    if (g.IsArc(a)) current[{g.tail(a), g.head(a)}].push_back(a);
  }
  std::map<std::pair<NodeId, NodeId>, size_t> used;
  std::vector<ArcId> arc_of;
  l.cost_offset = 0;
  for (const DimacsArc& a : next.arcs) {
    std::pair<NodeId, NodeId> key{l.node_of[a.tail], l.node_of[a.head]};
    size_t k = used[key]++;
    auto it = current.find(key);
    if (it != current.end() && k < it->second.size()) {
      ArcId id = it->second[k];
      g.SetCost(id, a.cost);
      g.SetCapacity(id, a.cap - a.low);
      arc_of.push_back(id);
    } else {
      arc_of.push_back(g.AddArc(key.first, key.second, a.cap - a.low, a.cost));
    }
    l.cost_offset += a.low * a.cost;
  }
  for (auto& [key, ids] : current) {
    for (size_t k = used[key]; k < ids.size(); ++k) g.RemoveArc(ids[k]);
  }
  l.arc_of = std::move(arc_of);
  (void)origin;
  return g.change_count();
}

void WriteDimacs(const FlowGraph& g, std::ostream& out, std::string_view comment) {
  std::vector<int64_t> number(g.node_id_bound(), 0);
  int64_t n = 0;
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (g.IsNode(v)) number[v] = ++n;
  }
  std::ostringstream buf;
  if (!comment.empty()) buf << "c " << comment << "\n";
  buf << "p min " << n << " " << g.arc_count() << "\n";
  for (NodeId v = 0; v < g.node_id_bound(); ++v) {
    if (g.IsNode(v) && g.supply(v) != 0) buf << "n " << number[v] << " " << g.supply(v) << "\n";
  }
  for (ArcId a = 0; a < g.arc_id_bound(); ++a) {
    if (!g.IsArc(a)) continue;
    buf << "a " << number[g.tail(a)] << " " << number[g.head(a)] << " 0 " << g.capacity(a) << " "
        << g.cost(a) << "\n";
  }
  out << buf.str();
}

}  // namespace copse::flow

// pagerank: the PageRank vertex program (docs/design.md §12, apps/catalog.h,
// docs/apps/pagerank.md). The graph is text, one line per vertex:
//   v<TAB>t1 t2 ... tk
// k ≥ 0 (the tab is always there), targets separated by single spaces, ids
// decimal 0..V−1, every vertex on exactly one line; multi-edges and
// self-loops count as edges. Vertex v lives in partition v mod P. With d the
// damping and D_t the rank held by the dangling vertices (out-degree 0):
//   r_0(v)     = 1/V
//   r_{t+1}(v) = (1−d)/V + d·(Σ_{u→v} r_t(u)/outdeg(u) + D_t/V)
// The output is r_I as `v<TAB>rank` lines (rank as "%.17g"): output
// partition j holds graph partition j's vertices, ascending.
//
// Its parameters: "role", "iteration" i (1..I), "iterations" I, "damping" d.
//   phase1  reads graph partition p (its inputs: the graph pointwise, then,
//           for i > 1, phase2.(i−1)[p]'s ranks r_{i−1}); writes into bucket j,
//           for every vertex u with edges into partition j, r(u)/outdeg(u)
//           and those targets; then its line count and dangling rank. In
//           iteration 1, where V and so r_0 are not known yet, r(u) counts as
//           1 (phase2 scales by 1/V), and bucket p also lists the vertices
//           of partition p.
//   phase2  sums partition j's shares from bucket j of every phase1 vertex;
//           V and D_{i−1} are the sums of their counts and dangling ranks.
//           Iteration 1 checks that partition j holds exactly the ids j,
//           j+P, ... below V; every iteration, that no edge points past
//           them. Writes r_i to its one bucket (i < I) or the output (i = I).
// A malformed line, a vertex in the wrong partition, an id of 2^31·P or more
// (a partition's vertices are numbered in 31 bits), a vertex without a line
// (an edge to it, or a gap in the ids) or two lines of one vertex is bad
// input: InvalidArgument, naming the line or the vertex. A graph partition
// without bytes may come without an input piece: it holds no vertices.
//
// Intermediate formats (host byte order; doubles bit for bit):
//   contributions (phase1 → phase2): groups, then the vertex ids listed
//     (u64 each), then a Trailer. A group is u32 w, f64 share: w < 2^31 is
//     one target's local id (t / P); else w − 2^31 ≥ 2 local ids (u32 each)
//     follow the share.
//   ranks (phase2 → phase1): a RanksHeader, then r(v) for v = j, j+P, ...
//     (f64 each).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/runtime/vertex_internal.h"
#include "common/text.h"

namespace {

using copse::Excerpt;
using copse::InvalidArgument;
using copse::Result;
using copse::Status;
using copse::Vertex;

constexpr uint32_t kContributionsMagic = 0x31524b50;  // "PKR1"
constexpr uint32_t kRanksMagic = 0x32524b50;          // "PKR2"
constexpr uint32_t kGroupFlag = 0x80000000u;
constexpr uint64_t kMaxLocalId = kGroupFlag - 1;
constexpr size_t kFlushBytes = 256 << 10;

// The last bytes of a contributions bucket.
struct Trailer {
  uint32_t magic = kContributionsMagic;
  uint32_t partition = 0;  // the phase1 vertex's graph partition
  uint32_t partitions = 0;
  uint32_t iteration = 0;
  uint64_t vertices = 0;  // lines of the partition
  uint64_t listed = 0;    // vertex ids before the trailer
  double dangling = 0;    // rank held by the partition's dangling vertices
};
static_assert(sizeof(Trailer) == 40);

struct RanksHeader {
  uint32_t magic = kRanksMagic;
  uint32_t partition = 0;
  uint32_t partitions = 0;
  uint32_t iteration = 0;
  uint64_t vertices = 0;  // V
  uint64_t count = 0;     // ranks that follow
};
static_assert(sizeof(RanksHeader) == 32);

template <typename T>
void Put(std::string* out, const T& x) {
  out->append(reinterpret_cast<const char*>(&x), sizeof x);
}

template <typename T>
T Get(const char* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

std::string_view Bytes(std::span<const uint8_t> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

std::string Str(uint64_t n) { return std::to_string(n); }

struct Params {
  std::string role;
  int iteration = 0;
  int iterations = 0;
  double damping = 0;
};

Result<Params> ParseParams(const nlohmann::json& j) {
  Params p;
  p.role = j.value("role", "");
  auto integer = [&](const char* key, int* out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return false;
    *out = it->get<int>();
    return true;
  };
  if (!integer("iteration", &p.iteration) || !integer("iterations", &p.iterations) ||
      p.iteration < 1 || p.iteration > p.iterations) {
    return InvalidArgument("pagerank: params need integers 1 <= iteration <= iterations");
  }
  auto d = j.find("damping");
  if (d == j.end() || !d->is_number() || d->get<double>() < 0 || d->get<double>() > 1) {
    return InvalidArgument("pagerank: params.damping must be a number in [0, 1]");
  }
  p.damping = d->get<double>();
  return p;
}

// Vertices v < `vertices` with v mod `partitions` == `partition`.
uint64_t PartitionSize(uint64_t vertices, uint64_t partitions, uint64_t partition) {
  return vertices > partition ? (vertices - partition + partitions - 1) / partitions : 0;
}

// One phase1 vertex: reads its graph partition line by line and sends each
// vertex's share of rank to the partitions of its targets.
class Phase1 {
 public:
  Phase1(Vertex& v, const Params& params)
      : v_(v),
        params_(params),
        parts_(static_cast<uint64_t>(std::max(v.buckets(), 1))),
        part_(static_cast<uint64_t>(v.index())),
        out_(parts_),
        pending_(parts_) {}

  Status Run();

 private:
  Status LoadRanks(size_t input);
  // Feeds a piece of the partition's text; `carry_` holds a line cut short.
  Status Feed(std::string_view piece);
  Status Line(std::string_view line);
  // Queues the line's targets in their buckets; how many there are.
  Result<uint64_t> Targets(uint64_t u, std::string_view targets);
  // Writes the current line's groups, each target getting `share`.
  Status Emit(double share);
  Status Flush(size_t bucket);
  Status Finish();
  Status Malformed(const std::string& what) const {
    return InvalidArgument("graph " + path_ + " partition " + Str(part_) + " line " + Str(line_) +
                           ": " + what);
  }

  Vertex& v_;
  const Params params_;
  const uint64_t parts_;       // P
  const uint64_t part_;        // p
  std::vector<double> ranks_;  // r_{i−1}(u) by u / P (iteration > 1)
  std::vector<std::string> out_;
  std::vector<std::vector<uint32_t>> pending_;  // the line's local target ids per bucket
  std::vector<uint32_t> touched_;               // buckets with pending targets
  std::vector<uint64_t> ids_;                   // the partition's vertices (iteration 1)
  std::string path_;                            // the graph's
  std::string carry_;
  Status error_;  // the first bad line; Feed returns it from then on
  uint64_t line_ = 0, edges_ = 0;
  double dangling_ = 0;
};

Status Phase1::Run() {
  if (v_.buckets() < 1) return InvalidArgument("pagerank phase1 has no buckets to write");
  // The stage's input 0 is the graph, 1 the ranks; a piece without bytes
  // (an empty partition) is left out.
  std::optional<size_t> graph, ranks;
  for (size_t i = 0; i < v_.inputs(); ++i) (v_.input(i).input == 0 ? graph : ranks) = i;
  if ((params_.iteration > 1) != ranks.has_value()) {
    return InvalidArgument("pagerank phase1 of iteration " + Str(params_.iteration) +
                           (ranks ? " takes the graph alone" : " needs the previous ranks too"));
  }
  if (ranks) COPSE_RETURN_IF_ERROR(LoadRanks(*ranks));
  if (graph) {
    path_ = v_.input(*graph).path;
    Status read = v_.Read(*graph, [this](std::span<const uint8_t> b) { return Feed(Bytes(b)); });
    // A bad line stops the read; the DFS client may report that as a failed
    // replica, so the line's own error is what counts.
    if (!error_.ok()) return error_;
    COPSE_RETURN_IF_ERROR(read);
    if (!carry_.empty()) COPSE_RETURN_IF_ERROR(Line(carry_));
  }
  return Finish();
}

Status Phase1::LoadRanks(size_t input) {
  std::string b;
  COPSE_RETURN_IF_ERROR(v_.ReadAll(input, &b));
  const std::string from =
      "ranks from phase2." + Str(params_.iteration - 1) + "[" + Str(part_) + "]";
  if (b.size() < sizeof(RanksHeader)) return copse::Corruption(from + ": too short");
  auto h = Get<RanksHeader>(b.data());
  const size_t doubles = (b.size() - sizeof(RanksHeader)) / sizeof(double);
  if (h.magic != kRanksMagic || h.partition != part_ || h.partitions != parts_ ||
      h.iteration + 1 != static_cast<uint32_t>(params_.iteration) || h.count != doubles ||
      b.size() != sizeof(RanksHeader) + doubles * sizeof(double)) {
    return copse::Corruption(from + ": not the ranks of this partition and iteration");
  }
  ranks_.resize(h.count);
  if (h.count > 0) {
    std::memcpy(ranks_.data(), b.data() + sizeof(RanksHeader), h.count * sizeof(double));
  }
  return Status::Ok();
}

Status Phase1::Feed(std::string_view piece) {
  if (!error_.ok()) return error_;
  const char* p = piece.data();
  const char* end = p + piece.size();
  if (!carry_.empty()) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', piece.size()));
    if (nl == nullptr) {
      carry_.append(p, end);
      return Status::Ok();
    }
    carry_.append(p, nl);
    error_ = Line(carry_);
    carry_.clear();
    p = nl + 1;
  }
  while (error_.ok() && p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (nl == nullptr) {
      carry_.assign(p, end);
      break;
    }
    error_ = Line(std::string_view(p, static_cast<size_t>(nl - p)));
    p = nl + 1;
  }
  return error_;
}

Status Phase1::Line(std::string_view line) {
  ++line_;
  const char* end = line.data() + line.size();
  uint64_t u = 0;
  auto [p, ec] = std::from_chars(line.data(), end, u);
  if (ec == std::errc::result_out_of_range) {
    return Malformed("vertex id " + Excerpt(std::string_view(line.data(), p - line.data())) +
                     " is too large");
  }
  if (ec != std::errc() || p == end || *p != '\t') {
    return Malformed("not `vertex<TAB>targets` (a decimal id, a tab, ids separated by spaces)");
  }
  if (u % parts_ != part_) {
    return Malformed("vertex " + Str(u) + " belongs in partition " + Str(u % parts_) + " (" +
                     Str(u) + " mod " + Str(parts_) + ")");
  }
  double rank = 1;  // iteration 1: r_0 = 1/V, the 1/V applied by phase2
  if (params_.iteration > 1) {
    if (u / parts_ >= ranks_.size()) {
      return Malformed("vertex " + Str(u) + " had no rank in iteration " +
                       Str(params_.iteration - 1) + " (did the graph change?)");
    }
    rank = ranks_[u / parts_];
  } else {
    ids_.push_back(u);
  }
  COPSE_ASSIGN_OR_RETURN(uint64_t k, Targets(u, std::string_view(p + 1, end)));
  edges_ += k;
  if (k == 0) {
    dangling_ += rank;
    return Status::Ok();
  }
  return Emit(rank / static_cast<double>(k));
}

Result<uint64_t> Phase1::Targets(uint64_t u, std::string_view targets) {
  const char* p = targets.data();
  const char* end = p + targets.size();
  uint64_t k = 0;
  for (; p != end; ++k) {
    uint64_t t = 0;
    auto [q, e] = std::from_chars(p, end, t);
    if (e == std::errc::result_out_of_range || (e == std::errc() && t / parts_ > kMaxLocalId)) {
      return Malformed("vertex id " + std::string(p, q) + " is too large");
    }
    if (e != std::errc() || (q != end && (*q != ' ' || q + 1 == end))) {
      return Malformed("vertex " + Str(u) + ": targets must be decimal ids separated by spaces");
    }
    const uint64_t j = t % parts_;
    if (pending_[j].empty()) touched_.push_back(static_cast<uint32_t>(j));
    pending_[j].push_back(static_cast<uint32_t>(t / parts_));
    p = q == end ? q : q + 1;
  }
  return k;
}

Status Phase1::Emit(double share) {
  for (uint32_t j : touched_) {
    std::vector<uint32_t>& targets = pending_[j];
    std::string& o = out_[j];
    if (targets.size() == 1) {
      Put(&o, targets[0]);
      Put(&o, share);
    } else {
      Put(&o, static_cast<uint32_t>(kGroupFlag | targets.size()));
      Put(&o, share);
      o.append(reinterpret_cast<const char*>(targets.data()), targets.size() * sizeof(uint32_t));
    }
    targets.clear();
    if (o.size() >= kFlushBytes) COPSE_RETURN_IF_ERROR(Flush(j));
  }
  touched_.clear();
  return Status::Ok();
}

Status Phase1::Flush(size_t bucket) {
  Status s = v_.Write(static_cast<int>(bucket), out_[bucket]);
  out_[bucket].clear();
  return s;
}

Status Phase1::Finish() {
  Trailer t;
  t.partition = static_cast<uint32_t>(part_);
  t.partitions = static_cast<uint32_t>(parts_);
  t.iteration = static_cast<uint32_t>(params_.iteration);
  t.vertices = line_;
  t.dangling = dangling_;
  for (size_t j = 0; j < parts_; ++j) {
    std::string& o = out_[j];
    t.listed = j == part_ ? ids_.size() : 0;
    if (t.listed > 0) {
      o.append(reinterpret_cast<const char*>(ids_.data()), ids_.size() * sizeof(uint64_t));
    }
    Put(&o, t);
    COPSE_RETURN_IF_ERROR(Flush(j));
  }
  v_.CountRecords(edges_);
  return Status::Ok();
}

// One phase2 vertex: partition j's new ranks from its bucket of every phase1
// vertex.
class Phase2 {
 public:
  Phase2(Vertex& v, const Params& params)
      : v_(v), params_(params), parts_(v.inputs()), part_(static_cast<uint64_t>(v.index())) {}

  Status Run();

 private:
  // An edge's target and the graph partition it comes from.
  struct Stray {
    uint64_t target = 0;
    uint32_t from = 0;
  };

  // Takes in one phase1 vertex's bucket.
  Status Add(size_t input, std::string_view bucket);
  Status AddShares(std::string_view groups, uint32_t from);
  // Iteration 1: the partition holds exactly the ids j, j+P, ... below V.
  Status CheckIds() const;
  Status CheckEdges() const;
  std::vector<double> Ranks() const;
  Status WriteRanks(const std::vector<double>& ranks);
  Status WriteOutput(const std::vector<double>& ranks);

  Vertex& v_;
  const Params params_;
  const uint64_t parts_;                                   // P
  const uint64_t part_;                                    // j
  std::vector<double> sums_;                               // Σ shares into v, by v / P
  uint64_t bound_ = std::numeric_limits<uint64_t>::max();  // no local id reaches it
  Stray highest_;               // an edge into the vertex of sums_.back()
  std::optional<Stray> stray_;  // an edge at or past bound_
  std::vector<uint64_t> ids_;   // partition j's vertices (iteration 1)
  bool listed_ = false;
  uint64_t vertices_ = 0;  // V
  double dangling_ = 0;
};

Status Phase2::Run() {
  if (parts_ == 0 || (!v_.writes_output() && v_.buckets() != 1)) {
    return InvalidArgument("pagerank phase2 writes the output or one bucket");
  }
  std::string bucket;
  for (size_t i = 0; i < v_.inputs(); ++i) {
    bucket.clear();
    COPSE_RETURN_IF_ERROR(v_.ReadAll(i, &bucket));
    COPSE_RETURN_IF_ERROR(Add(i, bucket));
  }
  if (params_.iteration == 1) COPSE_RETURN_IF_ERROR(CheckIds());
  COPSE_RETURN_IF_ERROR(CheckEdges());
  std::vector<double> ranks = Ranks();
  v_.CountRecords(ranks.size());
  return v_.writes_output() ? WriteOutput(ranks) : WriteRanks(ranks);
}

Status Phase2::Add(size_t input, std::string_view b) {
  const copse::VertexInput& in = v_.input(input);
  const std::string from = "bucket " + Str(part_) + " of " + in.stage + "[" + Str(in.index) + "]";
  if (b.size() < sizeof(Trailer)) return copse::Corruption(from + ": too short");
  auto t = Get<Trailer>(b.data() + b.size() - sizeof(Trailer));
  if (t.magic != kContributionsMagic || t.partitions != parts_ ||
      t.iteration != static_cast<uint32_t>(params_.iteration) ||
      t.listed > (b.size() - sizeof(Trailer)) / sizeof(uint64_t)) {
    return copse::Corruption(from + ": not the contributions of this iteration");
  }
  const size_t list_bytes = t.listed * sizeof(uint64_t);
  // Partitions of a well-formed graph differ by at most one vertex.
  bound_ = std::min(bound_, t.vertices + 1);
  sums_.reserve(bound_);
  vertices_ += t.vertices;
  dangling_ += t.dangling;
  const size_t groups = b.size() - sizeof(Trailer) - list_bytes;
  if (t.partition == part_ && params_.iteration == 1) {
    ids_.resize(t.listed);
    if (list_bytes > 0) std::memcpy(ids_.data(), b.data() + groups, list_bytes);
    listed_ = true;
  }
  Status s = AddShares(b.substr(0, groups), t.partition);
  return s.ok() ? s : copse::Corruption(from + ": " + s.message());
}

Status Phase2::AddShares(std::string_view groups, uint32_t from) {
  const char* p = groups.data();
  const char* end = p + groups.size();
  auto add = [&](uint32_t local, double share) {
    if (local >= sums_.size()) {
      if (local >= bound_) {  // past any partition's size: no line; not worth memory
        if (!stray_) stray_ = Stray{part_ + local * parts_, from};
        return;
      }
      sums_.resize(local + uint64_t{1}, 0.0);
      highest_ = Stray{part_ + local * parts_, from};
    }
    sums_[local] += share;
  };
  while (p != end) {
    if (end - p < 12) return copse::Corruption("a group is cut short");
    const auto w = Get<uint32_t>(p);
    const auto share = Get<double>(p + 4);
    p += 12;
    if ((w & kGroupFlag) == 0) {
      add(w, share);
      continue;
    }
    const uint64_t n = w & ~kGroupFlag;
    if (static_cast<uint64_t>(end - p) < n * 4) return copse::Corruption("a group is cut short");
    for (uint64_t k = 0; k < n; ++k, p += 4) add(Get<uint32_t>(p), share);
  }
  return Status::Ok();
}

Status Phase2::CheckIds() const {
  if (!listed_) return copse::Internal("no phase1 vertex listed partition " + Str(part_));
  const uint64_t size = PartitionSize(vertices_, parts_, part_);
  std::vector<uint8_t> seen(size, 0);
  uint64_t beyond = std::numeric_limits<uint64_t>::max();
  for (uint64_t id : ids_) {
    if (id / parts_ >= size) {
      beyond = std::min(beyond, id);
    } else if (seen[id / parts_]++ != 0) {
      return InvalidArgument("vertex " + Str(id) + " has two lines (graph partition " + Str(part_) +
                             ")");
    }
  }
  const std::string ids =
      "ids must run 0.." + Str(vertices_ - 1) + " as the graph has " + Str(vertices_) + " lines";
  for (uint64_t k = 0; k < size; ++k) {
    if (seen[k] == 0) {
      return InvalidArgument("vertex " + Str(part_ + k * parts_) + " has no line (" + ids + ")");
    }
  }
  if (beyond != std::numeric_limits<uint64_t>::max()) {
    return InvalidArgument("vertex " + Str(beyond) + " is out of range (" + ids + ")");
  }
  return Status::Ok();
}

Status Phase2::CheckEdges() const {
  Stray e;
  if (stray_) {
    e = *stray_;
  } else if (sums_.size() > PartitionSize(vertices_, parts_, part_)) {
    e = highest_;
  } else {
    return Status::Ok();
  }
  return InvalidArgument("graph partition " + Str(e.from) + " has an edge to vertex " +
                         Str(e.target) + ", which has no line (the graph has " + Str(vertices_) +
                         " vertices, 0.." + Str(vertices_ - 1) + ")");
}

std::vector<double> Phase2::Ranks() const {
  std::vector<double> ranks(PartitionSize(vertices_, parts_, part_));
  if (ranks.empty()) return ranks;
  const double n = static_cast<double>(vertices_), d = params_.damping;
  // Iteration 1's shares and dangling rank counted r_0 as 1.
  const double scale = params_.iteration == 1 ? 1 / n : 1;
  const double base = (1 - d) / n + d * scale * dangling_ / n;
  for (size_t k = 0; k < ranks.size(); ++k) {
    ranks[k] = base + d * scale * (k < sums_.size() ? sums_[k] : 0.0);
  }
  return ranks;
}

Status Phase2::WriteRanks(const std::vector<double>& ranks) {
  RanksHeader h;
  h.partition = static_cast<uint32_t>(part_);
  h.partitions = static_cast<uint32_t>(parts_);
  h.iteration = static_cast<uint32_t>(params_.iteration);
  h.vertices = vertices_;
  h.count = ranks.size();
  std::string out;
  out.reserve(sizeof h + ranks.size() * sizeof(double));
  Put(&out, h);
  out.append(reinterpret_cast<const char*>(ranks.data()), ranks.size() * sizeof(double));
  return v_.Write(0, out);
}

Status Phase2::WriteOutput(const std::vector<double>& ranks) {
  std::string out;
  char line[64];
  for (size_t k = 0; k < ranks.size(); ++k) {
    char* p = std::to_chars(line, line + sizeof line, part_ + k * parts_).ptr;
    *p++ = '\t';
    p = std::to_chars(p, line + sizeof line, ranks[k], std::chars_format::general, 17).ptr;
    *p++ = '\n';
    out.append(line, p);
    if (out.size() >= kFlushBytes) {
      COPSE_RETURN_IF_ERROR(v_.Write(0, out));
      out.clear();
    }
  }
  return out.empty() ? Status::Ok() : v_.Write(0, out);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t start = copse::apps::MarkStart();
  auto v = copse::Vertex::Open(argc, argv, start);
  if (!v.ok()) return copse::Vertex::FailEarly(v.status());
  Result<Params> params = ParseParams(copse::apps::ParamsOf(**v));
  Status s;
  if (!params.ok()) {
    s = params.status();
  } else if (params->role == "phase1") {
    s = Phase1(**v, *params).Run();
  } else if (params->role == "phase2") {
    s = Phase2(**v, *params).Run();
  } else {
    s = InvalidArgument("pagerank: params.role must be phase1 or phase2, not '" + params->role +
                        "'");
  }
  return (*v)->Finish(s);
}

#include "rootjob/job_dag.h"

#include <cmath>
#include <utility>

namespace copse::rootjob {

const char* ConnectionName(Connection c) {
  switch (c) {
    case Connection::kPointwise:
      return "pointwise";
    case Connection::kAllToAll:
      return "all-to-all";
    case Connection::kGather:
      return "gather";
    case Connection::kBroadcast:
      return "broadcast";
  }
  return "?";
}

int JobDag::TotalVertices() const {
  int n = 0;
  for (const Stage& s : stages) n += s.vertices;
  return n;
}

namespace {

Status CheckInput(const JobDag& dag, size_t si, size_t ii) {
  const Stage& s = dag.stages[si];
  const StageInput& in = s.inputs[ii];
  std::string where = "job " + dag.name + " stage " + s.name + " input " + std::to_string(ii);
  int items = 0;
  if (in.from_file) {
    if (in.source < 0 || in.source >= static_cast<int>(dag.files.size())) {
      return InvalidArgument(where + ": no file " + std::to_string(in.source));
    }
    items = dag.files[in.source].partitions;
  } else {
    if (in.source < 0 || in.source >= static_cast<int>(si)) {
      return InvalidArgument(where + ": stage " + std::to_string(in.source) +
                             " is not an earlier stage");
    }
    items = dag.stages[in.source].vertices;
  }
  if (in.connection == Connection::kPointwise && items != s.vertices) {
    return InvalidArgument(where + ": pointwise from " + std::to_string(items) + " items into " +
                           std::to_string(s.vertices) + " vertices");
  }
  if (in.connection == Connection::kGather && s.vertices != 1) {
    return InvalidArgument(where + ": a gather stage has one vertex");
  }
  if (!(in.fraction > 0.0 && in.fraction <= 1.0)) {
    return InvalidArgument(where + ": fraction must be in (0, 1]");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateDag(const JobDag& dag) {
  if (dag.stages.empty()) return InvalidArgument("job " + dag.name + ": no stages");
  for (const FileSpec& f : dag.files) {
    if (f.partitions < 1 || f.partition_bytes < 0) {
      return InvalidArgument("job " + dag.name + " file " + f.name +
                             ": partitions must be >= 1 and sizes >= 0");
    }
  }
  for (size_t si = 0; si < dag.stages.size(); ++si) {
    const Stage& s = dag.stages[si];
    if (s.vertices < 1 || s.output_fixed_bytes < 0 || s.output_ratio < 0) {
      return InvalidArgument("job " + dag.name + " stage " + s.name +
                             ": vertices must be >= 1 and output sizes >= 0");
    }
    for (size_t ii = 0; ii < s.inputs.size(); ++ii) COPSE_RETURN_IF_ERROR(CheckInput(dag, si, ii));
  }
  return Status::Ok();
}

DagState::DagState(JobDag dag, std::vector<std::vector<std::vector<int>>> file_replicas)
    : dag_(std::move(dag)), file_replicas_(std::move(file_replicas)) {
  for (const Stage& s : dag_.stages) {
    vertices_.emplace_back(s.vertices);
    total_ += s.vertices;
  }
  stage_done_.assign(dag_.stages.size(), 0);
}

bool DagState::IsReady(VertexId v) const {
  for (const StageInput& in : dag_.stages[v.stage].inputs) {
    if (in.from_file) continue;
    switch (in.connection) {
      case Connection::kPointwise:
        if (!vertices_[in.source][v.index].done) return false;
        break;
      case Connection::kBroadcast:
        if (!vertices_[in.source][0].done) return false;
        break;
      case Connection::kAllToAll:
      case Connection::kGather:
        if (stage_done_[in.source] != dag_.stages[in.source].vertices) return false;
        break;
    }
  }
  return true;
}

std::vector<VertexId> DagState::TakeReady() {
  std::vector<VertexId> ready;
  for (int s = 0; s < static_cast<int>(vertices_.size()); ++s) {
    if (stage_done_[s] == dag_.stages[s].vertices) continue;
    for (int i = 0; i < dag_.stages[s].vertices; ++i) {
      VertexId v{s, i};
      if (state(v).issued || !IsReady(v)) continue;
      state(v).issued = true;
      ready.push_back(v);
    }
  }
  return ready;
}

// Appends item `item` of input `in`, divided among `consumers` readers.
void DagState::AppendItem(const StageInput& in, int item, int consumers,
                          std::vector<InputPiece>* out) const {
  InputPiece p;
  double bytes = 0;
  if (in.from_file) {
    bytes = static_cast<double>(dag_.files[in.source].partition_bytes);
    p.replicas = file_replicas_[in.source][item];
  } else {
    const VertexState& u = vertices_[in.source][item];
    bytes = static_cast<double>(u.output_bytes);
    p.replicas = {u.computer};
  }
  p.bytes = std::llround(bytes * in.fraction / consumers);
  p.many_to_one = in.connection == Connection::kGather || in.connection == Connection::kAllToAll;
  if (p.bytes > 0) out->push_back(std::move(p));
}

std::vector<InputPiece> DagState::Inputs(VertexId v) const {
  std::vector<InputPiece> pieces;
  const Stage& s = dag_.stages[v.stage];
  for (const StageInput& in : s.inputs) {
    int items = in.from_file ? dag_.files[in.source].partitions : dag_.stages[in.source].vertices;
    switch (in.connection) {
      case Connection::kPointwise:
        AppendItem(in, v.index, 1, &pieces);
        break;
      case Connection::kBroadcast:
        AppendItem(in, 0, 1, &pieces);
        break;
      case Connection::kGather:
        for (int i = 0; i < items; ++i) AppendItem(in, i, 1, &pieces);
        break;
      case Connection::kAllToAll:
        for (int i = 0; i < items; ++i) AppendItem(in, i, s.vertices, &pieces);
        break;
    }
  }
  return pieces;
}

int64_t DagState::OutputBytes(VertexId v, int64_t bytes_read) const {
  const Stage& s = dag_.stages[v.stage];
  return s.output_fixed_bytes + std::llround(s.output_ratio * static_cast<double>(bytes_read));
}

void DagState::Completed(VertexId v, int computer, int64_t output_bytes) {
  VertexState& st = state(v);
  if (st.done) return;
  st.done = true;
  st.computer = computer;
  st.output_bytes = output_bytes;
  ++stage_done_[v.stage];
  ++done_count_;
}

}  // namespace copse::rootjob

#include "rootjob/job_dag.h"


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
  // A producer writes one bucket per vertex of its all-to-all consumers.
  std::vector<int> buckets(dag.stages.size(), 0);
  for (const Stage& s : dag.stages) {
    for (const StageInput& in : s.inputs) {
      if (in.from_file || in.connection != Connection::kAllToAll) continue;
      int& b = buckets[in.source];
      if (b != 0 && b != s.vertices) {
        return InvalidArgument("job " + dag.name + " stage " + s.name + ": all-to-all from " +
                               dag.stages[in.source].name + " into " +
                               std::to_string(s.vertices) + " vertices, but another consumer has " +
                               std::to_string(b) + " (a stage writes one bucket count)");
      }
      b = s.vertices;
    }
  }
  return Status::Ok();
}

}  // namespace copse::rootjob

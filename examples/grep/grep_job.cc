// grep-job: a job built in C++ (docs/sdk.md): every partition of INPUT goes
// through a match vertex of grep-count, whose counts go all-to-all to
// SUMS sum vertices, which write OUTPUT. It submits the job, prints its
// progress on stderr, and its output on stdout.
//   grep-job --config cluster.toml --program grep-count@1 --input /logs
//            --output /matches --patterns error,warn [--sums 2]
#include <copse/client.h>
#include <copse/job.h>

#include <cstring>
#include <iostream>
#include <string>

namespace {

int Usage() {
  std::cerr << "usage: grep-job --config FILE --program NAME[@VERSION] --input PATH --output PATH "
               "--patterns P1,P2,... [--sums N]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config, program = "grep-count", input, output, patterns;
  int sums = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--config") config = value;
    else if (flag == "--program") program = value;
    else if (flag == "--input") input = value;
    else if (flag == "--output") output = value;
    else if (flag == "--patterns") patterns = value;
    else if (flag == "--sums") sums = std::stoi(value);
    else return Usage();
  }
  if (argc % 2 == 0 || input.empty() || output.empty() || patterns.empty() || sums < 1) {
    return Usage();
  }

  copse::Graph match = copse::Input(input) >=
                       copse::Stage("match", program).Param("role", "match").Param("patterns", patterns);
  copse::Graph job = match >> (copse::Stage("sum", program).Param("role", "sum") ^ sums);
  copse::JobSpec spec("grep", job.WriteTo(output));

  auto client = copse::Client::Connect({.config = config});
  if (!client.ok()) {
    std::cerr << "grep-job: " << client.status().ToString() << "\n";
    return 1;
  }
  copse::Result<uint64_t> id = (*client)->Submit(spec);
  if (!id.ok()) {
    std::cerr << "grep-job: " << id.status().ToString() << "\n";
    return id.status().code() == copse::StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::cerr << "job " << *id << " submitted\n";
  copse::Result<copse::JobInfo> end = (*client)->Wait(*id, [](const copse::JobInfo& j) {
    std::cerr << "job " << j.id << ": " << j.state << ", " << j.done << " of " << j.vertices
              << " vertices done\n";
  });
  if (!end.ok()) {
    std::cerr << "grep-job: " << end.status().ToString() << "\n";
    return 1;
  }
  if (!end->succeeded()) {
    std::cerr << "grep-job: job " << *id << " " << end->state << ": " << end->failure << "\n";
    return 1;
  }
  copse::Result<std::string> out = (*client)->ReadFile(output);
  if (!out.ok()) {
    std::cerr << "grep-job: " << out.status().ToString() << "\n";
    return 1;
  }
  std::cout << *out;
  return 0;
}

// noop: a vertex that reads its descriptor, writes nothing and exits 0 — the
// engine's overhead alone (`copse bench engine`). Parameters, for tests and
// demonstrations of failures (docs/jobs.md):
//   "fail": true            exit 1 after printing a line (a program that always fails)
//   "exit_code": N          exit N (65: do not retry)
//   "allocate_mb": N        touch N MiB of memory and hold it (a memory limit)
//   "hang_s": S             sleep S seconds before finishing (a timeout, a kill)
//   "garbage_kb": N         write N KiB of random bytes to stdout and to stderr
//   "stderr": TEXT          write TEXT to stderr as it is (any bytes the spec can hold)
//   "signal": N             kill itself with signal N
//   "skip_inputs": true     never read its inputs
//   "garbage_result": true  write random bytes as its result file and exit 0
// plus the runtime's "delay_s". A noop with inputs reads them all (and
// counts them) and copies nothing. A parameter of the wrong type is bad
// input: exit 65.
#include <signal.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "apps/runtime/vertex_internal.h"

namespace {

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

int Run(copse::Vertex& v) {
  const nlohmann::json& p = copse::apps::ParamsOf(v);
  copse::Status s;
  if (!p.value("skip_inputs", false)) {
    for (size_t i = 0; i < v.inputs() && s.ok(); ++i) {
      s = v.Read(i, [](std::span<const uint8_t>) { return copse::Status::Ok(); });
    }
  }
  if (int kb = p.value("garbage_kb", 0); kb > 0) {
    std::string junk = RandomBytes(static_cast<size_t>(kb) << 10, 7);
    std::cout << junk << std::flush;
    std::cerr << junk << std::flush;
  }
  if (auto text = p.find("stderr"); text != p.end()) {
    std::cerr << text->get<std::string>() << std::flush;
  }
  if (int sig = p.value("signal", 0); sig > 0) ::raise(sig);
  if (p.value("garbage_result", false)) {
    std::ofstream(v.result_file(), std::ios::binary) << RandomBytes(4096, 11);
    return 0;
  }
  if (int mb = p.value("allocate_mb", 0); mb > 0) {
    std::vector<char> memory(static_cast<size_t>(mb) << 20);
    for (size_t i = 0; i < memory.size(); i += 4096) memory[i] = 1;
    std::cerr << "holding " << mb << " MiB\n";
    std::this_thread::sleep_for(std::chrono::seconds(60));
    if (memory[0] != 1) return 1;
  }
  if (double hang = p.value("hang_s", 0.0); hang > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(hang));
  }
  if (p.value("fail", false)) {
    std::cerr << "noop: failing, as its parameters ask (vertex " << v.stage() << "["
              << v.index() << "])\n";
    return 1;
  }
  if (int code = p.value("exit_code", 0); code != 0) {
    std::cerr << "noop: exit code " << code << ", as its parameters ask\n";
    return code;
  }
  return v.Finish(s);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t start = copse::apps::MarkStart();
  auto v = copse::Vertex::Open(argc, argv, start);
  if (!v.ok()) return copse::Vertex::FailEarly(v.status());
  try {
    return Run(**v);
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "noop: a parameter has the wrong type: " << e.what() << "\n";
    return copse::rootjob::kExitDoNotRetry;
  }
}

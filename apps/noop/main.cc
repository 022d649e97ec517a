// noop: a vertex that reads its descriptor, writes nothing and exits 0 — the
// engine's overhead alone (`copse bench engine`). Parameters, for tests and
// demonstrations of failures (docs/jobs.md):
//   "fail": true            exit 1 after printing a line (a program that always fails)
//   "exit_code": N          exit N (65: do not retry)
//   "allocate_mb": N        touch N MiB of memory and hold it (a memory limit)
//   "hang_s": S             sleep S seconds before finishing (a timeout, a kill)
// plus the runtime's "delay_s". A noop with inputs reads them all (and
// counts them) and copies nothing.
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

#include "apps/runtime/vertex.h"

int main(int argc, char** argv) {
  int64_t start = copse::apps::MarkStart();
  auto v = copse::apps::Vertex::Open(argc, argv, start);
  if (!v.ok()) return copse::apps::Vertex::FailEarly(v.status());
  const nlohmann::json& p = (*v)->params();
  copse::Status s;
  for (size_t i = 0; i < (*v)->inputs() && s.ok(); ++i) {
    s = (*v)->Read(i, [](std::span<const uint8_t>) { return copse::Status::Ok(); });
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
    std::cerr << "noop: failing, as its parameters ask (vertex " << (*v)->descriptor().stage << "["
              << (*v)->descriptor().index << "])\n";
    return 1;
  }
  if (int code = p.value("exit_code", 0); code != 0) {
    std::cerr << "noop: exit code " << code << ", as its parameters ask\n";
    return code;
  }
  return (*v)->Finish(s);
}

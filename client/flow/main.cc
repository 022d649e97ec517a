// copse-flow: solves min-cost-flow problems in DIMACS format.
//
//   copse-flow solve [--algorithm NAME] [--check] FILE
//       prints one JSON document: algorithm, cost, solve_ms, nodes, arcs, ...
//   copse-flow replay [--algorithm NAME] SNAP0 SNAP1 ...
//       SNAPi are snapshots of one evolving graph (nodes matched by id, arcs
//       by their (tail, head) pair). Solves the first from scratch and each
//       later one incrementally after applying the differences as a batch of
//       changes; prints one JSON line per step: step, cost, solve_ms (the
//       solver's Solve call alone), parse_ms (reading the file), apply_ms
//       (diffing it into graph changes), changes, algorithm.
//
// Exit codes (docs/design.md §12): 0 success, 2 bad usage or malformed input (the
// error names the file and line), 3 an infeasible problem, 1 other failures.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/json.h"
#include "scheduler/flow/dimacs.h"
#include "scheduler/flow/racing.h"
#include "scheduler/flow/solvers.h"
#include "scheduler/flow/verify.h"

namespace {

using copse::Result;
using copse::Status;
using copse::StatusCode;
using nlohmann::json;
namespace flow = copse::flow;
using Clock = std::chrono::steady_clock;

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInfeasible = 3;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return kExitUsage;
    case StatusCode::kInfeasible:
      return kExitInfeasible;
    default:
      return kExitFailed;
  }
}

int Fail(const Status& s) {
  std::cerr << "copse-flow: " << s.ToString() << "\n";
  return ExitCodeFor(s);
}

Result<flow::DimacsProblem> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return copse::NotFound("cannot open " + path);
  return flow::ReadDimacs(in, path);
}

void AddWinner(flow::FlowSolver& solver, json& out) {
  if (auto* race = dynamic_cast<flow::RacingSolver*>(&solver)) {
    out["winner"] = std::string(race->last_winner());
  }
}

int Solve(const std::string& algorithm, const std::string& path, bool check) {
  auto solver = flow::MakeSolver(algorithm);
  if (!solver.ok()) return Fail(solver.status());
  auto t = Clock::now();
  auto problem = ReadFile(path);
  if (!problem.ok()) return Fail(problem.status());
  auto loaded = flow::LoadDimacs(*problem, path);
  if (!loaded.ok()) return Fail(loaded.status());
  double parse_ms = MsSince(t);
  flow::FlowSolution sol;
  t = Clock::now();
  Status st = (*solver)->Solve(loaded->graph, &sol, nullptr);
  double solve_ms = MsSince(t);
  json out = {{"algorithm", algorithm},
              {"nodes", loaded->graph.node_count()},
              {"arcs", loaded->graph.arc_count()},
              {"parse_ms", parse_ms},
              {"solve_ms", solve_ms}};
  if (!st.ok()) {
    out["status"] = st.code() == StatusCode::kInfeasible ? "infeasible" : "error";
    out["error"] = st.message();
    std::cout << copse::DumpJson(out) << "\n";
    return Fail(st);
  }
  out["status"] = "optimal";
  out["cost"] = sol.cost + loaded->cost_offset;
  AddWinner(**solver, out);
  if (check) {
    Status c = flow::CheckSolution(loaded->graph, sol);
    out["check"] = c.ok() ? "ok" : c.message();
    if (!c.ok()) {
      std::cout << copse::DumpJson(out) << "\n";
      return Fail(c);
    }
  }
  std::cout << copse::DumpJson(out) << "\n";
  return 0;
}

// Solves the first snapshot from scratch and each later one incrementally,
// printing a line per step; returns the exit code.
int Replay(const std::string& algorithm, const std::vector<std::string>& paths, bool check) {
  auto solver = flow::MakeSolver(algorithm);
  if (!solver.ok()) return Fail(solver.status());
  // Kept across steps, with the diff's working space: ApplySnapshot then
  // frees nothing per node or arc before the timed solve.
  flow::LoadedProblem loaded;
  int exit_code = 0;
  for (size_t step = 0; step < paths.size(); ++step) {
    auto t = Clock::now();
    auto problem = ReadFile(paths[step]);
    if (!problem.ok()) return Fail(problem.status());
    double parse_ms = MsSince(t);
    t = Clock::now();
    auto changes = flow::ApplySnapshot(loaded, *problem, paths[step]);
    if (!changes.ok()) return Fail(changes.status());
    double apply_ms = MsSince(t);
    flow::FlowSolution sol;
    t = Clock::now();
    Status st = (*solver)->Solve(loaded.graph, &sol, nullptr);
    double solve_ms = MsSince(t);
    json out = {{"step", step},         {"algorithm", algorithm}, {"solve_ms", solve_ms},
                {"parse_ms", parse_ms}, {"apply_ms", apply_ms},   {"changes", *changes},
                {"file", paths[step]}};
    if (st.ok()) {
      out["status"] = "optimal";
      out["cost"] = sol.cost + loaded.cost_offset;
      AddWinner(**solver, out);
      if (check) {
        Status c = flow::CheckSolution(loaded.graph, sol);
        out["check"] = c.ok() ? "ok" : c.message();
        if (!c.ok()) exit_code = kExitFailed;
      }
    } else if (st.code() == StatusCode::kInfeasible) {
      out["status"] = "infeasible";
      out["error"] = st.message();
      if (exit_code == 0) exit_code = kExitInfeasible;
    } else {
      std::cout << copse::DumpJson(out) << "\n";
      return Fail(st);
    }
    std::cout << copse::DumpJson(out) << "\n" << std::flush;
    loaded.graph.CommitChanges();
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Copse min-cost-flow solver (DIMACS in, JSON out)"};
  app.require_subcommand(1);
  std::string names;
  for (const auto& n : flow::SolverNames()) {
    if (!names.empty()) names.append(", ");
    names.append(n);
  }
  std::string algorithm(flow::kDefaultSolver);
  bool check = false;
  std::string file;
  std::vector<std::string> snapshots;
  CLI::App* solve = app.add_subcommand("solve", "solve one DIMACS min-cost-flow problem");
  solve->add_option("--algorithm", algorithm, "one of: " + names);
  solve->add_flag("--check", check, "verify feasibility and optimality of the returned flow");
  solve->add_option("FILE", file, "DIMACS file")->required();
  CLI::App* replay =
      app.add_subcommand("replay", "solve snapshots of an evolving graph incrementally");
  replay->add_option("--algorithm", algorithm, "one of: " + names);
  replay->add_flag("--check", check, "verify each step's flow");
  replay->add_option("SNAPSHOTS", snapshots, "DIMACS files, in order")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  if (solve->parsed()) return Solve(algorithm, file, check);
  return Replay(algorithm, snapshots, check);
}

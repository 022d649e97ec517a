// QuincyPolicy's explanations (quincy_policy.h; fields in docs/scheduler.md
// "Explaining decisions"): Describe, LastRound, Explain and FlowGraph, all
// read from the last solved round — its flow, its node potentials and the
// graph as it was then (QuincyGraph's checkpoint). Nothing here solves or
// edits the graph.
//
// Prices. The solver's potentials π make every residual arc's reduced cost
// c(u,v) − π(u) + π(v) non-negative (flow/solver.h). The price of a node v
// is π(v) − π(S): what one more unit of flow from v to the sink costs at the
// optimum. An arc's total is its cost plus its head's price; an arc that
// carries flow has a total no higher than the task node's price, an open arc
// without flow one no lower, so the flow's choice is the cheapest total.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "scheduler/explain.h"
#include "scheduler/quincy_policy.h"

namespace copse::scheduler {

using explain::Num;
using explain::Paper;
using nlohmann::json;
using Arc = QuincyGraph::SolvedArc;
using ArcTo = QuincyGraph::ArcTo;

namespace {

bool Placement(const Arc& a) {
  return a.to == ArcTo::kCluster || a.to == ArcTo::kRack || a.to == ArcTo::kComputer;
}

// Where an arc leads, as the API shows it.
json Target(const Arc& a, JobId job) {
  switch (a.to) {
    case ArcTo::kUnscheduled:
      return {{"kind", "unscheduled"}, {"job", job}};
    case ArcTo::kCluster:
      return {{"kind", "cluster"}};
    case ArcTo::kRack:
      return {{"kind", "rack"}, {"rack", a.id}};
    case ArcTo::kComputer:
      return {{"kind", "computer"}, {"computer", a.id}};
    case ArcTo::kSink:
      return {{"kind", "sink"}};
  }
  return nullptr;
}

std::string Words(const Arc& a) {
  switch (a.to) {
    case ArcTo::kUnscheduled:
      return "staying unscheduled";
    case ArcTo::kCluster:
      return "any computer (through the cluster node)";
    case ArcTo::kRack:
      return "rack " + std::to_string(a.id);
    case ArcTo::kComputer:
      return explain::ComputerWords(a.id);
    case ArcTo::kSink:
      return "waiting (the root's wait arc)";
  }
  return "?";
}

// Where a task's flow went, in words.
std::string FlowWords(const Arc& a, JobId job) {
  if (a.to == ArcTo::kUnscheduled) return "the unscheduled node of job " + std::to_string(job);
  return Words(a);
}

std::string Task(TaskId t, JobId j) {
  return "task " + std::to_string(t) + " of job " + std::to_string(j);
}

}  // namespace

// Reads one solved round for one request. Every number is in milli-units
// until it goes into a document.
class QuincyExplainer {
 public:
  QuincyExplainer(const QuincyPolicy& p, const ClusterState& s)
      : p_(p), s_(s), g_(p.graph_), sol_(p.solution_) {}

  void Explain(const TaskInfo& t, Timestamp now, json& e) const;
  void Describe(json& out) const;
  json FlowGraph() const;

 private:
  // One arc of a task with its solved numbers.
  struct Option {
    const Arc* arc = nullptr;
    int64_t price = 0;  // of the arc's head
    int64_t total = 0;  // cost + price
    int64_t flow = 0;
  };
  struct Options {
    std::vector<Option> all;
    const Option* chosen = nullptr;  // the arc carrying the task's flow
  };
  // One job's tasks' flow, summed by where it went.
  struct JobFlow {
    int64_t tasks = 0, unscheduled = 0, cluster = 0;
    std::map<RackId, int64_t> racks;
    std::map<ComputerId, int64_t> computers;
  };

  bool Solved() const { return p_.solved_at_.has_value() && g_.checkpointed(); }
  // Whether the task's state differs from what the round saw, other than
  // by the round's own start: re-queued, adopted, or started and failed.
  bool Changed(const TaskInfo& t, const QuincyGraph::SolvedTask& st) const {
    const bool was_placed = st.running != kNoComputer;
    const bool started = p_.started_.count(t.id) != 0;
    if (!t.placed()) return was_placed || started;
    return was_placed ? st.running != t.computer : !started;
  }
  int64_t Price(flow::NodeId n) const;
  int64_t Flow(flow::ArcId a) const { return a < sol_.flow.size() ? sol_.flow[a] : 0; }
  Options Read(const QuincyGraph::SolvedTask& st) const;
  // The cheapest open option satisfying `want`, other than `skip`.
  template <typename Pred>
  const Option* Cheapest(const Options& o, const Option* skip, Pred want) const;
  json ArcDoc(const TaskInfo& t, const QuincyGraph::SolvedTask& st, const Option& o) const;
  void Parts(const TaskInfo& t, const QuincyGraph::SolvedTask& st, const Arc& a, json* parts,
             json* inputs) const;
  std::pair<Duration, Duration> TimesAtRound(const TaskInfo& t) const;
  json Allocation(JobId job) const;
  ComputerId CheapestComputerIn(RackId r) const;
  ComputerId SlotOf(const Arc& a) const;
  json Slot(const Arc& a) const;
  json Occupant(ComputerId c) const;
  json NextRound(Timestamp now) const;
  std::string SlotReason(const json& slot) const;

  void Unpriced(const TaskInfo& t, Timestamp now, const std::string& why, json& e) const;
  void Waiting(const TaskInfo& t, const Options& o, json& e) const;
  void Held(const TaskInfo& t, const Options& o, json& e) const;
  void Running(const TaskInfo& t, const QuincyGraph::SolvedTask& st, const Options& o,
               json& e) const;
  void Preempted(const TaskInfo& t, const Options& o, json& e) const;
  // FlowGraph's parts: per-job sums (and the roots), the job rows, and the
  // cluster, rack and computer rows.
  std::map<JobId, JobFlow> TaskFlows(json* roots, int64_t* waiting) const;
  json JobRows(std::map<JobId, JobFlow>& by_job, int64_t* unscheduled) const;
  void MachineRows(json& g, int64_t* placed) const;

  const QuincyPolicy& p_;
  const ClusterState& s_;
  const QuincyGraph& g_;
  const flow::FlowSolution& sol_;
};

int64_t QuincyExplainer::Price(flow::NodeId n) const {
  const std::vector<int64_t>& pi = sol_.potential;
  const flow::NodeId sink = g_.sink_node();
  if (n >= pi.size() || sink >= pi.size()) return 0;
  return pi[n] - pi[sink];
}

QuincyExplainer::Options QuincyExplainer::Read(const QuincyGraph::SolvedTask& st) const {
  Options o;
  o.all.reserve(st.arcs.size());
  for (const Arc& a : st.arcs) {
    const int64_t price = Price(a.head);
    o.all.push_back({&a, price, a.cost + price, Flow(a.arc)});
  }
  for (const Option& x : o.all) {
    if (x.flow > 0) o.chosen = &x;
  }
  return o;
}

template <typename Pred>
const QuincyExplainer::Option* QuincyExplainer::Cheapest(const Options& o, const Option* skip,
                                                         Pred want) const {
  const Option* best = nullptr;
  for (const Option& x : o.all) {
    if (&x == skip || x.arc->capacity <= 0 || !want(*x.arc)) continue;
    // Ties: the most specific place (a computer before a rack before X).
    if (best == nullptr || x.total < best->total ||
        (x.total == best->total && x.arc->to > best->arc->to)) {
      best = &x;
    }
  }
  return best;
}

std::pair<Duration, Duration> QuincyExplainer::TimesAtRound(const TaskInfo& t) const {
  const Timestamp at = *p_.solved_at_;
  // A task preempted by the round was kill-requested at `at` and has
  // neither waited nor run since, whatever it does now.
  if (t.since > at) return {t.waited, t.ran};
  return {t.WaitTime(at), t.RunTime(at)};
}

void QuincyExplainer::Parts(const TaskInfo& t, const QuincyGraph::SolvedTask& st, const Arc& a,
                            json* parts, json* inputs) const {
  const QuincyCostParams& cp = g_.params();
  int64_t sum = 0;
  auto part = [&](const char* key, int64_t milli) {
    (*parts)[key] = Paper(milli);
    sum += milli;
  };
  *parts = json::object();
  *inputs = json::object();
  auto [waited, ran] = TimesAtRound(t);
  if (st.root) {
    if (a.to == ArcTo::kSink) part("root_wait", a.cost);
  } else if (a.to == ArcTo::kUnscheduled) {
    part("wait", WaitCostMilli(cp, waited));
    *inputs = {{"waited_s", ToSeconds(waited)}, {"omega", cp.omega}};
  } else {
    const int32_t racks = s_.num_racks();
    TransferBytes b = a.to == ArcTo::kCluster ? t.locality.worst
                      : a.to == ArcTo::kRack  ? RackBytes(t.locality, a.id, racks)
                      : a.running ? RunningBytes(cp, t.locality, a.id, s_.rack_of(a.id), racks)
                                  : ComputerBytes(t.locality, a.id, s_.rack_of(a.id), racks);
    const int64_t data = DataCostMilli(cp, b);
    const int64_t rack = DataCostMilli(cp, {b.rack, 0});
    part("rack_switch", rack);
    part("core_switch", data - rack);
    *inputs = {{"rack_bytes", b.rack}, {"core_bytes", b.core}, {"psi", cp.psi}, {"xi", cp.xi}};
    if (a.running) {
      part("run_time", -InvestedMilli(ran));
      part("tie_break", -kRunningTieBreakMilli);
      (*inputs)["ran_s"] = ToSeconds(ran);
    }
  }
  // Data and wait costs of a task that is not running are capped at Ω.
  if (sum != a.cost) part("cap", a.cost - sum);
}

json QuincyExplainer::ArcDoc(const TaskInfo& t, const QuincyGraph::SolvedTask& st,
                             const Option& o) const {
  json parts, inputs;
  Parts(t, st, *o.arc, &parts, &inputs);
  return {{"to", Target(*o.arc, st.job)}, {"cost", Paper(o.arc->cost)},
          {"parts", std::move(parts)},    {"inputs", std::move(inputs)},
          {"capacity", o.arc->capacity},  {"flow", o.flow},
          {"price", Paper(o.price)},      {"total", Paper(o.total)},
          {"running", o.arc->running},    {"chosen", o.flow > 0}};
}

json QuincyExplainer::Allocation(JobId job) const {
  std::optional<QuincyGraph::SolvedJob> j = g_.SolvedJobOf(job);
  if (!j) return nullptr;
  const int64_t out = Flow(j->to_sink);
  const int64_t placed = j->f - out;  // flow conservation at U_j
  const JobInfo* info = s_.FindJob(job);
  return {{"lower_bound", j->e},
          {"upper_bound", j->f},
          {"tasks", j->tasks},
          {"placed_by_round", placed},
          {"running", info != nullptr ? info->placed : 0},
          {"to_sink", {{"flow", out}, {"capacity", j->to_sink_capacity}}},
          {"at_lower_bound", placed == j->e},
          {"at_upper_bound", placed == j->f},
          {"unscheduled_price", Paper(Price(j->unscheduled))}};
}

ComputerId QuincyExplainer::CheapestComputerIn(RackId r) const {
  ComputerId best = kNoComputer;
  for (ComputerId c : s_.rack_computers(r)) {
    if (g_.SolvedCapacity(g_.rack_computer_arc(c)) <= 0) continue;
    if (best == kNoComputer || Price(g_.computer_nodes()[c]) < Price(g_.computer_nodes()[best])) {
      best = c;
    }
  }
  return best;
}

ComputerId QuincyExplainer::SlotOf(const Arc& a) const {
  if (a.to == ArcTo::kComputer) return a.id;
  if (a.to == ArcTo::kRack) return CheapestComputerIn(a.id);
  RackId best = -1;
  for (RackId r = 0; r < s_.num_racks(); ++r) {
    if (g_.SolvedCapacity(g_.cluster_rack_arc(r)) <= 0) continue;
    if (best < 0 || Price(g_.rack_node(r)) < Price(g_.rack_node(best))) best = r;
  }
  return best < 0 ? kNoComputer : CheapestComputerIn(best);
}

// The occupant of full computer `c` that is cheapest to displace, priced
// from the same potentials: its node's price less the cost of the arc its
// flow takes (the price of `c` is at most that, for every occupant).
json QuincyExplainer::Occupant(ComputerId c) const {
  json best = nullptr;
  int64_t best_cost = 0;
  bool best_movable = false;
  for (TaskId id : s_.computer(c).tasks) {
    const TaskInfo* t = s_.FindTask(id);
    if (t == nullptr || t->state == TaskState::kKillRequested) continue;  // not in the flow
    std::optional<QuincyGraph::SolvedTask> st = g_.SolvedTaskOf(id);
    if (!st) continue;
    const Arc* in = nullptr;
    bool movable = false;
    for (const Arc& a : st->arcs) {
      if (Flow(a.arc) > 0) in = &a;
    }
    if (in == nullptr) continue;
    for (const Arc& a : st->arcs) movable |= &a != in && a.capacity > 0;
    movable &= !t->root;
    const int64_t cost = Price(st->node) - in->cost;
    if (best.is_null() || (movable && !best_movable) ||
        (movable == best_movable && cost < best_cost)) {
      best = {{"task", id},
              {"job", t->job},
              {"root", t->root},
              {"movable", movable},
              {"eviction_cost", Paper(cost)},
              {"ran_s", ToSeconds(t->RunTime(*p_.solved_at_))}};
      best_cost = cost;
      best_movable = movable;
    }
  }
  return best;
}

json QuincyExplainer::Slot(const Arc& a) const {
  const ComputerId c = SlotOf(a);
  if (c == kNoComputer) return nullptr;
  const flow::ArcId out = g_.computer_sink_arc(c);
  const int64_t slots = g_.SolvedCapacity(out);
  const int64_t used = Flow(out);
  json slot = {{"computer", c},
               {"rack", s_.rack_of(c)},
               {"price", Paper(Price(g_.computer_nodes()[c]))},
               {"slots", slots},
               {"used", used},
               {"full", used >= slots},
               {"displaces", nullptr}};
  if (used >= slots) slot["displaces"] = Occupant(c);
  return slot;
}

std::string QuincyExplainer::SlotReason(const json& slot) const {
  if (slot.is_null()) return "";
  const std::string where = explain::ComputerWords(slot["computer"].get<ComputerId>());
  if (!slot["full"].get<bool>()) {
    return "; " + where + " has a free slot, priced " + Num(slot["price"].get<double>());
  }
  const json& o = slot["displaces"];
  if (o.is_null()) {
    return "; every slot of " + where +
           " is taken or being freed for a task the last round "
           "placed there";
  }
  const std::string who = Task(o["task"].get<TaskId>(), o["job"].get<JobId>());
  if (o["root"].get<bool>())
    return "; " + where + " is full, down to the root task of job " +
           std::to_string(o["job"].get<JobId>()) + ", which is never preempted";
  if (!o["movable"].get<bool>()) {
    return "; " + where + " is full, held by " + who + ", which " + p_.name_ +
           " never moves or preempts";
  }
  return "; " + where + " is full and the cheapest occupant to displace, " + who + ", would cost " +
         Num(o["eviction_cost"].get<double>()) + " to evict";
}

json QuincyExplainer::NextRound(Timestamp now) const {
  if (p_.dirty_ || !p_.last_round_) return {{"after_current_event", true}, {"at_s", nullptr}};
  Timestamp at = std::max(now, *p_.last_round_ + p_.options_.round_interval);
  return {{"after_current_event", false}, {"at_s", ToSeconds(at)}};
}

void QuincyExplainer::Unpriced(const TaskInfo& t, Timestamp now, const std::string& why,
                               json& e) const {
  e["prices"] = false;
  json next = NextRound(now);
  e["next_round"] = next;
  const std::string when = next["after_current_event"].get<bool>()
                               ? "as soon as the scheduler runs after the current event"
                               : "at " + Num(next["at_s"].get<double>()) + " s";
  if (t.state == TaskState::kWaiting) {
    e["summary"] = "waits for its first round: " + why +
                   ", so no round has priced it; the next "
                   "round runs " +
                   when;
  } else {
    e["summary"] = explain::GenericSummary(s_, t, now) + "; " + why +
                   ", so no round has priced it yet (the next runs " + when + ")";
  }
}

void QuincyExplainer::Waiting(const TaskInfo& t, const Options& o, json& e) const {
  const Option& stay = *o.chosen;
  const Option* best = Cheapest(o, o.chosen, Placement);
  json slot = best != nullptr ? Slot(*best->arc) : json(nullptr);
  e["cheapest_placement"] = best == nullptr ? json(nullptr)
                                            : json{{"to", Target(*best->arc, t.job)},
                                                   {"total", Paper(best->total)},
                                                   {"margin", Paper(best->total - stay.total)},
                                                   {"slot", slot}};
  const std::string stay_words =
      std::string(t.root ? "leaving the root waiting" : "staying unscheduled") + " costs " +
      Num(Paper(stay.total));
  if (best == nullptr) {
    e["summary"] = "waits: " + stay_words + " and it has no open arc to any computer";
    return;
  }
  const std::string place = Words(*best->arc) + ", which costs " + Num(Paper(best->total)) + " (" +
                            Num(Paper(best->arc->cost)) +
                            " to read its input there plus "
                            "a price of " +
                            Num(Paper(best->price)) + ")";
  const json& alloc = e["allocation"];
  if (!t.root && alloc.is_object() && alloc["at_upper_bound"].get<bool>() &&
      alloc["upper_bound"].get<int64_t>() < alloc["tasks"].get<int64_t>()) {
    const std::string f = std::to_string(alloc["upper_bound"].get<int64_t>());
    const std::string why = p_.fair() ? "its fair share" : "its max_tasks";
    e["summary"] = "waits: job " + std::to_string(t.job) + " may run at most F_j = " + f +
                   " tasks (" + why + ") and the last round placed " + f +
                   ", so this task starts only when another task of job " + std::to_string(t.job) +
                   " gives up a slot; " + stay_words + ", its cheapest placement is " + place;
    return;
  }
  e["summary"] = "waits: " + stay_words + ", " +
                 (best->total == stay.total ? "as much as" : "less than") +
                 " its cheapest placement, " + place + SlotReason(slot);
}

void QuincyExplainer::Held(const TaskInfo& t, const Options& o, json& e) const {
  auto it = p_.held_.find(t.id);
  const ComputerId c = it != p_.held_.end() ? it->second : SlotOf(*o.chosen->arc);
  e["placed_on"] = c == kNoComputer ? json(nullptr) : json(c);
  std::string summary = "waits for a slot the last round gave it: its flow went to " +
                        FlowWords(*o.chosen->arc, t.job) + " (total " +
                        Num(Paper(o.chosen->total)) + ")";
  if (c != kNoComputer) {
    summary += ", placing it on " + explain::ComputerWords(c);
    for (TaskId id : s_.computer(c).tasks) {
      const TaskInfo* k = s_.FindTask(id);
      if (k != nullptr && k->state == TaskState::kKillRequested) {
        summary += ", where " + Task(id, k->job) + " is being killed to free the slot";
        break;
      }
    }
  }
  e["summary"] = summary + "; it starts when the slot is free";
}

void QuincyExplainer::Running(const TaskInfo& t, const QuincyGraph::SolvedTask& st,
                              const Options& o, json& e) const {
  const Option& here = *o.chosen;
  const Option* next = Cheapest(o, o.chosen, [](const Arc&) { return true; });
  e["next_best"] = next == nullptr ? json(nullptr)
                                   : json{{"to", Target(*next->arc, t.job)},
                                          {"total", Paper(next->total)},
                                          {"margin", Paper(next->total - here.total)}};
  const std::string where = explain::ComputerWords(t.computer) + ", " +
                            explain::PlacementWords(explain::PlacementKey(s_, t, t.computer));
  std::string alt =
      next == nullptr
          ? "; its other arcs are closed: " + p_.name_ +
                (t.root ? " never preempts roots" : " never moves or preempts a running task")
          : "; its next best option, " + Words(*next->arc) + ", would cost " +
                Num(Paper(next->total)) + " (margin " + Num(Paper(next->total - here.total)) + ")";
  if (st.running == kNoComputer) {  // the last round placed it
    e["summary"] = "runs on " + where + ": the last round placed it there, its flow going to " +
                   FlowWords(*here.arc, t.job) + " at a total of " + Num(Paper(here.total)) + alt;
    return;
  }
  e["summary"] = "runs on " + where + ": staying costs " + Num(Paper(here.total)) +
                 " (its data cost there less its run time, " + Num(Paper(here.arc->cost)) +
                 ", plus the computer's price, " + Num(Paper(here.price)) + ")" + alt;
}

void QuincyExplainer::Preempted(const TaskInfo& t, const Options& o, json& e) const {
  const Option* stay = nullptr;
  for (const Option& x : o.all) {
    if (x.arc->running) stay = &x;
  }
  std::string summary = "the last round preempted it: its flow went to " +
                        FlowWords(*o.chosen->arc, t.job) + " (total " +
                        Num(Paper(o.chosen->total)) + ")";
  if (stay != nullptr) {
    summary += " rather than staying on " + explain::ComputerWords(stay->arc->id) + " (total " +
               Num(Paper(stay->total)) + ")";
  }
  summary += t.state == TaskState::kWaiting
                 ? "; the kill is confirmed and it waits for the next round"
                 : "; it keeps its slot until the worker confirms the kill";
  e["summary"] = summary;
}

void QuincyExplainer::Explain(const TaskInfo& t, Timestamp now, json& e) const {
  e["round"] = Solved() ? json{{"at_s", ToSeconds(*p_.solved_at_)},
                               {"age_s", ToSeconds(now - *p_.solved_at_)}}
                        : json(nullptr);
  if (!Solved()) {
    e["prices"] = false;
    e["summary"] = p_.round_error_.empty()
                       ? explain::GenericSummary(s_, t, now) + "; no round has solved the flow yet"
                       : explain::GenericSummary(s_, t, now) + "; the last round failed (" +
                             p_.round_error_ + ")";
    return;
  }
  std::optional<QuincyGraph::SolvedTask> st = g_.SolvedTaskOf(t.id);
  if (!st) {
    Unpriced(t, now, "it was submitted or re-queued after the last round", e);
    return;
  }
  const bool preempted = p_.preempted_.count(t.id) != 0 && st->running != kNoComputer;
  if (!preempted && Changed(t, *st)) {
    Unpriced(t, now, "it changed state after the last round", e);
    return;
  }
  Options o = Read(*st);
  json arcs = json::array();
  for (const Option& x : o.all) arcs.push_back(ArcDoc(t, *st, x));
  e["prices"] = true;
  e["node_price"] = Paper(Price(st->node));
  e["arcs"] = std::move(arcs);
  e["allocation"] = t.root ? json(nullptr) : Allocation(st->job);
  if (o.chosen == nullptr) {
    e["summary"] = explain::GenericSummary(s_, t, now) + "; the last round sent it no flow";
    return;
  }
  e["chosen"] = {{"to", Target(*o.chosen->arc, st->job)}, {"total", Paper(o.chosen->total)}};
  if (preempted) {
    Preempted(t, o, e);
  } else if (t.placed()) {
    Running(t, *st, o, e);
  } else if (Placement(*o.chosen->arc)) {
    Held(t, o, e);
  } else {
    Waiting(t, o, e);
  }
}

void QuincyExplainer::Describe(json& out) const {
  const QuincyOptions& o = p_.options_;
  out["parameters"] = {{"regime", QuincyRegimeName(o.regime)},
                       {"preemption", p_.preemptive()},
                       {"fairness", p_.fair()},
                       {"omega", o.costs.omega},
                       {"psi", o.costs.psi},
                       {"xi", o.costs.xi},
                       {"max_cost", Paper(o.costs.max_cost_milli)},
                       {"round_interval_s", ToSeconds(o.round_interval)},
                       {"solver", o.solver}};
  const std::vector<JobId>& jobs = s_.admitted_jobs();
  std::vector<int> tasks;
  for (JobId j : jobs) {
    tasks.push_back(g_.HasJob(j) ? static_cast<int>(g_.job_tasks(j)) : 0);
  }
  std::vector<int> shares = explain::FairShares(s_, tasks);
  json rows = json::array();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& j = s_.job(jobs[i]);
    auto b = p_.bounds_.find(jobs[i]);
    const bool known = b != p_.bounds_.end();
    rows.push_back({{"job", j.id},
                    {"running", j.placed},
                    {"waiting", j.waiting},
                    {"tasks", tasks[i]},
                    {"fair_share", shares[i]},
                    {"lower_bound", known ? json(b->second.first) : json(nullptr)},
                    {"upper_bound", known ? json(b->second.second) : json(nullptr)}});
  }
  out["jobs"] = std::move(rows);
}

std::map<JobId, QuincyExplainer::JobFlow> QuincyExplainer::TaskFlows(json* roots,
                                                                     int64_t* waiting) const {
  std::map<JobId, JobFlow> by_job;
  g_.ForEachSolvedTask([&](TaskId id, const QuincyGraph::SolvedTask& st) {
    if (st.root) {
      json to = nullptr;
      for (const Arc& a : st.arcs) {
        if (Flow(a.arc) == 0) continue;
        to = Target(a, st.job);
        if (a.to == ArcTo::kSink) *waiting += Flow(a.arc);
      }
      roots->push_back({{"job", st.job}, {"task", id}, {"flow_to", to}});
      return;
    }
    JobFlow& f = by_job[st.job];
    ++f.tasks;
    for (const Arc& a : st.arcs) {
      const int64_t x = Flow(a.arc);
      if (x == 0) continue;
      if (a.to == ArcTo::kUnscheduled) f.unscheduled += x;
      if (a.to == ArcTo::kCluster) f.cluster += x;
      if (a.to == ArcTo::kRack) f.racks[a.id] += x;
      if (a.to == ArcTo::kComputer) f.computers[a.id] += x;
    }
  });
  std::sort(roots->begin(), roots->end(),
            [](const json& a, const json& b) { return a["job"] < b["job"]; });
  return by_job;
}

json QuincyExplainer::JobRows(std::map<JobId, JobFlow>& by_job, int64_t* unscheduled) const {
  json jobs = json::array();
  for (const QuincyGraph::SolvedJob& j : g_.SolvedJobs()) {
    const JobFlow& f = by_job[j.job];
    json racks = json::array(), computers = json::array();
    for (const auto& [r, x] : f.racks) racks.push_back({{"rack", r}, {"flow", x}});
    for (const auto& [c, x] : f.computers) computers.push_back({{"computer", c}, {"flow", x}});
    const int64_t out = Flow(j.to_sink);
    *unscheduled += out;
    jobs.push_back(
        {{"job", j.job},
         {"lower_bound", j.e},
         {"upper_bound", j.f},
         {"tasks", f.tasks},
         {"unscheduled",
          {{"supply", j.supply}, {"to_sink", {{"flow", out}, {"capacity", j.to_sink_capacity}}}}},
         {"flow_to",
          {{"unscheduled", f.unscheduled},
           {"cluster", f.cluster},
           {"racks", std::move(racks)},
           {"computers", std::move(computers)}}}});
  }
  return jobs;
}

void QuincyExplainer::MachineRows(json& g, int64_t* placed) const {
  json to_racks = json::array(), racks = json::array(), computers = json::array();
  for (RackId r = 0; r < s_.num_racks(); ++r) {
    const flow::ArcId xr = g_.cluster_rack_arc(r);
    to_racks.push_back({{"rack", r}, {"flow", Flow(xr)}, {"capacity", g_.SolvedCapacity(xr)}});
    json to_computers = json::array();
    for (ComputerId c : s_.rack_computers(r)) {
      const flow::ArcId rc = g_.rack_computer_arc(c);
      to_computers.push_back(
          {{"computer", c}, {"flow", Flow(rc)}, {"capacity", g_.SolvedCapacity(rc)}});
    }
    racks.push_back({{"rack", r}, {"to_computers", std::move(to_computers)}});
  }
  for (ComputerId c = 0; c < s_.num_computers(); ++c) {
    const flow::ArcId cs = g_.computer_sink_arc(c);
    *placed += Flow(cs);
    computers.push_back(
        {{"computer", c}, {"to_sink", {{"flow", Flow(cs)}, {"capacity", g_.SolvedCapacity(cs)}}}});
  }
  g["cluster"] = {{"to_racks", std::move(to_racks)}};
  g["racks"] = std::move(racks);
  g["computers"] = std::move(computers);
}

json QuincyExplainer::FlowGraph() const {
  json g, roots = json::array();
  int64_t roots_waiting = 0, unscheduled = 0, placed = 0;
  std::map<JobId, JobFlow> by_job = TaskFlows(&roots, &roots_waiting);
  g["round"] = {{"at_s", ToSeconds(*p_.solved_at_)}};
  g["jobs"] = JobRows(by_job, &unscheduled);
  g["roots"] = std::move(roots);
  MachineRows(g, &placed);
  const QuincyRoundStats& st = p_.stats_;
  g["totals"] = {{"nodes", st.nodes},
                 {"arcs", st.arcs},
                 {"cost", Paper(sol_.cost)},
                 {"placed", placed},
                 {"unscheduled", unscheduled},
                 {"roots_waiting", roots_waiting},
                 {"sink_demand", -g_.SolvedSupply(g_.sink_node())}};
  return g;
}

// ---- QuincyPolicy's overrides ----

void QuincyPolicy::Describe(const ClusterState& s, Timestamp now, json* out) const {
  (void)now;
  QuincyExplainer(*this, s).Describe(*out);
}

void QuincyPolicy::LastRound(json* out) const {
  json& r = *out;
  r["rounds"] = stats_.rounds;
  r["at_s"] = solved_at_ ? json(ToSeconds(*solved_at_)) : json(nullptr);
  r["solver"] = options_.solver;
  r["nodes"] = stats_.nodes;
  r["arcs"] = stats_.arcs;
  r["changes"] = stats_.changes;
  // Zero without a stats clock (SchedulerOptions::stats_clock).
  r["update_ms"] = explain::Millis(stats_.update);
  r["solve_ms"] = explain::Millis(stats_.solve);
  r["extract_ms"] = explain::Millis(stats_.extract);
  r["cost"] = Paper(stats_.cost);
  r["starts"] = stats_.starts;
  r["kills"] = stats_.kills;
  r["error"] = round_error_.empty() ? json(nullptr) : json(round_error_);
}

void QuincyPolicy::Explain(const ClusterState& s, const TaskInfo& t, Timestamp now,
                           json* out) const {
  QuincyExplainer(*this, s).Explain(t, now, *out);
}

bool QuincyPolicy::FlowGraph(const ClusterState& s, json* out) const {
  if (!solved_at_ || !graph_.checkpointed()) return false;
  *out = QuincyExplainer(*this, s).FlowGraph();
  return true;
}

}  // namespace copse::scheduler

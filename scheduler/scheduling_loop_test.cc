#include "scheduler/scheduling_loop.h"

#include <gtest/gtest.h>

#include <vector>

#include "scheduler/testing/scenario.h"

namespace copse::scheduler {
namespace {

using testing::Sec;

// Records decisions; optionally confirms starts at once (as a simulator does)
// or fails.
class RecordingSink final : public DecisionSink {
 public:
  SchedulingLoop* loop = nullptr;
  bool confirm = false;
  Status fail;
  std::vector<std::pair<Timestamp, Decision>> seen;

  Status Apply(const Decision& d, Timestamp at) override {
    seen.push_back({at, d});
    if (!fail.ok()) return fail;
    if (confirm && d.kind == Decision::Kind::kStartTask) {
      return loop->Handle(TaskStarted{d.task}, at);
    }
    return Status::Ok();
  }
};

JobSubmitted Job(JobId id, Timestamp at) {
  JobSubmitted e{id, kNoTask, {}};
  e.attributes.submitted = at;
  e.attributes.root_in_cluster = false;
  return e;
}

TEST(SchedulingLoopTest, RunsRoundsUntilNothingNewAndFeedsTheSinkInOrder) {
  auto s = testing::MakeScheduler("GF", Topology::Uniform(1, 2, 1));
  RecordingSink sink;
  SchedulingLoop loop(*s, sink);
  sink.loop = &loop;
  sink.confirm = true;
  ASSERT_TRUE(loop.Handle(Job(1, Sec(0)), Sec(0)).ok());
  for (TaskId t = 1; t <= 3; ++t) ASSERT_TRUE(loop.Handle(TaskSubmitted{t, 1, {}}, Sec(0)).ok());
  auto done = loop.Run(Sec(1));
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(*done, Sec(1));
  // The admission, then two starts (two slots); a second round decided nothing.
  ASSERT_EQ(sink.seen.size(), 3u);
  EXPECT_EQ(sink.seen[0].second.kind, Decision::Kind::kAdmitJob);
  EXPECT_EQ(sink.seen[1].second.kind, Decision::Kind::kStartTask);
  EXPECT_EQ(sink.seen[2].second.kind, Decision::Kind::kStartTask);
  EXPECT_EQ(loop.rounds(), 2u);
  EXPECT_EQ(s->state().job(1).placed, 2);

  // A completion frees a slot: the next Run starts the third task.
  ASSERT_TRUE(loop.Handle(TaskCompleted{sink.seen[1].second.task}, Sec(2)).ok());
  ASSERT_TRUE(loop.Run(Sec(2)).ok());
  ASSERT_EQ(sink.seen.size(), 4u);
  EXPECT_EQ(sink.seen[3].second.task, 3);
  EXPECT_EQ(sink.seen[3].first, Sec(2));
}

TEST(SchedulingLoopTest, SinkErrorsEndTheRun) {
  auto s = testing::MakeScheduler("GF", Topology::Uniform(1, 1, 1));
  RecordingSink sink;
  sink.fail = Unavailable("worker gone");
  SchedulingLoop loop(*s, sink);
  ASSERT_TRUE(loop.Handle(Job(1, Sec(0)), Sec(0)).ok());
  auto done = loop.Run(Sec(0));
  EXPECT_EQ(done.status().code(), StatusCode::kUnavailable);
}

TEST(SchedulingLoopTest, AfterRoundMovesWhenDecisionsTakeEffect) {
  auto s = testing::MakeScheduler("GF", Topology::Uniform(1, 1, 1));
  RecordingSink sink;
  std::vector<RoundInfo> rounds;
  ManualClock wall(Sec(100));
  SchedulingLoop::Hooks hooks;
  hooks.after_round = [&](const RoundInfo& r) -> Result<Timestamp> {
    rounds.push_back(r);
    return r.at + Duration{250'000};
  };
  SchedulingLoop loop(*s, sink, LoopOptions{1000, Duration{1000}, &wall}, hooks);
  ASSERT_TRUE(loop.Handle(Job(1, Sec(0)), Sec(0)).ok());
  ASSERT_TRUE(loop.Handle(TaskSubmitted{1, 1, {}}, Sec(0)).ok());
  auto done = loop.RunRounds(Sec(1), 1);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(*done, Sec(1.25));
  ASSERT_EQ(rounds.size(), 1u);
  EXPECT_EQ(rounds[0].at, Sec(1));
  EXPECT_EQ(rounds[0].wall, Duration{0});  // the manual clock did not move
  EXPECT_EQ(rounds[0].decisions, 2u);      // admission and start
  for (const auto& [at, d] : sink.seen) EXPECT_EQ(at, Sec(1.25));
  // Moving decisions back in time is a bug in the hook.
  hooks.after_round = [](const RoundInfo& r) -> Result<Timestamp> { return r.at - Duration{1}; };
  SchedulingLoop bad(*s, sink, {}, hooks);
  EXPECT_EQ(bad.RunRounds(Sec(2), 1).status().code(), StatusCode::kInternal);
}

// A wakeup already served is not named again for the same instant, so a
// policy whose wakeup stays in the past cannot keep a driver at one instant.
TEST(SchedulingLoopTest, ServedWakeupWaitsOneTick) {
  auto s = testing::MakeScheduler("QFP", Topology::Uniform(1, 1, 1));
  RecordingSink sink;
  SchedulingLoop loop(*s, sink);
  ASSERT_TRUE(loop.Handle(Job(1, Sec(0)), Sec(0)).ok());
  ASSERT_TRUE(loop.Handle(TaskSubmitted{1, 1, {}}, Sec(0)).ok());
  ASSERT_TRUE(loop.Handle(TaskSubmitted{2, 1, {}}, Sec(0)).ok());
  ASSERT_TRUE(loop.Run(Sec(0)).ok());
  ASSERT_EQ(loop.NextWakeup(), Sec(1));  // the Quincy round timer
  auto early = loop.Wakeup(Sec(0.5));
  ASSERT_TRUE(early.ok());
  EXPECT_FALSE(*early);
  auto woke = loop.Wakeup(Sec(1));
  ASSERT_TRUE(woke.ok());
  EXPECT_TRUE(*woke);
  // Until a round runs, the policy still names 1 s: served, so one tick later.
  EXPECT_EQ(loop.NextWakeup(), Sec(1) + Duration{1000});
  ASSERT_TRUE(loop.Run(Sec(1)).ok());
  EXPECT_EQ(loop.NextWakeup(), Sec(2));
}

}  // namespace
}  // namespace copse::scheduler

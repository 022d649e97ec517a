// Fakes of net::Link and net::Timer for unit tests of the parts that keep a
// connection to the master (the worker's agent, a job's root): the test
// reads what was sent, plays the connection's state, and fires timers.
// Test-only: no product target includes it.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "common/net/frame.h"
#include "common/net/link.h"

namespace copse::net::testing {

class FakeLink final : public Link {
 public:
  void Start() override { started = true; }
  void Stop() override { stopped = true; }
  // Kept while `connected`; refused (false) otherwise, as by a link that is down.
  bool Send(Protocol protocol, std::vector<uint8_t> payload) override {
    if (!connected) return false;
    sent.push_back({protocol, PayloadKind::kMessage, std::move(payload)});
    return true;
  }
  void Close(const Status& why) override { closed.push_back(why); }

  bool connected = true;
  bool started = false, stopped = false;
  std::vector<Frame> sent;
  std::vector<Status> closed;
};

class FakeTimer final : public Timer {
 public:
  void Arm(Duration after, std::function<void()> fn) override {
    armed.push_back(after);
    pending = std::move(fn);
  }
  void Cancel() override { pending = nullptr; }
  // The timer expires: what is pending runs.
  void Fire() {
    ASSERT_TRUE(pending) << "nothing armed";
    auto fn = std::move(pending);
    pending = nullptr;
    fn();
  }
  std::vector<Duration> armed;
  std::function<void()> pending;
};

}  // namespace copse::net::testing

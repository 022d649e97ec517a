#include "sim/sim_network.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace copse::sim {
namespace {

namespace sg4 = simgrid::s4u;

// SimGrid allows one engine per process, so each case simulates in a child.
std::string InChild(const std::function<std::string()>& fn) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string s = fn();
    ssize_t w = write(fds[1], s.data(), s.size());
    _exit(w == static_cast<ssize_t>(s.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return out;
}

struct Transfer {
  int from = 0;  // computer, or -1 - rack for a rack pool
  int to = 0;
  double bytes = 0;
};

// Finish times of transfers that all start at time 0, "t0 t1 ...".
std::string Simulate(const NetworkSpec& spec, const std::vector<Transfer>& transfers) {
  return InChild([&] {
    sg4::Engine& e = CreateEngine();
    auto net = SimNetwork::Build(spec);
    if (!net.ok()) return net.status().ToString();
    std::vector<double> done(transfers.size(), -1);
    sg4::Actor::create("driver", (*net)->controller(), [&] {
      std::vector<sg4::CommPtr> comms;
      for (const Transfer& t : transfers) {
        sg4::Host* src = t.from >= 0 ? (*net)->computer(t.from) : (*net)->rack_pool(-1 - t.from);
        comms.push_back(
            sg4::Comm::sendto_async(src, (*net)->computer(t.to), static_cast<uint64_t>(t.bytes)));
      }
      std::vector<sg4::CommPtr> pending = comms;
      while (!pending.empty()) {
        ssize_t i = sg4::Comm::wait_any(pending);
        for (size_t k = 0; k < comms.size(); ++k) {
          if (comms[k] == pending[i]) done[k] = sg4::Engine::get_clock();
        }
        pending.erase(pending.begin() + i);
      }
    });
    e.run();
    std::ostringstream out;
    for (double d : done) out << d << " ";
    return out.str();
  });
}

// Two racks of two computers: c0, c1 in rack 0; c2, c3 in rack 1.
NetworkSpec TwoByTwo(double uplink_bps) { return NetworkSpec{{0, 0, 1, 1}, 2, 1e9, uplink_bps}; }

TEST(SimNetworkTest, LoneGigabyteOverGigabitTakesEightSeconds) {
  EXPECT_EQ(Simulate(TwoByTwo(6e9), {{0, 2, 1e9}}), "8 ");
  EXPECT_EQ(Simulate(TwoByTwo(6e9), {{0, 1, 1e9}}), "8 ");
}

TEST(SimNetworkTest, TwoTransfersShareAGigabitUplink) {
  // c0->c2 and c1->c3 both cross rack 0's and rack 1's 1 Gbit/s uplinks:
  // 0.5 Gbit/s each, 16 s. With 6 Gbit/s uplinks only the computer links
  // bound them: 8 s each.
  EXPECT_EQ(Simulate(TwoByTwo(1e9), {{0, 2, 1e9}, {1, 3, 1e9}}), "16 16 ");
  EXPECT_EQ(Simulate(TwoByTwo(6e9), {{0, 2, 1e9}, {1, 3, 1e9}}), "8 8 ");
  // Max-min: 0.5 GB c0->c2 and 1 GB c1->c3 share the uplink at 0.5 Gbit/s
  // until the first ends at 8 s; the second then gets 1 Gbit/s for its
  // remaining 0.5 GB: 4 s more.
  EXPECT_EQ(Simulate(TwoByTwo(1e9), {{0, 2, 0.5e9}, {1, 3, 1e9}}), "8 12 ");
}

TEST(SimNetworkTest, FullDuplexAndSharedSenderLink) {
  // Opposite directions do not share a full-duplex link.
  EXPECT_EQ(Simulate(TwoByTwo(1e9), {{0, 2, 1e9}, {2, 0, 1e9}}), "8 8 ");
  // One sender to two receivers shares its own link.
  EXPECT_EQ(Simulate(TwoByTwo(6e9), {{0, 1, 1e9}, {0, 2, 1e9}}), "16 16 ");
}

TEST(SimNetworkTest, RackPoolCarriesTheRacksAggregateBandwidth) {
  // Rack 0's pool has 2 Gbit/s; two receivers in rack 1 behind a 6 Gbit/s
  // uplink each get 1 Gbit/s (their own links).
  EXPECT_EQ(Simulate(TwoByTwo(6e9), {{-1, 2, 1e9}, {-1, 3, 1e9}}), "8 8 ");
  EXPECT_EQ(Simulate(TwoByTwo(1e9), {{-1, 2, 1e9}, {-1, 3, 1e9}}), "16 16 ");
}

TEST(SimNetworkTest, RejectsBadSpecs) {
  EXPECT_EQ(Simulate(NetworkSpec{{0, 3}, 2, 1e9, 1e9}, {}).substr(0, 16), "invalid argument");
  EXPECT_EQ(Simulate(NetworkSpec{{0}, 1, 0, 1e9}, {}).substr(0, 16), "invalid argument");
}

}  // namespace
}  // namespace copse::sim

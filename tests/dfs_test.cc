// Integration tests for the DFS: a real master and six workers (two racks) on
// loopback, driven through `copse fs` and the client library, with faults
// injected by killing processes and flipping stored bytes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "common/config.h"
#include "common/net/auth.h"
#include "dfs/block_store.h"
#include "dfs/client.h"
#include "dfs/local_read.h"
#include "tests/harness/harness.h"

namespace copse::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Numbered lines of varying length, about `bytes` long.
std::string TextOf(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out;
  for (int i = 0; out.size() < bytes; ++i) {
    out += "line " + std::to_string(i) + " ";
    out += std::string(rng() % 120, static_cast<char>('a' + rng() % 26));
    out += "\n";
  }
  return out;
}

class DfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalClusterSpec spec;
    spec.worker_timeout_ms = 1000;
    // 2 MiB blocks (two chunks each), short delays so faults heal quickly.
    spec.extra_cluster_keys =
        "block_size_mb = 2\n[dfs]\nrereplication_delay_ms = 1000\nuncommitted_grace_ms = 3000\n";
    config_path_ = WriteClusterConfig(dir_.path(), spec);
    auto c = LoadClusterConfig(config_path_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    config_ = *c;
    CommandResult r = Copse({"cluster", "up"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  void TearDown() override {
    RunCopse("copse", {"--config", config_path_.string(), "cluster", "down"});
    ReapChildren();
  }

  CommandResult Copse(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_path_.string()});
    return RunCopse("copse", args);
  }

  std::filesystem::path Local(const std::string& name, const std::string& content) {
    std::filesystem::path p = dir_.path() / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

  json Stat(const std::string& path) {
    CommandResult r = Copse({"fs", "stat", path, "--json"});
    if (r.exit_code != 0) return nullptr;
    return json::parse(r.out);
  }

  // True when every block of `path` has `n` live replicas on distinct
  // computers, and (when `exact`) no other replica, live or dead.
  bool FullyReplicated(const std::string& path, size_t n, bool exact = true) {
    json st = Stat(path);
    if (st.is_null()) return false;
    for (const json& p : st["partitions"]) {
      for (const json& b : p["blocks"]) {
        std::set<std::string> live;
        for (const json& r : b["replicas"])
          if (r["live"].get<bool>()) live.insert(r["computer"].get<std::string>());
        if (live.size() != n || (exact && b["replicas"].size() != n)) return false;
      }
    }
    return true;
  }

  int PidOf(const std::string& role, const std::string& computer = "") {
    std::ifstream in(dir_.path() / "data" / "cluster.pids.json");
    json file = json::parse(in);
    for (const json& p : file["processes"])
      if (p["role"] == role && p["computer"] == computer) return p["pid"];
    return 0;
  }

  std::string StateOf(const std::string& computer) {
    CommandResult r = Copse({"cluster", "status", "--json"});
    if (r.exit_code != 0) return "";
    json st = json::parse(r.out);
    for (const json& c : st["computers"])
      if (c["name"] == computer) return c["state"];
    return "";
  }

  void Kill(const std::string& role, const std::string& computer, int sig = SIGKILL) {
    int pid = PidOf(role, computer);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, sig), 0);
    ASSERT_TRUE(WaitFor(
        [&] {
          ReapChildren();
          return !ProcessAlive(pid);
        },
        seconds(10)));
  }

  std::unique_ptr<dfs::DfsClient> Client(const std::string& computer) {
    auto secret = net::LoadSecret(config_.secret_file);
    EXPECT_TRUE(secret.ok());
    dfs::DfsClientOptions o;
    o.computer = computer;
    o.timeout = milliseconds(5000);
    auto c = dfs::DfsClient::Connect(config_, *secret, o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  TempDir dir_;
  std::filesystem::path config_path_;
  ClusterConfig config_;
};

TEST_F(DfsTest, PutGetCatLsStatRm) {
  std::string text = TextOf(3 << 20, 1);
  auto local = Local("in.txt", text);
  CommandResult put =
      Copse({"fs", "put", local.string(), "/data/text", "--partitions", "3", "--computer", "c00"});
  ASSERT_EQ(put.exit_code, 0) << put.err;

  json st = Stat("/data/text");
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st["size"], text.size());
  EXPECT_EQ(st["replication"], 3);
  ASSERT_EQ(st["partitions"].size(), 3u);
  for (const json& p : st["partitions"]) {
    EXPECT_GE(p["blocks"].size(), 1u);
    for (const json& b : p["blocks"]) {
      // One replica on the writer, the other two on two computers of the other rack.
      ASSERT_EQ(b["replicas"].size(), 3u);
      std::multiset<std::string> racks;
      std::set<std::string> computers;
      for (const json& r : b["replicas"]) {
        racks.insert(r["rack"].get<std::string>());
        computers.insert(r["computer"].get<std::string>());
      }
      EXPECT_EQ(computers.size(), 3u);
      EXPECT_TRUE(computers.count("c00")) << "a replica on the writer";
      EXPECT_EQ(racks.count("r1"), 2u) << "two replicas in the other rack";
    }
  }

  auto out = dir_.path() / "out.txt";
  CommandResult get = Copse({"fs", "get", "/data/text", out.string()});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(ReadFile(out), text);

  // Partitions split at line ends and concatenate to the file.
  std::string joined;
  for (int i = 0; i < 3; ++i) {
    CommandResult cat = Copse({"fs", "cat", "/data/text", "--partition", std::to_string(i)});
    ASSERT_EQ(cat.exit_code, 0) << cat.err;
    ASSERT_FALSE(cat.out.empty());
    EXPECT_EQ(cat.out.back(), '\n');
    joined += cat.out;
  }
  EXPECT_EQ(joined, text);

  // Locality counters: the writer's computer reads everything locally, and
  // straight from its worker's blob files (the local read path); a computer
  // of the other rack reads within its rack.
  CommandResult local_cat = Copse({"fs", "cat", "/data/text", "--computer", "c00", "--stats"});
  ASSERT_EQ(local_cat.exit_code, 0) << local_cat.err;
  EXPECT_EQ(local_cat.out, text);
  EXPECT_NE(local_cat.err.find(fmt::format("read {} bytes: {} local ({} through the local read "
                                           "path), 0 within the rack, 0 across",
                                           text.size(), text.size(), text.size())),
            std::string::npos)
      << local_cat.err;
  // The worker's local read socket refuses a peer without the secret.
  auto intruder =
      dfs::LocalReadChannel::Connect(dfs::LocalReadSocketPath(dir_.path() / "data" / "c00"),
                                     "not-the-cluster-secret-0123456789", seconds(10));
  EXPECT_EQ(intruder.status().code(), StatusCode::kPermissionDenied)
      << intruder.status().ToString();
  CommandResult rack_cat = Copse({"fs", "cat", "/data/text", "--computer", "c12", "--stats"});
  ASSERT_EQ(rack_cat.exit_code, 0);
  EXPECT_EQ(rack_cat.out, text);

  CommandResult ls = Copse({"fs", "ls", "/data", "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  json entries = json::parse(ls.out);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["path"], "/data/text");
  EXPECT_EQ(entries[0]["partitions"], 3);

  // Fixed-size records never straddle partitions.
  std::string records;
  for (int i = 0; i < 1000; ++i) records += fmt::format("{:010d}{}", i, std::string(90, 'x'));
  auto rec = Local("rec.bin", records);
  ASSERT_EQ(Copse({"fs", "put", rec.string(), "/data/rec", "--partitions", "3", "--record-size",
                   "100", "--replication", "2"})
                .exit_code,
            0);
  json rst = Stat("/data/rec");
  ASSERT_FALSE(rst.is_null());
  EXPECT_EQ(rst["replication"], 2);
  for (const json& p : rst["partitions"]) EXPECT_EQ(p["size"].get<uint64_t>() % 100, 0u);

  ASSERT_EQ(Copse({"fs", "rm", "/data/text"}).exit_code, 0);
  CommandResult gone = Copse({"fs", "cat", "/data/text"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("/data/text"), std::string::npos) << gone.err;
}

TEST_F(DfsTest, BadRequestsSayWhatIsWrong) {
  auto local = Local("in.txt", "a\nb\n");
  CommandResult many = Copse({"fs", "put", local.string(), "/x", "--replication", "7"});
  EXPECT_EQ(many.exit_code, 1);
  EXPECT_NE(many.err.find("not enough computers for the requested replication"), std::string::npos)
      << many.err;
  CommandResult mode = Copse({"fs", "put", local.string(), "/x", "--placement", "sideways"});
  EXPECT_EQ(mode.exit_code, 2);
  EXPECT_NE(mode.err.find("placement"), std::string::npos) << mode.err;
  CommandResult missing = Copse({"fs", "put", (dir_.path() / "nope").string(), "/x"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope"), std::string::npos);
  CommandResult rel = Copse({"fs", "put", local.string(), "relative/path"});
  EXPECT_EQ(rel.exit_code, 2) << rel.err;
  CommandResult confine = Copse(
      {"fs", "put", local.string(), "/y", "--placement", "confine 3 r0", "--partitions", "2"});
  ASSERT_EQ(confine.exit_code, 0) << confine.err;
  json st = Stat("/y");
  for (const json& p : st["partitions"])
    for (const json& b : p["blocks"])
      for (const json& r : b["replicas"]) EXPECT_EQ(r["rack"], "r0");
  // Nothing half-written is listed.
  CommandResult ls = Copse({"fs", "ls", "--json"});
  ASSERT_EQ(ls.exit_code, 0);
  EXPECT_EQ(json::parse(ls.out).size(), 1u) << ls.out;
}

TEST_F(DfsTest, CorruptReplicaIsReadFromAnotherAndReplaced) {
  std::string text = TextOf(3 << 20, 2);
  auto local = Local("in.txt", text);
  ASSERT_EQ(Copse({"fs", "put", local.string(), "/c", "--computer", "c00"}).exit_code, 0);
  json st = Stat("/c");
  ASSERT_FALSE(st.is_null());
  std::vector<uint64_t> blocks;
  for (const json& b : st["partitions"][0]["blocks"]) blocks.push_back(b["id"]);
  ASSERT_FALSE(blocks.empty());

  // Flip bytes in every block's first chunk on c00 while its worker is down.
  Kill("worker", "c00");
  {
    dfs::BlockStoreOptions o;
    o.dir = dir_.path() / "data" / "c00" / "blocks";
    o.computer = "c00";
    auto store = dfs::BlockStore::Open(o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (uint64_t id : blocks) {
      std::vector<uint8_t> framed;
      ASSERT_TRUE((*store)->ReadChunk(id, 0, &framed).ok());
      framed[10] ^= 0x5a;
      ASSERT_TRUE((*store)->CorruptChunkForTesting(id, 0, framed).ok());
    }
  }
  ASSERT_EQ(Copse({"cluster", "up"}).exit_code, 0);

  CommandResult cat = Copse({"fs", "cat", "/c", "--computer", "c00", "--stats"});
  ASSERT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_EQ(cat.out, text);
  // The local read path finds the flipped bytes too and leaves the block to
  // the data port, whose worker deletes and reports its bad copy.
  EXPECT_EQ(cat.err.find(fmt::format("{} local", text.size())), std::string::npos)
      << "the bad local copy must not be served: " << cat.err;
  // The bad copies are dropped and every block has three good replicas again.
  ASSERT_TRUE(WaitFor([&] { return FullyReplicated("/c", 3); }, seconds(15))) << Stat("/c").dump();
  CommandResult again = Copse({"fs", "cat", "/c", "--computer", "c00"});
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.out, text);
}

TEST_F(DfsTest, DeadWorkersBlocksAreCopiedWithinTheDelay) {
  std::string text = TextOf(4 << 20, 3);
  auto local = Local("in.txt", text);
  ASSERT_EQ(Copse({"fs", "put", local.string(), "/r", "--computer", "c01", "--partitions", "2"})
                .exit_code,
            0);
  ASSERT_TRUE(FullyReplicated("/r", 3));
  Kill("worker", "c01");
  // The master marks c01 dead at some moment between the start of the last
  // status query that still said otherwise and the one that says "dead". The
  // start of that last query is a lower bound on the moment of death, so the
  // time from it to full replication is at least the real delay: the check
  // below cannot fail because the polls were slow (they are under ASan on a
  // loaded machine), only because a copy started early.
  auto not_yet_dead = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto asked = std::chrono::steady_clock::now();
        std::string state = StateOf("c01");
        if (state == "live") not_yet_dead = asked;
        return state == "dead";
      },
      seconds(10)));
  // The re-replication delay (1 s) and the copies; bounded generously for ASan.
  ASSERT_TRUE(WaitFor([&] { return FullyReplicated("/r", 3, false); }, seconds(15)))
      << Stat("/r").dump();
  EXPECT_GE(std::chrono::steady_clock::now() - not_yet_dead, milliseconds(1000))
      << "nothing is copied before the delay";
  CommandResult cat = Copse({"fs", "cat", "/r"});
  ASSERT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_EQ(cat.out, text);
  // When c01 comes back, its surplus copies are trimmed.
  ASSERT_EQ(Copse({"cluster", "up"}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return FullyReplicated("/r", 3); }, seconds(15))) << Stat("/r").dump();
}

TEST_F(DfsTest, RestartedMasterKeepsTheNamespace) {
  std::string text = TextOf(1 << 20, 4);
  auto local = Local("in.txt", text);
  ASSERT_EQ(Copse({"fs", "put", local.string(), "/keep/me", "--partitions", "2"}).exit_code, 0);
  json before = Stat("/keep/me");
  Kill("master", "", SIGTERM);
  ASSERT_EQ(Copse({"cluster", "up"}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return FullyReplicated("/keep/me", 3); }, seconds(15)));
  json after = Stat("/keep/me");
  EXPECT_EQ(after["id"], before["id"]);
  EXPECT_EQ(after["partitions"].size(), 2u);
  CommandResult cat = Copse({"fs", "cat", "/keep/me"});
  ASSERT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_EQ(cat.out, text);
}

TEST_F(DfsTest, WorkerKilledDuringAWriteLeavesNothingHalfWritten) {
  auto client = Client("c00");
  ASSERT_TRUE(client);
  dfs::CreateOptions co;
  co.partitions = 2;
  ASSERT_TRUE(client->Create("/w", co).ok());
  std::string text = TextOf(6 << 20, 5);
  auto bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  ASSERT_TRUE(client->BeginPartition(0).ok());
  ASSERT_TRUE(client->Append(bytes.first(bytes.size() / 2)).ok());
  // c00 is the first replica of every block: killing it fails the pipelines.
  Kill("worker", "c00");
  Status s = client->Append(bytes.subspan(bytes.size() / 2));
  Result<bool> visible = s.ok() ? client->EndPartition() : Result<bool>(s);
  if (visible.ok()) {
    EXPECT_FALSE(*visible) << "partition 1 is not written yet";
    EXPECT_TRUE(Stat("/w").is_null()) << "a half-written file is invisible";
    ASSERT_TRUE(client->BeginPartition(1).ok());
    ASSERT_TRUE(client->Append(bytes.first(10)).ok());
    auto done = client->EndPartition();
    ASSERT_TRUE(done.ok()) << done.status().ToString();
    EXPECT_TRUE(*done);
    CommandResult cat = Copse({"fs", "cat", "/w", "--partition", "0"});
    ASSERT_EQ(cat.exit_code, 0) << cat.err;
    EXPECT_EQ(cat.out, text);
  } else {
    EXPECT_NE(visible.status().message().find("c00"), std::string::npos)
        << visible.status().ToString();
    EXPECT_TRUE(client->Abandon().ok());
    EXPECT_TRUE(Stat("/w").is_null());
  }
  CommandResult ls = Copse({"fs", "ls", "--json"});
  ASSERT_EQ(ls.exit_code, 0);
  json entries = json::parse(ls.out);
  if (visible.ok()) {
    ASSERT_EQ(entries.size(), 1u) << ls.out;
    EXPECT_EQ(entries[0]["path"], "/w");
  } else {
    EXPECT_TRUE(entries.empty()) << ls.out;
  }
}

TEST_F(DfsTest, ScratchPartitionWhoseOnlyReplicaIsGoneIsReplicaLost) {
  auto writer = Client("c11");
  ASSERT_TRUE(writer);
  dfs::CreateOptions co;
  co.partitions = 2;
  co.scratch_job = "job7";
  ASSERT_TRUE(writer->Create("/.scratch/job7/stage0.v1", co).ok());
  std::string text = "scratch bytes\n";
  auto bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  ASSERT_TRUE(writer->BeginPartition(0).ok());
  ASSERT_TRUE(writer->Append(bytes).ok());
  auto vis = writer->EndPartition();
  ASSERT_TRUE(vis.ok()) << vis.status().ToString();

  auto reader = Client("c00");
  ASSERT_TRUE(reader);
  auto st = reader->Stat("/.scratch/job7/stage0.v1");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->partitions[0].blocks.size(), 1u);
  ASSERT_EQ(st->partitions[0].blocks[0].replicas.size(), 1u);
  EXPECT_EQ(st->partitions[0].blocks[0].replicas[0].where.computer, "c11");
  std::string got;
  auto sink = [&](std::span<const uint8_t> b) {
    got.append(reinterpret_cast<const char*>(b.data()), b.size());
    return Status::Ok();
  };
  ASSERT_TRUE(reader->ReadPartition(*st, 0, sink).ok());
  EXPECT_EQ(got, text);
  EXPECT_EQ(reader->counters().rack, 0u);
  EXPECT_EQ(reader->counters().core, text.size());

  Kill("worker", "c11");
  ASSERT_TRUE(WaitFor([&] { return StateOf("c11") == "dead"; }, seconds(10)));
  st = reader->Stat("/.scratch/job7/stage0.v1");
  ASSERT_TRUE(st.ok());
  Status lost = reader->ReadPartition(*st, 0, sink);
  EXPECT_EQ(lost.code(), StatusCode::kDataLoss) << lost.ToString();
  EXPECT_NE(lost.message().find("replica lost"), std::string::npos) << lost.ToString();
  EXPECT_NE(lost.message().find("c11"), std::string::npos) << lost.ToString();
  // The job's end deletes its scratch files.
  auto n = reader->DeleteJobScratch("job7");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1);
  EXPECT_FALSE(reader->Stat("/.scratch/job7/stage0.v1").ok());
}

}  // namespace
}  // namespace copse::testing

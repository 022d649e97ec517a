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
#include "dfs/bucket_writer.h"
#include "dfs/client.h"
#include "dfs/local_read.h"
#include "dfs/meta_store.h"
#include "dfs/namespace.h"
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
    CommandResult r = UpLocalCluster(dir_.path(), spec, &config_path_);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    auto c = LoadClusterConfig(config_path_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    config_ = *c;
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

  // A client on `computer`; `task` > 0: writing for that task run.
  std::unique_ptr<dfs::DfsClient> Client(const std::string& computer, uint64_t task = 0,
                                         uint32_t attempt = 0) {
    auto secret = net::LoadSecret(config_.secret_file);
    EXPECT_TRUE(secret.ok());
    dfs::DfsClientOptions o;
    o.computer = computer;
    o.timeout = milliseconds(5000);
    o.task_id = task;
    o.attempt = attempt;
    auto c = dfs::DfsClient::Connect(config_, *secret, o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  // Every byte of partition `p` of `st`, read by `reader`.
  static Result<std::string> ReadAll(dfs::DfsClient& reader, const dfs::FileStatus& st, int p) {
    std::string got;
    Status s = reader.ReadPartition(st, p, [&](std::span<const uint8_t> b) {
      got.append(reinterpret_cast<const char*>(b.data()), b.size());
      return Status::Ok();
    });
    if (!s.ok()) return s;
    return got;
  }

  // The block store of `computer`, opened while its worker is down.
  std::unique_ptr<dfs::BlockStore> OpenStore(const std::string& computer) {
    dfs::BlockStoreOptions o;
    o.dir = dir_.path() / "data" / computer / "blocks";
    o.computer = computer;
    o.block_size = static_cast<uint64_t>(config_.block_size_bytes);
    auto store = dfs::BlockStore::Open(o);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  TempDir dir_;
  std::filesystem::path config_path_;
  ClusterConfig config_;
};

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

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
  // straight from its worker's block files (the local read path); a computer
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

// A reader that stops early (Sort's sample reads 1% of each partition) gets
// its own error back at once, from a remote replica as from a local one:
// the client neither tries the next replica nor reads on.
TEST_F(DfsTest, AReaderThatStopsGetsItsOwnErrorAndReadsNoFurther) {
  auto writer = Client("c11");
  ASSERT_TRUE(writer);
  dfs::CreateOptions co;
  co.partitions = 1;
  ASSERT_TRUE(writer->Create("/stop", co).ok());
  std::string text(3'500'000, 'x');
  ASSERT_TRUE(writer->BeginPartition(0).ok());
  ASSERT_TRUE(writer
                  ->Append(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()),
                                                    text.size()))
                  .ok());
  ASSERT_TRUE(writer->EndPartition().ok());
  for (const std::string& computer : {std::string("c00"), std::string("c11")}) {
    auto reader = Client(computer);
    ASSERT_TRUE(reader);
    auto st = reader->Stat("/stop");
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    uint64_t got = 0;
    Status s = reader->ReadPartition(*st, 0, [&](std::span<const uint8_t> b) {
      got += b.size();
      return FailedPrecondition("enough");
    });
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << computer << ": " << s.ToString();
    EXPECT_EQ(s.message(), "enough") << computer;
    EXPECT_GT(got, 0u);
    EXPECT_LT(got, text.size() / 2) << computer << " read on after the sink stopped";
  }
}

// An all-to-all producer on c11 writes 40 buckets at once (some empty, one
// over two blocks) into one scratch file; every bucket reads back as written,
// and its blocks were committed on c11 without a sync.
TEST_F(DfsTest, BucketWriterWritesFortyBucketsOfOneScratchFile) {
  constexpr int kBuckets = 40;
  std::vector<std::string> want(kBuckets);
  std::mt19937_64 rng(7);
  for (int b = 0; b < kBuckets; ++b) {
    size_t size = b % 7 == 0 ? 0 : (b == 3 ? (5u << 20) + 321 : rng() % (300u << 10));
    want[static_cast<size_t>(b)] = TextOf(size, static_cast<uint64_t>(b)).substr(0, size);
  }
  auto writer = Client("c11", /*task=*/5, /*attempt=*/1);
  ASSERT_TRUE(writer);
  const std::string path = "/.scratch/job9/map.v1";
  auto w = dfs::BucketWriter::Open(*writer, path, kBuckets, "job9");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  // Interleaved pieces of uneven length, as a producer emits records.
  std::vector<size_t> at(kBuckets, 0);
  for (bool more = true; more;) {
    more = false;
    for (int b = 0; b < kBuckets; ++b) {
      const std::string& all = want[static_cast<size_t>(b)];
      size_t& pos = at[static_cast<size_t>(b)];
      if (pos >= all.size()) continue;
      size_t n = std::min<size_t>(1 + rng() % 90'000, all.size() - pos);
      ASSERT_TRUE((*w)->Append(b, Bytes(all).subspan(pos, n)).ok());
      pos += n;
      more = true;
    }
  }
  auto sizes = (*w)->Close();
  ASSERT_TRUE(sizes.ok()) << sizes.status().ToString();
  ASSERT_EQ(sizes->size(), static_cast<size_t>(kBuckets));
  for (int b = 0; b < kBuckets; ++b)
    EXPECT_EQ((*sizes)[static_cast<size_t>(b)], want[static_cast<size_t>(b)].size()) << b;

  auto reader = Client("c00");
  ASSERT_TRUE(reader);
  auto st = reader->Stat(path);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->partitions.size(), static_cast<size_t>(kBuckets));
  std::vector<uint64_t> scratch_blocks;
  for (int b = 0; b < kBuckets; ++b) {
    const dfs::PartitionLocation& p = st->partitions[static_cast<size_t>(b)];
    EXPECT_TRUE(p.committed);
    for (const dfs::BlockLocation& bl : p.blocks) {
      scratch_blocks.push_back(bl.id);
      ASSERT_EQ(bl.replicas.size(), 1u);
      EXPECT_EQ(bl.replicas[0].where.computer, "c11");
    }
    auto got = ReadAll(*reader, *st, b);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == want[static_cast<size_t>(b)]) << "bucket " << b << " differs";
  }
  EXPECT_EQ(st->partitions[0].blocks.size(), 0u) << "an empty bucket has no block";
  EXPECT_EQ(st->partitions[3].blocks.size(), 3u) << "5 MiB in 2 MiB blocks";
  // A regular file written from c11 too, for comparison.
  auto plain = Client("c11");
  ASSERT_TRUE(plain->Create("/plain", dfs::CreateOptions{}).ok());
  ASSERT_TRUE(plain->BeginPartition(0).ok());
  ASSERT_TRUE(plain->Append(Bytes("synced\n")).ok());
  ASSERT_TRUE(plain->EndPartition().ok());
  auto plain_st = reader->Stat("/plain");
  ASSERT_TRUE(plain_st.ok());
  uint64_t plain_block = plain_st->partitions[0].blocks[0].id;

  // The worker committed the scratch blocks without a sync, the other one synced.
  ASSERT_EQ(Copse({"cluster", "down"}).exit_code, 0);
  auto store = OpenStore("c11");
  ASSERT_TRUE(store);
  for (uint64_t id : scratch_blocks) {
    auto info = store->Stat(id);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_TRUE(info->no_sync) << "block " << id;
  }
  auto info = store->Stat(plain_block);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_FALSE(info->no_sync);
}

// Scratch data has one replica and nothing is kept to write it again: when
// the writer's worker dies, the bucket writer fails saying where, and
// abandoning it leaves nothing.
TEST_F(DfsTest, BucketWriterFailsWhenItsWorkerDies) {
  auto writer = Client("c11", /*task=*/6);
  ASSERT_TRUE(writer);
  const std::string path = "/.scratch/job9/map.v2";
  auto w = dfs::BucketWriter::Open(*writer, path, 4, "job9");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  std::string chunk(1 << 20, 'x');
  ASSERT_TRUE((*w)->Append(0, Bytes(chunk)).ok());  // a block is on its way to c11
  Kill("worker", "c11");
  Status s;
  for (int i = 0; i < 64 && s.ok(); ++i) s = (*w)->Append(i % 4, Bytes(chunk));
  ASSERT_FALSE(s.ok()) << "writes to a dead worker cannot succeed";
  EXPECT_NE(s.message().find("c11"), std::string::npos) << s.ToString();
  EXPECT_EQ((*w)->Append(1, Bytes(chunk)).code(), s.code()) << "the writer stays failed";
  EXPECT_FALSE((*w)->Close().ok());
  EXPECT_TRUE((*w)->Abandon().ok());
  EXPECT_EQ(writer->Stat(path).status().code(), StatusCode::kNotFound);
}

// Two runs of one vertex write the same partition of a job's output file: the
// first to commit wins, the second learns it with kAlreadyExists, and the
// file, invisible until the job's outputs are published, holds the winner's
// bytes.
TEST_F(DfsTest, FirstRunToCommitAnOutputPartitionWins) {
  auto root = Client("c00", /*task=*/1);
  ASSERT_TRUE(root);
  dfs::CreateOptions co;
  co.partitions = 2;
  co.output_job = "42";
  ASSERT_TRUE(root->Create("/out/result", co).ok());
  EXPECT_EQ(root->Stat("/out/result").status().code(), StatusCode::kNotFound);

  std::string first = TextOf(3 << 20, 11), second = TextOf(3 << 20, 12), other = TextOf(1000, 13);
  auto a = Client("c01", /*task=*/10);
  auto b = Client("c12", /*task=*/11);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(b->OpenOutputPartition("/out/nowhere", 0).code(), StatusCode::kNotFound);
  ASSERT_TRUE(a->OpenOutputPartition("/out/result", 0).ok());
  ASSERT_TRUE(b->OpenOutputPartition("/out/result", 0).ok());
  ASSERT_TRUE(a->Append(Bytes(first)).ok());
  ASSERT_TRUE(b->Append(Bytes(second)).ok());
  auto won = a->EndPartition();
  ASSERT_TRUE(won.ok()) << won.status().ToString();
  EXPECT_FALSE(*won) << "a job's output is published by the master, not by its last commit";
  auto lost = b->EndPartition();
  EXPECT_EQ(lost.status().code(), StatusCode::kAlreadyExists) << lost.status().ToString();
  EXPECT_NE(lost.status().message().find("committed by another run"), std::string::npos);
  auto c = Client("c10", /*task=*/12);
  ASSERT_TRUE(c->OpenOutputPartition("/out/result", 1).ok());
  ASSERT_TRUE(c->Append(Bytes(other)).ok());
  ASSERT_TRUE(c->EndPartition().ok());
  EXPECT_EQ(root->Stat("/out/result").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Copse({"fs", "ls", "/out"}).exit_code, 1) << "nothing under /out is visible yet";

  // The master publishes the job's outputs (its job service calls the name
  // service; here the test does, on the stored namespace, while the master is
  // down), and they are there when it comes back.
  ASSERT_EQ(Copse({"cluster", "down"}).exit_code, 0);
  {
    auto store = dfs::OpenRocksMetaStore(config_.master.data_dir / "namespace");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    dfs::NamespaceOptions o;
    o.block_size = static_cast<uint64_t>(config_.block_size_bytes);
    o.default_replication = config_.replication;
    dfs::Namespace ns(o, **store);
    ASSERT_TRUE(ns.Load(Timestamp{}).ok());
    EXPECT_EQ(ns.PendingOutputJobs(), std::vector<std::string>{"42"});
    auto published = ns.PublishJobOutputs("42");
    ASSERT_TRUE(published.ok()) << published.status().ToString();
    EXPECT_EQ(*published, 1);
  }
  ASSERT_EQ(Copse({"cluster", "up"}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return FullyReplicated("/out/result", 3); }, seconds(15)))
      << Stat("/out/result").dump();
  // Each run's computer holds a replica of every block it wrote (the first).
  json st = Stat("/out/result");
  for (auto [p, computer] : {std::pair{0, "c01"}, std::pair{1, "c10"}}) {
    for (const json& bl : st["partitions"][p]["blocks"]) {
      std::set<std::string> where;
      for (const json& r : bl["replicas"]) where.insert(r["computer"].get<std::string>());
      EXPECT_TRUE(where.count(computer)) << st.dump();
    }
  }
  CommandResult p0 = Copse({"fs", "cat", "/out/result", "--partition", "0"});
  ASSERT_EQ(p0.exit_code, 0) << p0.err;
  EXPECT_TRUE(p0.out == first) << "partition 0 holds the first run's bytes";
  CommandResult p1 = Copse({"fs", "cat", "/out/result", "--partition", "1"});
  ASSERT_EQ(p1.exit_code, 0) << p1.err;
  EXPECT_EQ(p1.out, other);
}

}  // namespace
}  // namespace copse::testing

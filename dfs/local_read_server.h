// LocalReadServer: the worker's side of the local read path
// (dfs/local_read.h): it listens on a Unix-domain socket in the worker's data
// dir, checks each peer (the worker's user, the cluster secret) and answers
// each block request with the committed block's file, passed as an open
// descriptor, and its chunks' places in it, from BlockStore::LocateChunks.
// Wire format: dfs/local_read_wire.h.
//
// Thread-safety: thread-safe (one thread per connection, at most
// kMaxConnections).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "copse/status.h"
#include "dfs/block_store.h"
#include "dfs/dfs_types.h"
#include "dfs/local_read.h"

namespace copse::dfs {

class LocalReadServer {
 public:
  static constexpr size_t kMaxConnections = 64;

  // REQUIRES: store outlives the server.
  LocalReadServer(BlockStore& store, std::string secret, std::string computer);
  ~LocalReadServer();
  LocalReadServer(const LocalReadServer&) = delete;
  LocalReadServer& operator=(const LocalReadServer&) = delete;

  // Called with the bytes of each block (from its first chunk asked) handed
  // to a reader, on the server's connection threads. REQUIRES: before Listen.
  void set_on_served(std::function<void(uint64_t bytes)> f) { on_served_ = std::move(f); }

  // Binds `path` (replacing a stale socket file) with mode 0600 and starts
  // accepting. Errors name the path.
  Status Listen(const std::filesystem::path& path);
  // Closes the socket and every connection, and waits for their threads.
  void Stop();

 private:
  struct Conn {
    UniqueFd fd;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void AcceptLoop();
  void Serve(Conn* conn);
  Status Handshake(int fd);
  Status Answer(int fd, BlockId block, uint32_t first);

  BlockStore& store_;
  std::string secret_;
  std::string computer_;
  std::filesystem::path path_;
  std::function<void(uint64_t bytes)> on_served_;
  UniqueFd listen_fd_;
  std::thread acceptor_;
  std::mutex mu_;
  std::list<std::unique_ptr<Conn>> conns_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                   // GUARDED_BY(mu_)
};

}  // namespace copse::dfs

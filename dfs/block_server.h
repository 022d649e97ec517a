// BlockServer: a worker's data port (proto/dfs.capnp, "data port"). Peers
// authenticate like on every port, then
//   - read a block: the server sends a header and streams the chunks, each
//     checked against its CRC32C before it leaves; at most a window of bytes
//     is queued per reader, the next chunks go out as the socket drains, so
//     memory per transfer is bounded however many readers there are. A chunk
//     that fails its check ends the read with an error; the copy is deleted
//     here and reported (Callbacks::bad_replica) so the master replaces it.
//   - write a block: chunks arrive in order, are checked, stored and
//     forwarded to the next replica of the pipeline; a chunk is acknowledged
//     once it is stored here and downstream, which bounds what a writer can
//     have in flight. At the end the block is committed (synced as the
//     store's mode says, or not at all when the writer asked for noSync:
//     scratch data) and the writer gets the computers that hold it. A downstream
//     replica that fails drops out of the pipeline; the write completes on
//     the rest and the acknowledgement says who dropped out and why.
// Replicate() copies a block from another worker (a master's command).
// Thread-safety: everything runs on the io_context's thread (block store
// calls included: a chunk is 1 MiB), except a written block's commit (syncs
// of its file and record, which take long enough to stall the pipeline):
// it runs on the server's commit thread, and its result comes back to the
// io_context's thread.
#pragma once

#include <asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/net/server.h"
#include "common/work_thread.h"
#include "dfs/block_store.h"
#include "dfs/dfs_types.h"
#include "dfs/peer_link.h"

namespace copse::dfs {

struct BlockServerOptions {
  std::string computer;                 // this worker's computer
  size_t read_window_bytes = 8u << 20;  // queued bytes per reader
};

class BlockServer final : public net::ConnectionHandler {
 public:
  struct Callbacks {
    // A block was committed here (written or copied).
    std::function<void(BlockId, uint64_t size)> stored;
    // A stored copy failed its checksum; it has been deleted here.
    std::function<void(BlockId, const Status& why)> bad_replica;
    // Bytes of a block sent to a reader on computer `reader` (its ReadBlock's
    // word; empty: outside the cluster), chunk by chunk.
    std::function<void(const std::string& reader, uint64_t bytes)> served;
  };

  // REQUIRES: io and store outlive the server.
  BlockServer(asio::io_context& io, BlockStore& store, std::string secret,
              BlockServerOptions options, Callbacks callbacks);
  ~BlockServer() override;
  BlockServer(const BlockServer&) = delete;
  BlockServer& operator=(const BlockServer&) = delete;

  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const { return server_.port(); }
  // Closes the port and every transfer.
  void Stop();

  // Copies `block` (of `size` bytes; 0: any) from the first of `sources` that
  // can serve it. `done` gets ok once it is committed here.
  void Replicate(BlockId block, uint64_t size, std::vector<Endpoint> sources,
                 std::function<void(const Status&)> done);

  size_t transfers() const { return transfers_.size() + copies_.size(); }

  void OnOpen(net::Connection& conn) override;
  void OnFrame(net::Connection& conn, net::Frame frame) override;
  void OnClose(net::Connection& conn, const Status& why) override;
  void OnDrained(net::Connection& conn) override;

 private:
  // What one inbound connection is doing: nothing, a read, or a write.
  struct Transfer {
    enum class Kind { kIdle, kRead, kWrite };
    net::Connection* conn = nullptr;  // valid until OnClose
    Kind kind = Kind::kIdle;
    uint64_t serial = 0;  // tells this transfer's async callbacks from a later one's
    BlockId block = 0;
    // Reading.
    std::string reader;  // the reading computer, as it said
    uint32_t next = 0;
    uint32_t chunks = 0;
    // Writing.
    uint32_t received = 0;
    uint64_t bytes = 0;
    bool ended = false;
    bool failed = false;
    bool committing = false;         // the commit thread is committing it
    bool committed = false;          // committed here (downstream may still be busy)
    std::unique_ptr<PeerLink> down;  // the next replica, while it is in the pipeline
    std::string down_computer;
    uint32_t down_acked = 0;
    bool down_done = true;              // no downstream, or it answered or failed
    std::vector<std::string> stored;    // computers downstream holding the block
    std::vector<std::string> failures;  // "computer: why"
    uint32_t acked_up = 0;
  };
  // A block copy this worker pulls from a peer.
  struct Copy {
    BlockId block = 0;
    uint64_t size = 0;
    std::vector<Endpoint> sources;
    size_t next_source = 0;
    std::unique_ptr<PeerLink> link;
    bool begun = false;  // BeginBlock succeeded for the current attempt
    bool header = false;
    bool committing = false;
    uint32_t chunks = 0;
    uint32_t received = 0;
    uint64_t bytes = 0;
    std::vector<std::string> errors;
    std::function<void(const Status&)> done;
  };

  Status HandleMessage(net::Connection& conn, Transfer& t, const net::Frame& frame);
  void StartRead(net::Connection& conn, Transfer& t, BlockId block, uint32_t first,
                 std::string reader);
  void PumpRead(net::Connection& conn, Transfer& t);
  void StartWrite(net::Connection& conn, Transfer& t, BlockId block, std::vector<Endpoint> pipeline,
                  bool no_sync);
  void HandleChunk(net::Connection& conn, Transfer& t, net::Frame frame);
  void EndWrite(net::Connection& conn, Transfer& t, uint64_t size, uint32_t chunks);
  void OnDownFrame(uint64_t conn_id, uint64_t serial, net::Frame frame);
  void DownFailed(Transfer& t, const Status& why);
  void MaybeAckUp(Transfer& t);
  void MaybeFinish(Transfer& t);
  void StartCommit(Transfer& t);
  void FailWrite(Transfer& t, const Status& why);
  Transfer* Find(uint64_t conn_id, uint64_t serial);
  // Destroys a link once the current callback has returned.
  void Retire(std::unique_ptr<PeerLink> link);

  void NextSource(uint64_t serial);
  void OnCopyFrame(uint64_t serial, net::Frame frame);
  void FinishCopy(uint64_t serial, const Status& s);

  asio::io_context& io_;
  BlockStore& store_;
  std::string secret_;
  BlockServerOptions options_;
  Callbacks callbacks_;
  net::Server server_;
  std::map<uint64_t, Transfer> transfers_;  // by connection id
  std::map<uint64_t, Copy> copies_;         // by serial
  uint64_t next_serial_ = 1;
  bool stopped_ = false;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  WorkThread committer_;  // commits blocks off the io thread
};

}  // namespace copse::dfs

// Helpers shared by the DFS's protocol code (proto/dfs.capnp): turning a
// Status into an Error message and back, endpoints and file layouts into
// messages and back, framing a DfsMessage and reading a reply. Include from .cc files only.
// Thread-safety: pure functions.
#pragma once

#include <capnp/message.h>

#include <vector>

#include "common/net/frame.h"
#include "common/net/message.h"
#include "copse/status.h"
#include "dfs/dfs_types.h"
#include "proto/dfs.capnp.h"

namespace copse::dfs {

// A frame payload holding `msg`.
std::vector<uint8_t> EncodeDfs(capnp::MallocMessageBuilder& msg);

// A payload holding only an Error with `s`.
std::vector<uint8_t> EncodeError(const Status& s);
void SetError(proto::Error::Builder out, const Status& s);
// The Status an Error carries (codes out of range become kInternal).
Status StatusFromError(proto::Error::Reader e);

void SetEndpoint(proto::Endpoint::Builder out, const Endpoint& e);
Endpoint ReadEndpoint(proto::Endpoint::Reader r);

void SetFileStatus(proto::FileInfo::Builder out, const FileStatus& f);
FileStatus ReadFileStatus(proto::FileInfo::Reader r);

// Decodes a reply's payload and runs `fn` (Status(proto::DfsMessage::Reader))
// on its root. An Error reply becomes its Status; a malformed payload
// kCorruption.
template <typename Fn>
Status OnDfsReply(const std::vector<uint8_t>& payload, Fn&& fn) {
  net::Frame f{net::Protocol::kDfs, net::PayloadKind::kMessage, payload};
  return net::GuardRequest([&]() -> Status {
    COPSE_ASSIGN_OR_RETURN(auto reader, net::DecodeMessage(f));
    auto root = reader->getRoot<proto::DfsMessage>();
    if (root.which() == proto::DfsMessage::ERROR) return StatusFromError(root.getError());
    return fn(root);
  });
}

}  // namespace copse::dfs

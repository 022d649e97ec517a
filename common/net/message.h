// Cap'n Proto messages in frames: encoding a builder into a frame payload and
// decoding a payload with the limits checked (traversal limit, nesting limit,
// a valid segment table). Include only from .cc files that handle messages.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/net/frame.h"
#include "common/net/guard.h"
#include "copse/status.h"

namespace copse::net {

// The payload for a frame carrying `builder`'s message.
std::vector<uint8_t> EncodeMessage(capnp::MessageBuilder& builder);

// A decoded message that reads from `frame`'s payload; `frame` must outlive it.
// Fails with kCorruption when the payload is not a Cap'n Proto message.
Result<std::unique_ptr<capnp::FlatArrayMessageReader>> DecodeMessage(const Frame& frame);

}  // namespace copse::net

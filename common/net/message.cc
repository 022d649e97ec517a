#include "common/net/message.h"

#include <cstring>

namespace copse::net {

static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= sizeof(capnp::word),
              "frame payloads rely on operator new alignment for Cap'n Proto words");

std::vector<uint8_t> EncodeMessage(capnp::MessageBuilder& builder) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(builder);
  auto bytes = words.asBytes();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

Result<std::unique_ptr<capnp::FlatArrayMessageReader>> DecodeMessage(const Frame& frame) {
  if (frame.kind != PayloadKind::kMessage || frame.payload.empty() ||
      frame.payload.size() % sizeof(capnp::word) != 0) {
    return Corruption("frame does not hold a Cap'n Proto message");
  }
  capnp::ReaderOptions options;
  // A message may not make the reader visit more than twice its own size.
  options.traversalLimitInWords = 2 * frame.payload.size() / sizeof(capnp::word) + 64;
  options.nestingLimit = 32;
  kj::ArrayPtr<const capnp::word> words(reinterpret_cast<const capnp::word*>(frame.payload.data()),
                                        frame.payload.size() / sizeof(capnp::word));
  try {
    return std::make_unique<capnp::FlatArrayMessageReader>(words, options);
  } catch (const kj::Exception& e) {
    return Corruption(std::string("malformed message: ") + e.getDescription().cStr());
  }
}

}  // namespace copse::net

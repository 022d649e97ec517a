// ExtractTar: unpacks a program shipped as a .tar archive (docs/sdk.md) into
// a directory of its own. Only regular files and directories are taken;
// anything else (links, devices, FIFOs), an absolute name, a name with a
// '..' or '.' component, or one that is not valid UTF-8 refuses the whole
// archive, naming the member. ustar, GNU long names and pax path records
// are understood (what GNU tar and Python's tarfile write). Files keep
// their owner's execute bit; nothing gets set-id bits.
// Thread-safety: a pure function over the file system.
#pragma once

#include <cstdint>
#include <filesystem>

#include "copse/status.h"

namespace copse {

// REQUIRES: `dest` exists and is empty. Returns the bytes unpacked.
// kInvalidArgument for an archive that is not one or holds what is refused;
// kIoError when writing fails; kResourceExhausted past `max_bytes`.
Result<uint64_t> ExtractTar(const std::filesystem::path& archive, const std::filesystem::path& dest,
                            uint64_t max_bytes);

}  // namespace copse

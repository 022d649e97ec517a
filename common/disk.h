// Disk space, and the one check a daemon makes before a write that grows its
// data: a full disk refuses new writes with a message naming who is full,
// loses nothing already committed, and works again once space is freed
// (nothing is remembered between checks).
// Thread-safety: pure functions (they read the file system).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>

#include "copse/status.h"

namespace copse {

// Free bytes for an unprivileged writer on the file system holding `dir`.
Result<uint64_t> FreeDiskBytes(const std::filesystem::path& dir);

// The size of the file system holding `dir`.
Result<uint64_t> DiskCapacityBytes(const std::filesystem::path& dir);

using FreeSpaceFn = std::function<Result<uint64_t>(const std::filesystem::path&)>;

// kResourceExhausted "no space on WHO: N MiB free under DIR, R MiB must stay
// free ([dfs] reserve_mb)" when fewer than `reserve` + `need` bytes are free
// under `dir`. `free_space` defaults to FreeDiskBytes.
Status CheckDiskReserve(const std::filesystem::path& dir, uint64_t reserve, uint64_t need,
                        std::string_view who, const FreeSpaceFn& free_space = nullptr);

}  // namespace copse

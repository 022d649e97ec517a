#include "common/disk.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace copse {

Result<uint64_t> FreeDiskBytes(const std::filesystem::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) {
    return IoError(
        fmt::format("cannot check free space under {}: {}", dir.string(), std::strerror(errno)));
  }
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

Result<uint64_t> DiskCapacityBytes(const std::filesystem::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) {
    return IoError(fmt::format("cannot check the size of the disk under {}: {}", dir.string(),
                               std::strerror(errno)));
  }
  return static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
}

Status CheckDiskReserve(const std::filesystem::path& dir, uint64_t reserve, uint64_t need,
                        std::string_view who, const FreeSpaceFn& free_space) {
  COPSE_ASSIGN_OR_RETURN(uint64_t free, free_space ? free_space(dir) : FreeDiskBytes(dir));
  if (free >= reserve + need) return Status::Ok();
  return ResourceExhausted(
      fmt::format("no space on {}: {} MiB free under {}, {} MiB must stay free ([dfs] reserve_mb)",
                  who, free >> 20, dir.string(), reserve >> 20));
}

}  // namespace copse

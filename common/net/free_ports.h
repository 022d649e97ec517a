// FreePorts: loopback TCP ports nobody is listening on right now, for tests
// and benchmarks that start daemons on ports of their own. They lie below
// the kernel's ephemeral range, so no outgoing connection takes one before
// the daemon binds it; all `n` sockets are held open together so the ports
// differ; another process binding explicitly may still take a port after
// they close, which callers accept.
#pragma once

#include <cstdint>
#include <vector>

#include "copse/status.h"

namespace copse::net {

Result<std::vector<uint16_t>> FreePorts(int n);

}  // namespace copse::net

// ProtocolService: the master's adapter for one protocol (docs/design.md §3,
// §11): it decodes that protocol's frames into calls on a component (the
// membership table, the name service, the job and scheduling services) and
// sends the replies. The master's server routes each frame to the service of
// its protocol and tells every service when a connection closes.
// Thread-safety: called on the master's io_context thread.
#pragma once

#include "common/net/connection.h"
#include "copse/status.h"

namespace copse::master {

class ProtocolService {
 public:
  virtual ~ProtocolService() = default;
  // A frame of this service's protocol arrived on `conn`. An error closes
  // that connection (and is logged); the daemon carries on.
  virtual Status OnFrame(net::Connection& conn, const net::Frame& frame) = 0;
  // `conn` closed.
  virtual void OnClose(net::Connection& conn) { (void)conn; }
};

}  // namespace copse::master

// The cluster config as `copse cluster up` ships it to other hosts.
// Thread-safety: free functions.
#pragma once

#include <string>

#include "common/config.h"
#include "copse/status.h"

namespace copse::client {

// `text` (the operator's config file, which `config` was loaded from) with a
// [hosts] table that gives every host name of the config the address this
// machine resolved it to, so that no host resolves a name differently (a
// Debian host maps its own name to 127.0.1.1 in /etc/hosts, and a worker
// there would listen on loopback). Entries of a [hosts] table the text
// already has stay as they are. `text` itself when every host is given as
// an address. Comments do not survive the rewrite: the shipped copy starts
// with one saying where the original is. A name that resolved to a loopback
// address here (run on one of the cluster's own hosts) is an error: the
// other hosts could not reach it.
Result<std::string> ShippedConfigText(const std::string& text, const ClusterConfig& config);

}  // namespace copse::client

// systemd unit files for a cluster's daemons (`copse cluster units`,
// docs/deploy.md): one for the master and a template for a worker, whose
// instance is the computer's name (copse-NAME-worker@COMPUTER.service).
// Both run from the config's [deploy] install_dir with the config the
// install holds (INSTALL_DIR/etc/cluster.toml), restart on failure, log to
// the journal, and stop with SIGTERM, as `cluster down` stops them.
// Thread-safety: pure functions.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/config.h"
#include "copse/status.h"

namespace copse::client {

struct UnitFile {
  std::string name;  // e.g. copse-NAME-master.service
  std::string text;
};

// Where an install keeps the config, relative to install_dir.
inline constexpr const char* kInstalledConfig = "etc/cluster.toml";

// The master's unit and the worker's template for `config`.
std::vector<UnitFile> SystemdUnits(const ClusterConfig& config);

// The unit name that runs `computer`'s worker, or the master's for "master".
std::string UnitName(const ClusterConfig& config, const std::string& computer);

// Writes SystemdUnits(config) into `dir` (created if missing); returns the
// paths written.
Result<std::vector<std::filesystem::path>> WriteSystemdUnits(const ClusterConfig& config,
                                                             const std::filesystem::path& dir);

}  // namespace copse::client

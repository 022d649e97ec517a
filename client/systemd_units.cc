#include "client/systemd_units.h"

#include <fmt/format.h>

#include <fstream>
#include <system_error>

namespace copse::client {
namespace {

// The [Service] and [Install] sections both daemons share. The config's
// install_dir, cluster name and computer names are validated when the
// config is loaded to characters a unit file takes literally.
std::string Unit(const ClusterConfig& c, const std::string& description, const std::string& exec) {
  std::string user = c.deploy.ssh_user.empty() ? "" : "User=" + c.deploy.ssh_user + "\n";
  return fmt::format(
      "# Written by `copse cluster units` for cluster {name}; docs/deploy.md.\n"
      "[Unit]\n"
      "Description={description}\n"
      "After=network-online.target\n"
      "Wants=network-online.target\n"
      "\n"
      "[Service]\n"
      "Type=simple\n"
      "{user}"
      "ExecStart={exec}\n"
      "Restart=on-failure\n"
      "RestartSec=2s\n"
      "KillSignal=SIGTERM\n"
      "TimeoutStopSec=30s\n"
      "StandardOutput=journal\n"
      "StandardError=journal\n"
      "LimitNOFILE=65536\n"
      "\n"
      "[Install]\n"
      "WantedBy=multi-user.target\n",
      fmt::arg("name", c.name), fmt::arg("description", description), fmt::arg("user", user),
      fmt::arg("exec", exec));
}

}  // namespace

std::string UnitName(const ClusterConfig& config, const std::string& computer) {
  if (computer == "master") return fmt::format("copse-{}-master.service", config.name);
  return fmt::format("copse-{}-worker@{}.service", config.name, computer);
}

std::vector<UnitFile> SystemdUnits(const ClusterConfig& config) {
  const std::filesystem::path& dir = config.deploy.install_dir;
  const std::string cfg = (dir / kInstalledConfig).string();
  return {
      {UnitName(config, "master"),
       Unit(config, fmt::format("Copse master of cluster {}", config.name),
            fmt::format("{} --config {}", (dir / "bin" / "copse-master").string(), cfg))},
      {fmt::format("copse-{}-worker@.service", config.name),
       Unit(config, fmt::format("Copse worker %i of cluster {}", config.name),
            fmt::format("{} --config {} --computer %i", (dir / "bin" / "copse-worker").string(),
                        cfg))},
  };
}

Result<std::vector<std::filesystem::path>> WriteSystemdUnits(const ClusterConfig& config,
                                                             const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
  std::vector<std::filesystem::path> written;
  for (const UnitFile& u : SystemdUnits(config)) {
    std::filesystem::path path = dir / u.name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << u.text;
    out.close();
    if (!out) return IoError(fmt::format("{}: cannot write", path.string()));
    written.push_back(std::move(path));
  }
  return written;
}

}  // namespace copse::client

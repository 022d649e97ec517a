#include "client/shipped_config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <map>
#include <sstream>

namespace copse::client {

Result<std::string> ShippedConfigText(const std::string& text, const ClusterConfig& config) {
  std::map<std::string, std::string> names;
  auto note = [&](const std::string& name, const std::string& address) {
    if (name != address) names.emplace(name, address);
  };
  note(config.master.host_name, config.master.host);
  for (const ComputerConfig& c : config.computers) note(c.host_name, c.host);
  for (const auto& [name, address] : names) {
    // Run from one of the cluster's own hosts, whose /etc/hosts maps its
    // name to a loopback address: no other host could reach it there.
    if (IsLoopbackAddress(address)) {
      return InvalidArgument(fmt::format(
          "{}: host \"{}\" resolves to {} on this machine, a loopback address the other hosts "
          "cannot reach: give its address in the config, or in its [hosts] table "
          "(docs/cluster-config.md)",
          config.source.string(), name, address));
    }
  }
  if (names.empty()) return text;
  toml::table root;
  try {
    root = toml::parse(text, config.source.string());
  } catch (const toml::parse_error& e) {
    return InvalidArgument(
        fmt::format("{}: not valid TOML: {}", config.source.string(), e.description()));
  }
  toml::table* hosts = root["hosts"].as_table();
  if (hosts == nullptr) {
    if (root.contains("hosts"))
      return InvalidArgument(config.source.string() + ": key 'hosts': expected a table");
    hosts = root.insert("hosts", toml::table{}).first->second.as_table();
  }
  for (const auto& [name, address] : names) hosts->insert(name, address);  // never replaces
  std::ostringstream out;
  out << "# " << config.source.string()
      << " as `copse cluster up` shipped it, with [hosts] giving\n"
         "# the addresses it resolved there: edit that file, not this copy.\n\n"
      << root << "\n";
  return out.str();
}

}  // namespace copse::client

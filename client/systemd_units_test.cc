#include "client/systemd_units.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace copse::client {
namespace {

ClusterConfig Config(const std::string& deploy) {
  std::string text =
      "[cluster]\nname = \"rack9\"\ndata_root = \"/var/lib/copse\"\n"
      "[master]\nport = 7400\nworker_port_base = 7410\n"
      "[[racks]]\nname = \"r0\"\ncount = 2\n" +
      deploy;
  auto c = ParseClusterConfig(text, "/etc/copse/rack9.toml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : ClusterConfig{};
}

std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SystemdUnitsTest, AMasterUnitAndAWorkerTemplateRunFromTheInstall) {
  auto units = SystemdUnits(Config("[deploy]\ninstall_dir = \"/srv/copse\"\n"));
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].name, "copse-rack9-master.service");
  EXPECT_NE(units[0].text.find(
                "\nExecStart=/srv/copse/bin/copse-master --config /srv/copse/etc/cluster.toml\n"),
            std::string::npos)
      << units[0].text;
  EXPECT_EQ(units[1].name, "copse-rack9-worker@.service");
  EXPECT_NE(units[1].text.find("\nExecStart=/srv/copse/bin/copse-worker --config "
                               "/srv/copse/etc/cluster.toml --computer %i\n"),
            std::string::npos)
      << units[1].text;
  for (const UnitFile& u : units) {
    EXPECT_NE(u.text.find("\nRestart=on-failure\n"), std::string::npos) << u.name;
    EXPECT_NE(u.text.find("\nStandardError=journal\n"), std::string::npos) << u.name;
    EXPECT_NE(u.text.find("\nWantedBy=multi-user.target\n"), std::string::npos) << u.name;
    EXPECT_EQ(u.text.find("User="), std::string::npos) << u.name;  // no ssh_user: root's
  }
  EXPECT_EQ(UnitName(Config(""), "r0-c01"), "copse-rack9-worker@r0-c01.service");
}

TEST(SystemdUnitsTest, TheSshUserRunsTheDaemons) {
  auto units = SystemdUnits(Config("[deploy]\nssh_user = \"copse\"\n"));
  ASSERT_EQ(units.size(), 2u);
  EXPECT_NE(units[0].text.find("\nUser=copse\n"), std::string::npos) << units[0].text;
  EXPECT_NE(units[1].text.find("/opt/copse/bin/copse-worker"), std::string::npos);  // default
}

TEST(SystemdUnitsTest, WritesBothFilesAndSaysWhyWhenItCannot) {
  char tmpl[] = "/tmp/copse-units-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  ClusterConfig c = Config("");
  auto written = WriteSystemdUnits(c, dir / "units");
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_EQ(written->size(), 2u);
  EXPECT_EQ(Read((*written)[0]), SystemdUnits(c)[0].text);
  EXPECT_EQ(Read((*written)[1]), SystemdUnits(c)[1].text);
  // A file where the directory should be.
  std::ofstream(dir / "file") << "x";
  auto bad = WriteSystemdUnits(c, dir / "file" / "units");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cannot create"), std::string::npos)
      << bad.status().ToString();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace copse::client

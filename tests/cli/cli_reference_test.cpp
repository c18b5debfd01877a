// docs/CLI.md is every command's `--help` as the binaries print it (scripts/cli-reference.sh
// writes it): an option added, removed or reworded without rerunning the script fails here, so
// the page a user reads offline never drifts from the program.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"

namespace meshscope::cli_testing {
namespace {

const std::string kBin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const std::string kGui = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope-gui";
const fs::path kSource = fs::path(MESHSCOPE_SOURCE_DIR);
constexpr const char* kRegenerate = "rerun scripts/cli-reference.sh build";

// The page's sections: "## `COMMAND`", a blank line, then a ```text block.
std::map<std::string, std::string> sections(const std::string& doc) {
  std::map<std::string, std::string> out;
  const std::regex heading("^## `([^`]+)`\n\n```text\n",
                           std::regex::ECMAScript | std::regex::multiline);
  const std::string fence_end = "\n```\n";
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), heading);
       it != std::sregex_iterator(); ++it) {
    const size_t body = static_cast<size_t>(it->position(0) + it->length(0));
    const size_t end = doc.find(fence_end, body - 1);
    if (end == std::string::npos) continue;
    out[(*it)[1].str()] = doc.substr(body, end + 1 - body);
  }
  return out;
}

// The subcommands `meshscope --help` lists, in its order.
std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> out;
  const size_t list = help.find("\nSubcommands:\n");
  std::istringstream in(list == std::string::npos ? "" : help.substr(list));
  std::string line;
  const std::regex entry("^  ([a-z-]+) .*");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, entry)) out.push_back(m[1].str());
  }
  return out;
}

TEST(CliReference, EveryCommandsHelpIsOnThePageAsTheBinaryPrintsIt) {
  const auto page = sections(read_file(kSource / "docs/CLI.md"));
  const Result top = shell(kBin + " --help");
  ASSERT_EQ(top.status, 0) << top.err;
  const std::vector<std::string> names = subcommands(top.out);
  ASSERT_GE(names.size(), 10u) << top.out;

  std::map<std::string, std::string> commands = {{"meshscope", kBin}};
  for (const std::string& name : names) commands["meshscope " + name] = kBin + " " + name;
  // The viewer is built where GLFW is (MESHSCOPE_GUI): its section is checked where it is.
  const bool viewer = fs::exists(kGui);
  if (viewer) commands["meshscope-gui"] = kGui;

  for (const auto& [name, command] : commands) {
    const auto documented = page.find(name);
    ASSERT_NE(documented, page.end())
        << "docs/CLI.md has no section for `" << name << "`: " << kRegenerate;
    const Result help = shell(command + " --help");
    ASSERT_EQ(help.status, 0) << help.err;
    EXPECT_EQ(documented->second, help.out)
        << "docs/CLI.md's `" << name << "` differs from its --help: " << kRegenerate;
  }
  for (const auto& [name, text] : page) {
    if (name == "meshscope-gui" && !viewer) continue;
    EXPECT_TRUE(commands.count(name)) << "docs/CLI.md documents `" << name
                                      << "`, which the binaries do not have: " << kRegenerate;
  }
}

}  // namespace
}  // namespace meshscope::cli_testing

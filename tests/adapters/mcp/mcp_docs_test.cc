// docs/mcp.md tells the truth about the tools: its table (between the mcp-tools markers) has
// one row per tool pulse-mcp serves from this build's manifest, in tools/list order, and each
// row's route, required scope and action mode are the capability's. The notes column is free
// text. The rows as they should read are written to PULSE_MCP_DOCS_EXPECTED on every run, so
// a failing run leaves a table to paste.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "pulse/adapters/mcp/tool_allowlist.h"
#include "pulse/core/manifest/capability_manifest.h"

#if !defined(PULSE_DOCS_DIR) || !defined(PULSE_MCP_DOCS_EXPECTED)
#error "PULSE_DOCS_DIR must name the docs directory, PULSE_MCP_DOCS_EXPECTED a file to write"
#endif

namespace pulse::adapters::mcp {
namespace {

constexpr std::string_view kBegin = "<!-- mcp-tools:begin -->";
constexpr std::string_view kEnd = "<!-- mcp-tools:end -->";
constexpr std::size_t kCheckedCells = 4;  // tool, route, scope, mode; then the notes

std::string Cell(absl::string_view text) {
  absl::string_view cell = absl::StripAsciiWhitespace(text);
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`') {
    cell = cell.substr(1, cell.size() - 2);
  }
  return std::string(cell);
}

// The checked cells of each data row of the table, in document order.
std::vector<std::vector<std::string>> DocumentedRows() {
  std::ifstream file(std::string(PULSE_DOCS_DIR) + "/mcp.md");
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const std::size_t begin = doc.find(kBegin);
  const std::size_t end = doc.find(kEnd);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  REQUIRE(begin < end);
  const std::string table = doc.substr(begin + kBegin.size(), end - begin - kBegin.size());

  std::vector<std::vector<std::string>> rows;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(table, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) {
      continue;
    }
    INFO("row: " << std::string(line));
    REQUIRE(line.front() == '|');
    REQUIRE(line.back() == '|');
    if (++line_number <= 2) {
      continue;  // the header and the |---| line
    }
    std::vector<std::string> cells;
    for (absl::string_view cell : absl::StrSplit(line.substr(1, line.size() - 2), '|')) {
      cells.push_back(Cell(cell));
    }
    REQUIRE(cells.size() == kCheckedCells + 1);
    cells.resize(kCheckedCells);
    rows.push_back(std::move(cells));
  }
  return rows;
}

std::vector<std::string> ExpectedRow(const core::AgentCapability& capability) {
  return {capability.name, capability.method + " " + capability.path,
          std::string(core::ToString(capability.scope)),
          std::string(core::ToString(capability.action_mode))};
}

TEST_CASE("docs/mcp.md lists every tool pulse-mcp serves with its route, scope and mode",
          "[adapters][mcp][docs]") {
  auto surface = McpSurfaceFromManifest(core::ManifestJson());
  REQUIRE(surface.ok());
  REQUIRE_FALSE(surface->tool_names.empty());
  std::vector<std::vector<std::string>> expected;
  std::string expected_table;
  for (const std::string& name : surface->tool_names) {
    const core::AgentCapability* capability = core::FindAgentCapability(name);
    REQUIRE(capability != nullptr);
    expected.push_back(ExpectedRow(*capability));
    const std::vector<std::string>& row = expected.back();
    expected_table +=
        "| `" + row[0] + "` | `" + row[1] + "` | `" + row[2] + "` | " + row[3] + " | |\n";
  }
  std::ofstream(PULSE_MCP_DOCS_EXPECTED) << std::string(kBegin) << "\n"
                                         << "| tool | route | scope | mode | notes |\n"
                                         << "|---|---|---|---|---|\n"
                                         << expected_table << std::string(kEnd) << "\n";
  INFO("the table docs/mcp.md should hold (notes aside) is in " << PULSE_MCP_DOCS_EXPECTED);
  CHECK(DocumentedRows() == expected);
}

}  // namespace
}  // namespace pulse::adapters::mcp

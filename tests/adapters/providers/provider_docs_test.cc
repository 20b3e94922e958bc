// docs/providers.md tells the truth about the registry: its table (between the
// provider-registry markers) has exactly one row per registry entry, and each row's family,
// defaults, base-URL rule, key rule and route are the entry's.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "pulse/adapters/providers/provider_registry.h"
#include "pulse/core/string_view.h"

#ifndef PULSE_DOCS_DIR
#error "PULSE_DOCS_DIR must name the docs directory"
#endif

namespace pulse::adapters::providers {
namespace {

constexpr std::string_view kBegin = "<!-- provider-registry:begin -->";
constexpr std::string_view kEnd = "<!-- provider-registry:end -->";

// "`x`" -> "x", "—" -> "", anything else as it is.
std::string Cell(std::string_view text) {
  absl::string_view cell = absl::StripAsciiWhitespace(pulse::core::ToAbsl(text));
  if (cell == "—") {
    return "";
  }
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`') {
    cell = cell.substr(1, cell.size() - 2);
  }
  return std::string(cell);
}

// The registry table's rows, keyed by provider name; each row is its cells in order.
std::map<std::string, std::vector<std::string>> DocumentedRows() {
  std::ifstream file(std::string(PULSE_DOCS_DIR) + "/providers.md");
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const std::size_t begin = doc.find(kBegin);
  const std::size_t end = doc.find(kEnd);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  REQUIRE(begin < end);

  std::map<std::string, std::vector<std::string>> rows;
  const std::string_view table =
      std::string_view(doc).substr(begin + kBegin.size(), end - begin - kBegin.size());
  for (absl::string_view line : absl::StrSplit(pulse::core::ToAbsl(table), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) {
      continue;
    }
    INFO("row: " << std::string(line));
    REQUIRE(line.front() == '|');
    REQUIRE(line.back() == '|');
    std::vector<std::string> cells;
    for (absl::string_view cell : absl::StrSplit(line.substr(1, line.size() - 2), '|')) {
      cells.push_back(Cell(pulse::core::ToStd(cell)));
    }
    REQUIRE(cells.size() == 8);
    CHECK(rows.emplace(cells[0], cells).second);  // each name once
  }
  return rows;
}

std::string BaseUrlRule(const ProviderEntry& entry) {
  if (entry.base_url_required) {
    return "required";
  }
  return entry.base_url_overridable ? "overridable" : "fixed";
}

std::string KeyRule(const ProviderEntry& entry) {
  if (!entry.requires_api_key) {
    return "optional";
  }
  return entry.api_key_optional_with_custom_base_url ? "required (optional with a custom base URL)"
                                                     : "required";
}

TEST_CASE("docs/providers.md lists every registry provider, and only those, truthfully",
          "[adapters][providers][registry][docs]") {
  const std::map<std::string, std::vector<std::string>> rows = DocumentedRows();
  CHECK(rows.size() == ProviderRegistry().size());
  for (const ProviderEntry& entry : ProviderRegistry()) {
    INFO(entry.name);
    const auto it = rows.find(std::string(entry.name));
    REQUIRE(it != rows.end());
    const std::vector<std::string>& row = it->second;
    CHECK(row[1] == entry.display_name);
    CHECK(row[2] == ToString(entry.family));
    CHECK(row[3] == entry.default_model);
    CHECK(row[4] == entry.default_base_url);
    CHECK(row[5] == BaseUrlRule(entry));
    CHECK(row[6] == KeyRule(entry));
    CHECK(row[7] == core::ToString(entry.route));
  }
  for (const auto& [name, row] : rows) {
    INFO(name);
    CHECK(FindProvider(name) != nullptr);
  }
}

}  // namespace
}  // namespace pulse::adapters::providers

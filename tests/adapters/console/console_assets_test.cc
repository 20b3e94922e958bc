// The console's embedded table (adapters/console): the page comes first and names exactly the
// assets the table holds, each with its content type and a strong ETag; lookups match a name
// exactly and nothing else. A build without the console has an empty table.
#include "pulse/adapters/console/console_assets.h"

#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <string>
#include <string_view>

namespace pulse::adapters::console {
namespace {

#if PULSE_CONSOLE_BUILT

TEST_CASE("the page comes first and names every asset the table holds", "[console]") {
  REQUIRE(ConsoleBuilt());
  const ConsoleAsset* index = ConsoleIndex();
  REQUIRE(index != nullptr);
  REQUIRE(!ConsoleAssets().empty());
  CHECK(&ConsoleAssets().front() == index);
  CHECK(index->content_type == "text/html; charset=utf-8");
  const std::string html(index->bytes);

  // Every /assets/ reference of the page resolves in the table, and the table holds no asset the
  // page does not name (a stale bundle would be served forever under its immutable name).
  std::set<std::string> referenced;
  const std::regex reference(R"re((src|href)="/assets/([^"]+)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), reference);
       it != std::sregex_iterator(); ++it) {
    referenced.insert((*it)[2].str());
  }
  REQUIRE(referenced.size() == 2);
  std::set<std::string> held;
  for (const ConsoleAsset& asset : ConsoleAssets().subspan(1)) {
    REQUIRE(asset.name.starts_with("assets/"));
    held.insert(std::string(asset.name.substr(7)));
  }
  CHECK(held == referenced);
  for (const std::string& name : referenced) {
    INFO(name);
    const ConsoleAsset* asset = FindConsoleAsset(name);
    REQUIRE(asset != nullptr);
    CHECK(!asset->bytes.empty());
    CHECK(std::regex_match(name, std::regex(R"(app-[A-Z0-9]{8}\.(js|css))")));
    CHECK(asset->content_type ==
          (name.ends_with(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8"));
  }
  // The page carries no inline script or style: the CSP (script-src 'self') would refuse it.
  CHECK(!std::regex_search(html, std::regex(R"(<script(?![^>]*\ssrc=))")));
  CHECK(html.find("<style") == std::string::npos);
  CHECK(html.find("style=") == std::string::npos);
}

TEST_CASE("every embedded file has a strong, distinct ETag", "[console]") {
  std::set<std::string_view> tags;
  for (const ConsoleAsset& asset : ConsoleAssets()) {
    INFO(asset.name);
    CHECK(std::regex_match(std::string(asset.etag), std::regex(R"("[0-9a-f]{32}")")));
    tags.insert(asset.etag);
  }
  CHECK(tags.size() == ConsoleAssets().size());
}

TEST_CASE("asset lookups match one exact name and refuse everything else", "[console]") {
  REQUIRE(ConsoleAssets().size() >= 2);
  const std::string name(ConsoleAssets()[1].name.substr(7));
  CHECK(FindConsoleAsset(name) == &ConsoleAssets()[1]);
  for (const std::string& hostile :
       {std::string(), std::string("index.html"), std::string("assets/") + name,
        std::string("../") + name, std::string("./") + name, std::string("..%2F") + name,
        name + "/", name + "x", name.substr(0, name.size() - 1), std::string(".."),
        std::string("."), std::string(name) + std::string(1, '\0'), std::string(1, '\0') + name,
        std::string(4096, 'a')}) {
    INFO(hostile);
    CHECK(FindConsoleAsset(hostile) == nullptr);
  }
  // Case matters: the names are content hashes, not words.
  std::string upper = name;
  for (char& c : upper) {
    c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  }
  CHECK(FindConsoleAsset(upper) == nullptr);
}

#else

TEST_CASE("a build without the console has no files at all", "[console]") {
  CHECK_FALSE(ConsoleBuilt());
  CHECK(ConsoleIndex() == nullptr);
  CHECK(ConsoleAssets().empty());
  CHECK(FindConsoleAsset("app.js") == nullptr);
}

#endif

}  // namespace
}  // namespace pulse::adapters::console

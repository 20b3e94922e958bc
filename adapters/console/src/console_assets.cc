#include "pulse/adapters/console/console_assets.h"

#include "embedded_assets.h"

namespace pulse::adapters::console {
namespace {

constexpr std::string_view kIndexName = "index.html";
constexpr std::string_view kAssetPrefix = "assets/";

const ConsoleAsset* FindByPath(std::string_view path) {
  for (const ConsoleAsset& asset : EmbeddedAssets()) {
    if (asset.name == path) {
      return &asset;
    }
  }
  return nullptr;
}

}  // namespace

bool ConsoleBuilt() { return !EmbeddedAssets().empty(); }

const ConsoleAsset* ConsoleIndex() { return FindByPath(kIndexName); }

const ConsoleAsset* FindConsoleAsset(std::string_view name) {
  // A name with a slash would reach outside assets/ only through a path the table does not
  // hold, but refusing it here keeps the rule visible: one segment, exactly as embedded.
  if (name.empty() || name.find('/') != std::string_view::npos) {
    return nullptr;
  }
  for (const ConsoleAsset& asset : EmbeddedAssets()) {
    if (asset.name.size() == kAssetPrefix.size() + name.size() &&
        asset.name.starts_with(kAssetPrefix) && asset.name.ends_with(name)) {
      return &asset;
    }
  }
  return nullptr;
}

std::span<const ConsoleAsset> ConsoleAssets() { return EmbeddedAssets(); }

}  // namespace pulse::adapters::console

// The table of embedded files, defined either by the file embed_assets.cmake generates
// from the console's build output, or by no_assets.cc in a build without Node.js.
#pragma once

#include <span>

#include "pulse/adapters/console/console_assets.h"

namespace pulse::adapters::console {

// Every embedded file, index.html first; empty when the console is not built.
std::span<const ConsoleAsset> EmbeddedAssets();

}  // namespace pulse::adapters::console

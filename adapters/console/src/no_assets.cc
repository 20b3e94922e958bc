// The embedded table of a build without the console (PULSE_CONSOLE=OFF, or AUTO without Node.js
// or the console's node_modules): empty, so pulse-server answers console_not_built.
#include "embedded_assets.h"

namespace pulse::adapters::console {

std::span<const ConsoleAsset> EmbeddedAssets() { return {}; }

}  // namespace pulse::adapters::console

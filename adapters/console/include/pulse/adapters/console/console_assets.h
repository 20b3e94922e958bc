// The operator console's files, compiled into the binary (docs/console.md): its page
// (index.html) and its content-hashed scripts and style sheets. A build without Node.js has
// none, and ConsoleBuilt() says so. The table is constant data: thread-safe, and every view
// points into static storage that lives as long as the program.
#pragma once

#include <span>
#include <string_view>

namespace pulse::adapters::console {

struct ConsoleAsset {
  std::string_view name;          // path in the console: "index.html", "assets/app-XYZ.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view etag;          // a strong validator, quoted: "\"<sha-256 prefix>\""
  std::string_view bytes;
};

// Whether this binary carries the console (false in a build without Node.js).
bool ConsoleBuilt();

// The console's page, or nullptr when the console is not built.
const ConsoleAsset* ConsoleIndex();

// The file `assets/<name>` (the {asset} segment of GET /assets/{asset}), or nullptr when there
// is no such file. Names are compared exactly: no decoding, no path resolution, so "../x",
// "" or "index.html" never name a file.
const ConsoleAsset* FindConsoleAsset(std::string_view name);

// Every embedded file, the page first; empty when the console is not built.
std::span<const ConsoleAsset> ConsoleAssets();

}  // namespace pulse::adapters::console

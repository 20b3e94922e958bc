// Internal to src/manifest: builders shared by the catalogue, the document and validation.
#pragma once

#include <string_view>

#include "pulse/core/manifest/capability_manifest.h"
#include "rapidjson/document.h"

namespace pulse::core::manifest_internal {

// The fallback input schema of a capability without an explicit one, as a document.
rapidjson::Document FallbackInputSchema(const AgentCapability& capability);

// Parses schema text that the catalogue itself supplies (ValidateManifest proves it parses);
// a null document when it does not.
rapidjson::Document ParseCatalogueJson(std::string_view text);

}  // namespace pulse::core::manifest_internal

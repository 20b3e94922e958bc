// docs/api.md, rendered from the capability manifest, the transport error codes, the server
// route table and the workflow prompts. The pulse-gen-api-docs tool writes it; a ctest
// compares the committed file with a fresh rendering, so the documentation cannot fall
// behind the code. Pure; deterministic bytes.
#pragma once

#include <string>

namespace pulse::adapters::http {

std::string RenderApiDocs();

}  // namespace pulse::adapters::http

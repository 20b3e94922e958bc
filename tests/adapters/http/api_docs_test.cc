#include "pulse/adapters/http/api_docs.h"

#include <catch2/catch.hpp>
#include <string>

#include "pulse/adapters/http/server_routes.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/workflow_prompts.h"

namespace pulse::adapters::http {
namespace {

TEST_CASE("the API docs cover every capability, server route and prompt",
          "[adapters][http][docs]") {
  const std::string docs = RenderApiDocs();
  CHECK(docs == RenderApiDocs());
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    INFO(c.name);
    CHECK(docs.find("#### `" + c.name + "`") != std::string::npos);
    CHECK(docs.find("`" + c.method + " " + c.path + "`") != std::string::npos);
    for (core::AgentErrorCode code : c.error_codes) {
      CHECK(docs.find("`" + std::string(core::ToString(code)) + "`") != std::string::npos);
    }
  }
  for (const ServerRoute& r : ServerRoutes()) {
    INFO(r.spec.name);
    CHECK(docs.find("`" + r.spec.method + " " + r.spec.path + "`") != std::string::npos);
  }
  for (const core::WorkflowPrompt& p : core::WorkflowPrompts()) {
    CHECK(docs.find("`" + p.name + "`") != std::string::npos);
  }
  for (core::AgentErrorCode code : core::TransportErrorCodes()) {
    CHECK(docs.find("| `" + std::string(core::ToString(code)) + "` |") != std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::adapters::http

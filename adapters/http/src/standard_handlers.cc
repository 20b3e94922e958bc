#include "pulse/adapters/http/standard_handlers.h"

#include <map>
#include <string>

#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/workflow_prompts.h"

namespace pulse::adapters::http {

HttpHandler ManifestHandler() {
  return [](const HttpRequest&) {
    HttpReply reply = HttpReply::Json(core::ManifestJson());
    reply.headers.emplace_back("Cache-Control", "public, max-age=300");
    return reply;
  };
}

HttpHandler HealthHandler() {
  return [](const HttpRequest&) { return HttpReply::Json(R"({"status":"ok"})"); };
}

HttpHandler MetricsHandler(const MetricsRegistry& registry) {
  return [&registry](const HttpRequest&) {
    return HttpReply::Text(registry.Render(), std::string(kPrometheusContentType));
  };
}

HttpHandler RenderWorkflowPromptHandler() {
  return [](const HttpRequest& request) {
    absl::StatusOr<rapidjson::Document> body = core::ParseJson(request.body);
    if (!body.ok() || !body->IsObject()) {
      return HttpReply::Error(core::AgentErrorCode::kInvalidRequest,
                              "the body must be a JSON object");
    }
    const std::string name(core::GetString(*body, "name").value_or(""));
    std::map<std::string, std::string> arguments;
    if (const rapidjson::Value* args = core::GetMember(*body, "arguments");
        args != nullptr && args->IsObject()) {
      for (const auto& m : args->GetObject()) {
        if (m.value.IsString()) {
          arguments.emplace(std::string(core::StringViewOf(m.name)),
                            std::string(core::StringViewOf(m.value)));
        }
      }
    }
    absl::StatusOr<core::RenderedPrompt> rendered = core::RenderWorkflowPrompt(name, arguments);
    if (!rendered.ok()) {
      return HttpReply::Error(core::AgentErrorCode::kInvalidRequest,
                              std::string(rendered.status().message()));
    }
    core::JsonWriter w;
    w.StartObject();
    w.Member("description", rendered->description);
    w.Member("text", rendered->text);
    w.EndObject();
    return HttpReply::Json(w.Take());
  };
}

}  // namespace pulse::adapters::http

#include "pulse/adapters/mcp/mcp_resources.h"

#include <string>
#include <vector>

#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::mcp {
namespace {

constexpr std::size_t kMaxContextBytes = std::size_t{16} << 20;

bool Ok(const PulseReply& reply) { return reply.status >= 200 && reply.status < 300; }

// "GET /path: 403 missing_scope (message)" for a refusal.
absl::Status Refusal(const core::AgentCapability& capability, const PulseReply& reply) {
  std::string text =
      capability.method + " " + capability.path + ": " + std::to_string(reply.status);
  auto body = core::ParseJson(reply.body);
  if (body.ok()) {
    if (auto code = core::GetString(*body, "error"); code.has_value()) {
      text += " " + std::string(*code);
    }
    if (auto message = core::GetString(*body, "message"); message.has_value()) {
      text += " (" + std::string(*message) + ")";
    }
  }
  return absl::InternalError(text);
}

absl::StatusOr<const core::AgentCapability*> Capability(std::string_view name) {
  const core::AgentCapability* capability = core::FindAgentCapability(name);
  if (capability == nullptr) {
    return absl::InternalError("this build has no capability " + std::string(name));
  }
  return capability;
}

std::string Describe(const rapidjson::Value& resource) {
  std::vector<std::string> parts;
  if (auto type = core::GetString(resource, "resourceType"); type && !type->empty()) {
    parts.emplace_back(*type);
  }
  if (auto technology = core::GetString(resource, "technology");
      technology && !technology->empty()) {
    parts.emplace_back(*technology);
  }
  if (const rapidjson::Value* findings = core::GetMember(resource, "findings")) {
    const std::int64_t total = core::GetInt64(*findings, "total").value_or(0);
    if (total > 0) {
      parts.push_back(
          "findings: " + std::to_string(total) + " total (" +
          std::to_string(core::GetInt64(*findings, "critical").value_or(0)) + " critical, " +
          std::to_string(core::GetInt64(*findings, "warning").value_or(0)) + " warning, " +
          std::to_string(core::GetInt64(*findings, "info").value_or(0)) + " info)");
    }
  }
  if (auto pending = core::GetInt64(resource, "pendingApprovalCount"); pending && *pending > 0) {
    parts.push_back("pending approvals: " + std::to_string(*pending));
  }
  std::string out;
  for (const std::string& part : parts) {
    out += out.empty() ? part : "; " + part;
  }
  return out;
}

}  // namespace

std::string ResourceUri(std::string_view resource_id) {
  return std::string(kResourceUriPrefix) + core::PercentEncode(resource_id);
}

absl::StatusOr<std::string> ResourceIdFromUri(std::string_view uri) {
  if (uri.substr(0, kResourceUriPrefix.size()) != kResourceUriPrefix) {
    return absl::InvalidArgumentError("resource URI must start with pulse://resource/");
  }
  const std::string_view encoded = uri.substr(kResourceUriPrefix.size());
  if (encoded.empty() || encoded.find_first_of("/?#") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        "resource URI must be pulse://resource/<id> with the id as one encoded segment");
  }
  PULSE_ASSIGN_OR_RETURN(std::string id, core::PercentDecode(encoded));
  if (id.empty()) {
    return absl::InvalidArgumentError("resource URI has an empty id");
  }
  return id;
}

absl::StatusOr<std::string> ListResources(PulseCaller& caller) {
  PULSE_ASSIGN_OR_RETURN(const core::AgentCapability* capability, Capability("get_fleet_context"));
  const rapidjson::Value no_args(rapidjson::kObjectType);
  PULSE_ASSIGN_OR_RETURN(PulseReply reply, CallCapability(caller, *capability, no_args));
  if (!Ok(reply)) {
    return Refusal(*capability, reply);
  }
  auto body = core::ParseJson(reply.body, core::JsonLimits{.max_bytes = kMaxContextBytes});
  if (!body.ok()) {
    return absl::InternalError("the fleet context is not JSON: " +
                               std::string(body.status().message()));
  }
  core::JsonWriter w;
  w.StartObject();
  w.Key("resources");
  w.StartArray();
  if (const rapidjson::Value* resources = core::GetMember(*body, "resources");
      resources != nullptr && resources->IsArray()) {
    for (const rapidjson::Value& resource : resources->GetArray()) {
      const auto id = core::GetString(resource, "canonicalId");
      if (!id.has_value() || id->empty()) {
        continue;
      }
      const auto name = core::GetString(resource, "resourceName");
      w.StartObject();
      w.Member("uri", ResourceUri(*id));
      w.Member("name", name.has_value() && !name->empty() ? *name : *id);
      w.MemberIfNotEmpty("description", Describe(resource));
      w.Member("mimeType", "application/json");
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

absl::StatusOr<std::string> ReadResource(PulseCaller& caller, std::string_view uri) {
  PULSE_ASSIGN_OR_RETURN(std::string id, ResourceIdFromUri(uri));
  PULSE_ASSIGN_OR_RETURN(const core::AgentCapability* capability,
                         Capability("get_resource_context"));
  rapidjson::Document args(rapidjson::kObjectType);
  args.AddMember("resourceId",
                 rapidjson::Value(id.c_str(), static_cast<rapidjson::SizeType>(id.size()),
                                  args.GetAllocator()),
                 args.GetAllocator());
  PULSE_ASSIGN_OR_RETURN(PulseReply reply, CallCapability(caller, *capability, args));
  if (reply.status == 404) {
    return absl::NotFoundError("resource not found: " + ResourceUri(id));
  }
  if (!Ok(reply)) {
    return Refusal(*capability, reply);
  }
  core::JsonWriter w;
  w.StartObject();
  w.Key("contents");
  w.StartArray();
  w.StartObject();
  w.Member("uri", ResourceUri(id));
  w.Member("mimeType", "application/json");
  w.Member("text", reply.body);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace pulse::adapters::mcp

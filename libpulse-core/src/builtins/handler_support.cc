#include "handler_support.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/string_view.h"

namespace pulse::core::handlers_internal {
namespace {

constexpr std::size_t kMaxFactKeyBytes = 64;
constexpr std::size_t kMaxFactValueBytes = 256;
constexpr std::size_t kMaxCapabilityDescriptionBytes = 300;
constexpr std::size_t kMaxUnusableNames = 32;

}  // namespace

ToolResult InvalidInput(std::string message, ErrorDetails details) {
  ToolError error;
  error.code = ToolErrorCode::kInvalidInput;
  error.message = std::move(message);
  error.blocked = true;
  error.details = std::move(details);
  return ToolResult::Failure(std::move(error));
}

std::optional<ToolResult> RejectInapplicable(const rapidjson::Value& args, std::string_view tool,
                                             std::string_view action,
                                             std::initializer_list<std::string_view> allowed) {
  if (!args.IsObject()) {
    return std::nullopt;
  }
  for (const auto& member : args.GetObject()) {
    const std::string_view name = StringViewOf(member.name);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return InvalidInput(absl::StrCat("`", ToAbsl(name), "` does not apply to ", ToAbsl(tool),
                                       " action=", ToAbsl(action), "; leave it out"),
                          {{"argument", std::string(name)}, {"action", std::string(action)}});
    }
  }
  return std::nullopt;
}

std::optional<ToolResult> CheckResourceId(std::string_view id) {
  if (IsCanonicalResourceId(id)) {
    return std::nullopt;
  }
  return InvalidInput(
      "resource_id must be a canonical resource id such as vm:101 or service:pve1/nginx, "
      "exactly as pulse_query returns it; resolve the resource with pulse_query first",
      {{"argument", std::string("resource_id")}});
}

std::string Trimmed(std::string_view text) {
  return std::string(absl::StripAsciiWhitespace(ToAbsl(text)));
}

std::string_view StringArg(const rapidjson::Value& args, std::string_view key) {
  return GetString(args, key).value_or(std::string_view());
}

std::string ShortText(std::string_view text, std::size_t max_bytes) {
  const std::string redacted = RedactSecrets(text);
  return BoundedCleanText(redacted, max_bytes);
}

bool BoundedArray::Add(std::string item_json) {
  // One separator per item after the first, plus the brackets.
  const std::size_t cost = item_json.size() + 1;
  if (omitted_ > 0 || items_.size() >= max_items_ || bytes_ + cost > max_bytes_) {
    ++omitted_;
    return false;
  }
  bytes_ += cost;
  items_.push_back(std::move(item_json));
  return true;
}

std::string BoundedArray::Json() const {
  std::string out = "[";
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (i > 0) {
      out.push_back(',');
    }
    out.append(items_[i]);
  }
  out.push_back(']');
  return out;
}

void WriteBoundedArray(JsonWriter& out, std::string_view key, const BoundedArray& array) {
  out.Key(key);
  out.RawValue(array.Json());
  if (array.truncated()) {
    out.Member(absl::StrCat(ToAbsl(key), "_omitted"), array.omitted());
  }
}

std::string ResourceBriefJson(const FleetResource& r) {
  JsonWriter out;
  out.StartObject();
  out.Member("id", ShortText(r.id));
  out.Member("type", ShortText(r.type, 64));
  out.Member("name", ShortText(r.name));
  out.Member("status", ShortText(r.status, 64));
  out.MemberIfNotEmpty("technology", ShortText(r.technology, 64));
  out.MemberIfNotEmpty("parent_id", ShortText(r.parent_id));
  out.EndObject();
  return out.Take();
}

void WriteFacts(JsonWriter& out, std::string_view key,
                const std::map<std::string, std::string>& facts, std::size_t max_entries) {
  out.Key(key);
  out.StartObject();
  std::size_t written = 0;
  for (const auto& [name, value] : facts) {
    if (written == max_entries) {
      break;
    }
    out.Key(BoundedCleanText(name, kMaxFactKeyBytes));
    out.String(NamesSecret(name) ? std::string(kRedactedSecret)
                                 : ShortText(value, kMaxFactValueBytes));
    ++written;
  }
  out.EndObject();
  if (facts.size() > written) {
    out.Member(absl::StrCat(ToAbsl(key), "_omitted"), facts.size() - written);
  }
}

std::string CapabilityJson(const Capability& c, const ActionActor& requester,
                           const ActionPolicyOptions& options) {
  const ApprovalRequirement requirement = DeriveApprovalRequirement(c, requester, options);
  JsonWriter out;
  out.StartObject();
  out.Member("name", c.name);
  out.Member("description", ShortText(c.description, kMaxCapabilityDescriptionBytes));
  out.Member("risk", ToString(c.risk));
  out.Member("requires_approval", requirement.floor != ApprovalLevel::kNone);
  out.Member("approval_floor", ToString(requirement.floor));
  out.Member("auto_authorization", ToString(c.auto_authorization));
  out.Member("supports_rollback", c.supports_rollback);
  out.Key("params");
  out.StartArray();
  for (const CapabilityParam& p : c.params) {
    out.StartObject();
    out.Member("name", p.name);
    out.Member("type", ToString(p.type));
    out.Member("required", p.required);
    if (!p.enum_values.empty()) {
      out.Key("enum");
      out.StringArray(p.enum_values);
    }
    out.MemberIfNotEmpty("pattern", p.pattern);
    out.MemberIfNotEmpty("description", ShortText(p.description, kMaxCapabilityDescriptionBytes));
    out.EndObject();
  }
  out.EndArray();
  out.EndObject();
  return out.Take();
}

bool WriteCapabilities(JsonWriter& out, const std::vector<Capability>& catalogue,
                       const ActionActor& requester, const ActionPolicyOptions& options,
                       std::size_t max_bytes) {
  BoundedArray usable(max_bytes);
  std::vector<std::string> unusable;
  for (const Capability& capability : catalogue) {
    if (ValidateCapability(capability).ok()) {
      usable.Add(CapabilityJson(capability, requester, options));
    } else if (unusable.size() < kMaxUnusableNames) {
      unusable.push_back(ShortText(capability.name, 64));
    }
  }
  WriteBoundedArray(out, "capabilities", usable);
  if (!unusable.empty()) {
    out.Key("unusable_capabilities");
    out.StringArray(unusable);
  }
  return usable.truncated();
}

}  // namespace pulse::core::handlers_internal

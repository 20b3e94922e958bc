#include "pulse/core/loop/outbound_context.h"

#include <algorithm>
#include <utility>

#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"
#include "pulse/core/loop/loop_texts.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

constexpr JsonLimits kOutboundJsonLimits{kMaxOutboundJsonBytes, 64};
// The tool name inside the loop's untrusted-data frame is never longer than this.
constexpr std::size_t kMaxFramedToolName = 256;

// Fleet attributes that identify a resource as much as its name does.
constexpr std::array<std::string_view, 8> kIdentifyingAttributes = {
    "hostname", "host", "fqdn", "alias", "ip", "ip_address", "ipv4", "ipv6"};

unsigned char LowerByte(char c) {
  const auto b = static_cast<unsigned char>(c);
  return (b >= 'A' && b <= 'Z') ? static_cast<unsigned char>(b - 'A' + 'a') : b;
}

// Identifier bytes: a match may not start or end inside a run of them.
bool IsWordByte(char c) {
  const auto b = static_cast<unsigned char>(c);
  return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_' ||
         b >= 0x80;
}

std::string Lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(LowerByte(c));
  }
  return out;
}

bool HasVisibleByte(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      return true;
    }
  }
  return false;
}

// `text` as it appears inside a serialized JSON string: quote, backslash and control bytes
// escaped (the hex digits' case does not matter: matching ignores ASCII case).
std::string JsonEscaped(std::string_view text) {
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (b < 0x20) {
          out += "\\u00";
          out += kHex[b >> 4];
          out += kHex[b & 0xF];
        } else {
          out += c;
        }
    }
  }
  return out;
}

bool LooksLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      continue;
    }
    return c == '{' || c == '[';
  }
  return false;
}

// The structural pass over a parsed tool result (see the header for the shapes it writes).
// Recursive, but only over documents ParseJson bounded in depth.
class Withholder {
 public:
  Withholder(const absl::flat_hash_set<std::string>& ids, std::size_t max_id_bytes,
             rapidjson::Document::AllocatorType& alloc)
      : ids_(ids), max_id_bytes_(max_id_bytes), alloc_(alloc) {}

  void Root(rapidjson::Value& root) {
    if (Describes(root)) {
      root = Aggregate(1);
      changed_ = true;
      return;
    }
    Walk(root);
  }

  bool changed() const { return changed_; }

 private:
  bool IsLocalOnlyId(std::string_view text) const {
    return text.size() <= max_id_bytes_ && ids_.contains(Lowered(text));
  }

  bool Describes(const rapidjson::Value& value) const {
    if (!value.IsObject()) {
      return false;
    }
    // Every member is checked, duplicates included: a reader may take either occurrence.
    for (const auto& member : value.GetObject()) {
      if (!member.value.IsString()) {
        continue;
      }
      const std::string_view name = StringViewOf(member.name);
      for (std::string_view id_member : kLocalOnlyIdMembers) {
        if (name == id_member && IsLocalOnlyId(StringViewOf(member.value))) {
          return true;
        }
      }
    }
    return false;
  }

  rapidjson::Value Aggregate(std::int64_t count) {
    rapidjson::Value object(rapidjson::kObjectType);
    rapidjson::Value key(kWithheldLocalOnlyMember.data(),
                         static_cast<rapidjson::SizeType>(kWithheldLocalOnlyMember.size()), alloc_);
    object.AddMember(key, rapidjson::Value(count), alloc_);
    return object;
  }

  void Walk(rapidjson::Value& value) {
    if (value.IsArray()) {
      WalkArray(value);
    } else if (value.IsObject()) {
      WalkObject(value);
    }
  }

  void WalkArray(rapidjson::Value& array) {
    std::int64_t withheld = 0;
    for (const rapidjson::Value& item : array.GetArray()) {
      withheld += Describes(item) ? 1 : 0;
    }
    if (withheld == 0) {
      for (rapidjson::Value& item : array.GetArray()) {
        Walk(item);
      }
      return;
    }
    // Rebuilt rather than erased in place, which would be quadratic.
    rapidjson::Value kept(rapidjson::kArrayType);
    kept.Reserve(array.Size() - static_cast<rapidjson::SizeType>(withheld) + 1, alloc_);
    for (rapidjson::Value& item : array.GetArray()) {
      if (Describes(item)) {
        continue;
      }
      Walk(item);
      kept.PushBack(item, alloc_);  // moves
    }
    kept.PushBack(Aggregate(withheld), alloc_);
    array = kept;  // moves
    changed_ = true;
  }

  // Calls `fn` with each member of `object`, mutable. Indexed, not a range-for: clang 14 in
  // C++20 mode rejects comparing rapidjson's mutable member iterators
  // (-Wambiguous-reversed-operator).
  template <class Fn>
  static void ForEachMember(rapidjson::Value& object, Fn fn) {
    const rapidjson::Value::MemberIterator first = object.MemberBegin();
    const rapidjson::SizeType count = object.MemberCount();
    for (rapidjson::SizeType i = 0; i < count; ++i) {
      fn(first[i]);
    }
  }

  void WalkObject(rapidjson::Value& object) {
    std::int64_t withheld = 0;
    const rapidjson::Value& view = object;
    for (const auto& member : view.GetObject()) {
      withheld += IsLocalOnlyId(StringViewOf(member.name)) ? 1 : 0;
    }
    if (withheld > 0) {
      rapidjson::Value kept(rapidjson::kObjectType);
      ForEachMember(object, [this, &kept](rapidjson::Value::Member& member) {
        if (!IsLocalOnlyId(StringViewOf(member.name))) {
          kept.AddMember(member.name, member.value, alloc_);  // moves both
        }
      });
      rapidjson::Value key(kWithheldLocalOnlyMember.data(),
                           static_cast<rapidjson::SizeType>(kWithheldLocalOnlyMember.size()),
                           alloc_);
      kept.AddMember(key, rapidjson::Value(withheld), alloc_);
      object = kept;  // moves
      changed_ = true;
    }
    ForEachMember(object, [this](rapidjson::Value::Member& member) {
      if (Describes(member.value)) {
        member.value = Aggregate(1);
        changed_ = true;
      } else {
        Walk(member.value);
      }
    });
  }

  const absl::flat_hash_set<std::string>& ids_;
  const std::size_t max_id_bytes_;
  rapidjson::Document::AllocatorType& alloc_;
  bool changed_ = false;
};

}  // namespace

absl::StatusOr<std::vector<LocalOnlyResource>> LoadLocalOnlyResources(OperatorStateStore& store,
                                                                      Fleet* fleet) {
  PULSE_ASSIGN_OR_RETURN(std::vector<std::string> ids, store.LocalOnlyResourceIds());
  std::vector<LocalOnlyResource> out;
  out.reserve(ids.size());
  for (std::string& id : ids) {
    LocalOnlyResource resource;
    resource.id = std::move(id);
    if (fleet != nullptr) {
      absl::StatusOr<FleetResource> known = fleet->GetResource(resource.id);
      if (known.ok()) {
        if (!known->name.empty()) {
          resource.names.push_back(known->name);
        }
        for (std::string_view key : kIdentifyingAttributes) {
          auto it = known->attributes.find(std::string(key));
          if (it != known->attributes.end() && !it->second.empty()) {
            resource.names.push_back(it->second);
          }
        }
      } else if (!absl::IsNotFound(known.status())) {
        return known.status();
      }
    }
    out.push_back(std::move(resource));
  }
  return out;
}

OutboundContextPolicy::OutboundContextPolicy(InferenceRoute route,
                                             const std::vector<LocalOnlyResource>& local_only)
    : pass_through_(route == InferenceRoute::kLocalModelServer) {
  terminal_.push_back(false);  // the root
  if (pass_through_) {
    return;
  }
  for (const LocalOnlyResource& resource : local_only) {
    if (resource.id.empty()) {
      continue;
    }
    ids_.insert(Lowered(resource.id));
    max_id_bytes_ = std::max(max_id_bytes_, resource.id.size());
    AddPattern(resource.id);
    AddPattern(JsonEscaped(resource.id));
    for (const std::string& name : resource.names) {
      if (name.size() < kMinLocalOnlyNameBytes || name.size() > kMaxLocalOnlyNameBytes ||
          !HasVisibleByte(name)) {
        continue;
      }
      AddPattern(name);
      AddPattern(JsonEscaped(name));
    }
  }
}

int OutboundContextPolicy::Child(int node, unsigned char c) const {
  auto it = edges_.find((static_cast<std::uint64_t>(node) << 8) | c);
  return it == edges_.end() ? -1 : it->second;
}

void OutboundContextPolicy::AddPattern(std::string_view pattern) {
  if (pattern.empty()) {
    return;
  }
  int node = 0;
  for (char c : pattern) {
    const std::uint64_t key = (static_cast<std::uint64_t>(node) << 8) | LowerByte(c);
    auto [it, inserted] = edges_.try_emplace(key, static_cast<int>(terminal_.size()));
    if (inserted) {
      terminal_.push_back(false);
    }
    node = it->second;
  }
  terminal_[static_cast<std::size_t>(node)] = true;
}

std::string OutboundContextPolicy::ReplaceLocalOnly(std::string_view text) const {
  if (edges_.empty()) {
    return std::string(text);
  }
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    // An earlier replacement is left alone, so the policy is idempotent whatever the names.
    if (text.substr(i, kLocalOnlyPlaceholder.size()) == kLocalOnlyPlaceholder) {
      i += kLocalOnlyPlaceholder.size();
      continue;
    }
    // A match starting inside an identifier run would break the start boundary.
    if (i > 0 && IsWordByte(text[i - 1]) && IsWordByte(text[i])) {
      ++i;
      continue;
    }
    std::size_t best = 0;
    int node = 0;
    for (std::size_t j = i; j < text.size(); ++j) {
      node = Child(node, LowerByte(text[j]));
      if (node < 0) {
        break;
      }
      const bool end_ok = j + 1 == text.size() || !IsWordByte(text[j]) || !IsWordByte(text[j + 1]);
      if (terminal_[static_cast<std::size_t>(node)] && end_ok) {
        best = j + 1;  // the longest match wins
      }
    }
    if (best == 0) {
      ++i;
      continue;
    }
    out.append(text.substr(copied, i - copied));
    out.append(kLocalOnlyPlaceholder);
    copied = best;
    i = best;
  }
  out.append(text.substr(copied));
  return out;
}

std::string OutboundContextPolicy::SanitizeText(std::string_view text) const {
  if (pass_through_) {
    return std::string(text);
  }
  return ReplaceLocalOnly(RedactSecrets(text));
}

std::string OutboundContextPolicy::SanitizeToolResult(std::string_view content) const {
  if (pass_through_) {
    return std::string(content);
  }
  if (!ids_.empty() && content.size() <= kMaxOutboundJsonBytes && LooksLikeJson(content)) {
    absl::StatusOr<rapidjson::Document> doc = ParseJson(content, kOutboundJsonLimits);
    if (doc.ok()) {
      Withholder withholder(ids_, max_id_bytes_, doc->GetAllocator());
      withholder.Root(*doc);
      if (withholder.changed()) {
        return SanitizeText(ToJsonString(*doc));
      }
    }
  }
  return SanitizeText(content);
}

LlmRequest OutboundContextPolicy::Apply(const LlmRequest& request) const {
  if (pass_through_) {
    return request;
  }
  LlmRequest out;
  out.tools = request.tools;
  out.tool_choice = request.tool_choice;
  out.max_tokens = request.max_tokens;
  out.cancelled = request.cancelled;
  out.messages.reserve(request.messages.size());
  for (const Message& m : request.messages) {
    Message s;
    s.role = m.role;
    s.tool_call_id = m.tool_call_id;
    s.tool_name = m.tool_name;
    s.is_error = m.is_error;
    s.tool_calls.reserve(m.tool_calls.size());
    for (const ToolCall& call : m.tool_calls) {
      // Only the arguments are text; provider_state is opaque provider bytes, replayed as is.
      ToolCall sanitized = call;
      sanitized.arguments_json = SanitizeText(call.arguments_json);
      s.tool_calls.push_back(std::move(sanitized));
    }
    if (m.role != MessageRole::kTool) {
      s.content = SanitizeText(m.content);
      out.messages.push_back(std::move(s));
      continue;
    }
    // The loop frames successful results as untrusted data; the frame is text, the rest is
    // the result.
    const std::string_view content = m.content;
    std::size_t body = 0;
    if (content.substr(0, kUntrustedFramePrefix.size()) == kUntrustedFramePrefix) {
      const std::string_view head = content.substr(
          0, kUntrustedFramePrefix.size() + kMaxFramedToolName + kUntrustedFrameSuffix.size());
      const std::size_t suffix = head.find(kUntrustedFrameSuffix, kUntrustedFramePrefix.size());
      if (suffix != std::string_view::npos) {
        body = suffix + kUntrustedFrameSuffix.size();
      }
    }
    s.content = SanitizeText(content.substr(0, body));
    s.content += SanitizeToolResult(content.substr(body));
    out.messages.push_back(std::move(s));
  }
  return out;
}

}  // namespace pulse::core

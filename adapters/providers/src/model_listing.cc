// ListModels: each family's model-listing endpoint, fetched with the streaming provider's
// transport and error mapping, and read leniently (unknown members are ignored; entries
// without an id are skipped) but within bounds.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pulse/adapters/providers/anthropic_protocol.h"
#include "pulse/adapters/providers/http_errors.h"
#include "pulse/adapters/providers/provider_factory.h"
#include "pulse/adapters/providers/streaming_provider.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::providers {
namespace {

constexpr std::size_t kMaxListingBytes = 8u << 20;
constexpr std::size_t kMaxModels = 10'000;
constexpr std::size_t kMaxModelIdBytes = 256;

// Where a family lists its models, and where in the answer the list is.
struct Listing {
  HttpRequestSpec spec;
  std::string_view array_member;       // "data" or "models"
  std::string_view id_member;          // "id", "model" or "name"
  std::string_view name_member;        // display name member, "" for none
  std::string_view strip_prefix;       // removed from ids ("models/" on Gemini)
  bool only_generate_content = false;  // Gemini: skip embedding-only models
};

Listing ListingFor(const ResolvedProvider& resolved) {
  Listing listing;
  listing.spec.method = "GET";
  auto& headers = listing.spec.headers;
  const std::string& key = resolved.api_key;
  switch (resolved.entry->family) {
    case ProtocolFamily::kOpenAiCompatible:
      listing.spec.path = "/models";
      listing.array_member = "data";
      listing.id_member = "id";
      listing.name_member = "name";  // OpenRouter gives one
      if (!key.empty()) {
        headers.emplace_back("Authorization", absl::StrCat("Bearer ", key));
      }
      break;
    case ProtocolFamily::kOllama:
      listing.spec.path = "/api/tags";
      listing.array_member = "models";
      listing.id_member = "model";
      listing.name_member = "name";
      if (!key.empty()) {
        headers.emplace_back("Authorization", absl::StrCat("Bearer ", key));
      }
      break;
    case ProtocolFamily::kAnthropic:
      listing.spec.path = "/models?limit=1000";
      listing.array_member = "data";
      listing.id_member = "id";
      listing.name_member = "display_name";
      headers.emplace_back("anthropic-version", std::string(kAnthropicVersion));
      if (!key.empty()) {
        headers.emplace_back("x-api-key", key);
      }
      break;
    case ProtocolFamily::kGemini:
      listing.spec.path = "/models?pageSize=1000";
      listing.array_member = "models";
      listing.id_member = "name";
      listing.name_member = "displayName";
      listing.strip_prefix = "models/";
      listing.only_generate_content = true;
      if (!key.empty()) {
        headers.emplace_back("x-goog-api-key", key);
      }
      break;
  }
  return listing;
}

absl::Status NotAListing() {
  return core::IncompleteStreamError("the model listing is not the expected JSON");
}

bool CanGenerateContent(const rapidjson::Value& model) {
  const rapidjson::Value* methods = core::GetMember(model, "supportedGenerationMethods");
  if (methods == nullptr || !methods->IsArray()) {
    return true;  // not stated: assume it can
  }
  for (const rapidjson::Value& method : methods->GetArray()) {
    if (method.IsString() && core::StringViewOf(method) == "generateContent") {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<ModelInfo>> ReadListing(const Listing& listing, std::string_view body) {
  absl::StatusOr<rapidjson::Document> doc =
      core::ParseJson(body, core::JsonLimits{.max_bytes = kMaxListingBytes, .max_depth = 32});
  if (!doc.ok() || !doc->IsObject()) {
    return NotAListing();
  }
  const rapidjson::Value* items = core::GetMember(*doc, listing.array_member);
  if (items == nullptr || items->IsNull()) {
    return std::vector<ModelInfo>();  // Ollama answers {"models":null} with nothing pulled
  }
  if (!items->IsArray()) {
    return NotAListing();
  }
  std::vector<ModelInfo> models;
  for (const rapidjson::Value& item : items->GetArray()) {
    if (models.size() >= kMaxModels) {
      break;
    }
    if (!item.IsObject()) {
      return NotAListing();
    }
    std::optional<std::string_view> id = core::GetString(item, listing.id_member);
    if (!id.has_value() && listing.id_member == "model") {
      id = core::GetString(item, "name");
    }
    if (!id.has_value() || id->empty() || id->size() > kMaxModelIdBytes ||
        !core::IsCleanText(*id)) {
      continue;
    }
    if (listing.only_generate_content && !CanGenerateContent(item)) {
      continue;
    }
    std::string_view model_id = *id;
    if (!listing.strip_prefix.empty() &&
        model_id.substr(0, listing.strip_prefix.size()) == listing.strip_prefix) {
      model_id.remove_prefix(listing.strip_prefix.size());
    }
    ModelInfo info;
    info.id = std::string(model_id);
    if (!listing.name_member.empty()) {
      if (auto name = core::GetString(item, listing.name_member); name.has_value()) {
        info.display_name = core::BoundedCleanText(*name, kMaxModelIdBytes);
      }
    }
    models.push_back(std::move(info));
  }
  return models;
}

}  // namespace

absl::StatusOr<std::vector<ModelInfo>> ListModels(const ProviderConfig& config,
                                                  const std::atomic<bool>* cancelled) {
  PULSE_ASSIGN_OR_RETURN(ResolvedProvider resolved, ResolveListing(config));
  const Listing listing = ListingFor(resolved);
  const std::vector<std::string> secrets = HeaderSecrets(listing.spec.headers);
  const std::string provider(resolved.entry->name);

  int status = 0;
  std::optional<std::string> retry_after_text;
  std::string body;
  bool too_large = false;
  const HttpOutcome outcome = ExchangeHttp(
      resolved.base_url, listing.spec, config.timeouts, cancelled,
      [&](const HttpResponseHead& head) {
        status = head.status;
        retry_after_text = head.Header("Retry-After");
        return true;
      },
      [&](std::string_view bytes) {
        if (body.size() + bytes.size() > kMaxListingBytes) {
          too_large = true;
          return false;
        }
        body.append(bytes);
        return true;
      });
  auto fail = [&](const absl::Status& error) {
    return AnnotateProviderError(error, provider, secrets);
  };
  if (outcome.end == HttpEnd::kFailed) {
    return fail(outcome.error);
  }
  if (status < 200 || status > 299) {
    std::optional<absl::Duration> retry_after;
    if (retry_after_text.has_value()) {
      retry_after = ParseRetryAfter(*retry_after_text, absl::Now());
    }
    return fail(HttpStatusError(status, retry_after, ProviderErrorDetail(body)));
  }
  if (too_large) {
    return fail(core::IncompleteStreamError("the model listing is too large"));
  }
  if (outcome.end == HttpEnd::kBrokenBody) {
    return fail(core::IncompleteStreamError("the model listing was cut short"));
  }
  absl::StatusOr<std::vector<ModelInfo>> models = ReadListing(listing, body);
  if (!models.ok()) {
    return fail(models.status());
  }
  return models;
}

std::optional<std::string> FirstChatModel(const std::vector<ModelInfo>& models) {
  // Substrings of model ids that are not chat models, lowercase. OpenAI's list, for one, is in
  // no useful order and starts with whatever the account was given first.
  static constexpr absl::string_view kNotChat[] = {
      "embed", "whisper", "tts",    "dall-e", "moderation", "transcribe", "realtime",
      "audio", "image",   "rerank", "guard",  "davinci",    "babbage",    "sora"};
  for (const ModelInfo& m : models) {
    const std::string id = absl::AsciiStrToLower(m.id);
    bool chat = !id.empty();
    for (absl::string_view bad : kNotChat) {
      chat = chat && !absl::StrContains(id, bad);
    }
    if (chat) {
      return m.id;
    }
  }
  return std::nullopt;
}

}  // namespace pulse::adapters::providers

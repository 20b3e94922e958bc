#include "pulse/adapters/proxmox/pve_source.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/http_client/url.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox {
namespace {

constexpr core::JsonLimits kSourceLimits{64 * 1024, 4};

}  // namespace

std::string FleetCredentialName(std::string_view source_name) {
  return absl::StrCat("fleet.", core::ToAbsl(source_name));
}

absl::StatusOr<PveFleetOptions> ParsePveSource(std::string_view source_json, PveFleetOptions base) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(source_json, kSourceLimits);
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("source: not valid JSON: ", doc.status().message()));
  }
  for (const char* secret : {"token_secret", "secret", "password"}) {
    if (doc->IsObject() && doc->HasMember(secret)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "source.", secret,
          ": the token secret is never a setting; enter it with `pulse-server fleet-credential "
          "set --data-dir DIR NAME` (it is sealed in the data dir)"));
    }
  }
  core::JsonObjectReader reader(*doc, "source");
  PULSE_RETURN_IF_ERROR(
      reader.ExpectMembers({"name", "kind", "url", "token_id", "fingerprint", "ca_file",
                            "allow_actions", "action_deadline_seconds", "shutdown_timeout_seconds",
                            "max_staleness_ms", "follow_cluster"}));
  PveFleetOptions options = std::move(base);
  if (const std::optional<std::string> name = reader.String("name", {32})) {
    options.source_name = *name;  // the sources document checked its spelling (a-z, 0-9, -)
  }
  const std::optional<std::string> url =
      reader.String("url", {http_client::kMaxUrlBytes, core::JsonPresence::kRequired});
  const std::optional<std::string> token =
      reader.String("token_id", {128, core::JsonPresence::kRequired});
  const std::optional<std::string> fingerprint = reader.String("fingerprint", {200});
  const std::optional<std::string> ca_file = reader.String("ca_file", {4096});
  if (const std::optional<bool> allow = reader.Bool("allow_actions")) {
    options.allow_actions = *allow;
  }
  if (const std::optional<bool> follow = reader.Bool("follow_cluster")) {
    options.follow_cluster = *follow;
  }
  if (const auto deadline = reader.Int("action_deadline_seconds", 1, 3600)) {
    options.action_deadline = absl::Seconds(*deadline);
  }
  if (const auto timeout = reader.Int("shutdown_timeout_seconds", 1, 3600)) {
    options.shutdown_timeout = absl::Seconds(*timeout);
  }
  if (const auto staleness = reader.Int("max_staleness_ms", 0, 600'000)) {
    options.max_staleness = absl::Milliseconds(*staleness);
  }
  PULSE_RETURN_IF_ERROR(reader.Finish());
  absl::StatusOr<http_client::Url> parsed = http_client::ParseUrl(*url, "source.url");
  if (!parsed.ok()) {
    return parsed.status();
  }
  if (!parsed->https || !parsed->path_prefix.empty()) {
    return absl::InvalidArgumentError(
        "source.url must be https://HOST:PORT without a path, as in https://pve1:8006");
  }
  if (!IsValidTokenId(*token)) {
    return absl::InvalidArgumentError(
        "source.token_id must be USER@REALM!TOKENID, as in pulse@pve!pulse");
  }
  if (fingerprint.has_value() && ca_file.has_value()) {
    return absl::InvalidArgumentError(
        "source.fingerprint and source.ca_file: give one of them, not both");
  }
  if (fingerprint.has_value() && !IsValidFingerprint(*fingerprint)) {
    return absl::InvalidArgumentError(
        "source.fingerprint must be the SHA-256 fingerprint of the node's certificate, 64 hex "
        "digits with or without ':' (Datacenter > node > System > Certificates, or "
        "`openssl x509 -noout -fingerprint -sha256 -in /etc/pve/local/pve-ssl.pem`)");
  }
  if (ca_file.has_value() && (ca_file->empty() || ca_file->front() != '/')) {
    return absl::InvalidArgumentError("source.ca_file must be an absolute path");
  }
  options.client.url = *url;
  options.client.token_id = *token;
  options.client.fingerprint = fingerprint.value_or("");
  options.client.ca_file = ca_file.value_or("");
  return options;
}

}  // namespace pulse::proxmox

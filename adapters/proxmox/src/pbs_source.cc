#include "pulse/adapters/proxmox/pbs_source.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/http_client/url.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/status_macros.h"

namespace pulse::proxmox {
namespace {

constexpr core::JsonLimits kSourceLimits{64 * 1024, 4};

}  // namespace

absl::StatusOr<PbsFleetOptions> ParsePbsSource(std::string_view source_json, PbsFleetOptions base) {
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
                            "backup_max_age_hours", "max_staleness_ms"}));
  PbsFleetOptions options = std::move(base);
  const std::optional<std::string> name = reader.String("name", {32});
  const std::optional<std::string> url =
      reader.String("url", {http_client::kMaxUrlBytes, core::JsonPresence::kRequired});
  const std::optional<std::string> token =
      reader.String("token_id", {128, core::JsonPresence::kRequired});
  const std::optional<std::string> fingerprint = reader.String("fingerprint", {200});
  const std::optional<std::string> ca_file = reader.String("ca_file", {4096});
  if (const auto hours = reader.Int("backup_max_age_hours", 1, 24 * 366)) {
    options.backup_max_age = absl::Hours(*hours);
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
        "source.url must be https://HOST:PORT without a path, as in https://pbs1:8007");
  }
  if (!IsValidTokenId(*token)) {
    return absl::InvalidArgumentError(
        "source.token_id must be USER@REALM!TOKENID, as in pulse@pbs!pulse");
  }
  if (fingerprint.has_value() && ca_file.has_value()) {
    return absl::InvalidArgumentError(
        "source.fingerprint and source.ca_file: give one of them, not both");
  }
  if (fingerprint.has_value() && !IsValidFingerprint(*fingerprint)) {
    return absl::InvalidArgumentError(
        "source.fingerprint must be the SHA-256 fingerprint of the server's certificate, 64 hex "
        "digits with or without ':' (the PBS dashboard's \"Show Fingerprint\", or "
        "`proxmox-backup-manager cert info`)");
  }
  if (ca_file.has_value() && (ca_file->empty() || ca_file->front() != '/')) {
    return absl::InvalidArgumentError("source.ca_file must be an absolute path");
  }
  if (name.has_value()) {
    options.source_name = *name;
  }
  options.client.api = ProxmoxApi::kBackupServer;
  options.client.url = *url;
  options.client.token_id = *token;
  options.client.fingerprint = fingerprint.value_or("");
  options.client.ca_file = ca_file.value_or("");
  return options;
}

}  // namespace pulse::proxmox

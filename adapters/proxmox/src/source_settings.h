// What the proxmox-ve and proxmox-backup source settings share (pve_source.h, pbs_source.h):
// the document's bounds, the refusal of a secret member, and the connection settings (url,
// token_id, fingerprint or ca_file), read and checked the same way for both kinds.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/http_client/url.h"
#include "pulse/adapters/proxmox/pve_client.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox::internal {

// The settings parsed within their bounds; a token_secret, secret or password member is
// refused, saying where the secret goes.
inline absl::StatusOr<rapidjson::Document> OpenSourceSettings(std::string_view source_json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(source_json, {64 * 1024, 4});
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
  return doc;
}

struct ConnectionSettings {
  std::optional<std::string> url, token_id, fingerprint, ca_file;
};

// Reads url and token_id (required), fingerprint and ca_file (optional) from `reader`.
inline ConnectionSettings ReadConnection(core::JsonObjectReader& reader) {
  ConnectionSettings s;
  s.url = reader.String("url", {http_client::kMaxUrlBytes, core::JsonPresence::kRequired});
  s.token_id = reader.String("token_id", {128, core::JsonPresence::kRequired});
  s.fingerprint = reader.String("fingerprint", {200});
  s.ca_file = reader.String("ca_file", {4096});
  return s;
}

// How the messages name the product: an example URL and token id, and where its certificate's
// fingerprint is found ("node's certificate, ... (Datacenter > ...)").
struct ConnectionExamples {
  std::string_view url;
  std::string_view token_id;
  std::string_view certificate;
};

// Checks `s` (after the reader finished, so url and token_id are there) and writes it into
// `client`. InvalidArgument naming the setting.
inline absl::Status ApplyConnection(const ConnectionSettings& s, const ConnectionExamples& examples,
                                    PveClientOptions& client) {
  absl::StatusOr<http_client::Url> parsed = http_client::ParseUrl(*s.url, "source.url");
  if (!parsed.ok()) {
    return parsed.status();
  }
  if (!parsed->https || !parsed->path_prefix.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "source.url must be https://HOST:PORT without a path, as in ", core::ToAbsl(examples.url)));
  }
  if (!IsValidTokenId(*s.token_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "source.token_id must be USER@REALM!TOKENID, as in ", core::ToAbsl(examples.token_id)));
  }
  if (s.fingerprint.has_value() && s.ca_file.has_value()) {
    return absl::InvalidArgumentError(
        "source.fingerprint and source.ca_file: give one of them, not both");
  }
  if (s.fingerprint.has_value() && !IsValidFingerprint(*s.fingerprint)) {
    return absl::InvalidArgumentError(
        absl::StrCat("source.fingerprint must be the SHA-256 fingerprint of the ",
                     core::ToAbsl(examples.certificate)));
  }
  if (s.ca_file.has_value() && (s.ca_file->empty() || s.ca_file->front() != '/')) {
    return absl::InvalidArgumentError("source.ca_file must be an absolute path");
  }
  client.url = *s.url;
  client.token_id = *s.token_id;
  client.fingerprint = s.fingerprint.value_or("");
  client.ca_file = s.ca_file.value_or("");
  return absl::OkStatus();
}

}  // namespace pulse::proxmox::internal

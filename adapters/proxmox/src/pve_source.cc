#include "pulse/adapters/proxmox/pve_source.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "source_settings.h"

namespace pulse::proxmox {

std::string FleetCredentialName(std::string_view source_name) {
  return absl::StrCat("fleet.", core::ToAbsl(source_name));
}

absl::StatusOr<PveFleetOptions> ParsePveSource(std::string_view source_json, PveFleetOptions base) {
  absl::StatusOr<rapidjson::Document> doc = internal::OpenSourceSettings(source_json);
  if (!doc.ok()) {
    return doc.status();
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
  const internal::ConnectionSettings connection = internal::ReadConnection(reader);
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
  PULSE_RETURN_IF_ERROR(internal::ApplyConnection(
      connection,
      {"https://pve1:8006", "pulse@pve!pulse",
       "node's certificate, 64 hex "
       "digits with or without ':' (Datacenter > node > System > Certificates, or "
       "`openssl x509 -noout -fingerprint -sha256 -in /etc/pve/local/pve-ssl.pem`)"},
      options.client));
  return options;
}

}  // namespace pulse::proxmox

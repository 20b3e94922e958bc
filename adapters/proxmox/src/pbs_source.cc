#include "pulse/adapters/proxmox/pbs_source.h"

#include <optional>
#include <string>
#include <utility>

#include "pulse/core/json/json_reader.h"
#include "pulse/core/status_macros.h"
#include "source_settings.h"

namespace pulse::proxmox {
absl::StatusOr<PbsFleetOptions> ParsePbsSource(std::string_view source_json, PbsFleetOptions base) {
  absl::StatusOr<rapidjson::Document> doc = internal::OpenSourceSettings(source_json);
  if (!doc.ok()) {
    return doc.status();
  }
  core::JsonObjectReader reader(*doc, "source");
  PULSE_RETURN_IF_ERROR(
      reader.ExpectMembers({"name", "kind", "url", "token_id", "fingerprint", "ca_file",
                            "backup_max_age_hours", "max_staleness_ms"}));
  PbsFleetOptions options = std::move(base);
  const std::optional<std::string> name = reader.String("name", {32});
  const internal::ConnectionSettings connection = internal::ReadConnection(reader);
  if (const auto hours = reader.Int("backup_max_age_hours", 1, 24 * 366)) {
    options.backup_max_age = absl::Hours(*hours);
  }
  if (const auto staleness = reader.Int("max_staleness_ms", 0, 600'000)) {
    options.max_staleness = absl::Milliseconds(*staleness);
  }
  PULSE_RETURN_IF_ERROR(reader.Finish());
  PULSE_RETURN_IF_ERROR(internal::ApplyConnection(
      connection,
      {"https://pbs1:8007", "pulse@pbs!pulse",
       "server's certificate, 64 hex "
       "digits with or without ':' (the PBS dashboard's \"Show Fingerprint\", or "
       "`proxmox-backup-manager cert info`)"},
      options.client));
  if (name.has_value()) {
    options.source_name = *name;
  }
  options.client.api = ProxmoxApi::kBackupServer;
  return options;
}

}  // namespace pulse::proxmox

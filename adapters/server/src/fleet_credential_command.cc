#include "pulse/adapters/server/fleet_credential_command.h"

#include <filesystem>
#include <memory>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "pulse/adapters/agents/fleet_sources.h"
#include "pulse/adapters/proxmox/pve_source.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::server {
namespace {

absl::Status CheckName(std::string_view name) {
  if (!adapters::agents::IsFleetSourceName(name)) {
    return absl::InvalidArgumentError(
        "NAME must be the fleet source's name: 1-32 of a-z, 0-9 and -, starting with a letter "
        "or digit");
  }
  return absl::OkStatus();
}

int Fail(std::string_view command, const absl::Status& status) {
  const std::string line = absl::StrCat("pulse-server fleet-credential ", core::ToAbsl(command),
                                        ": ", status.message(), "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace

absl::Status SetFleetCredential(const std::string& data_dir, std::string_view name,
                                std::string_view secret, absl::Time now) {
  PULSE_RETURN_IF_ERROR(CheckName(name));
  absl::string_view text = core::ToAbsl(secret);
  if (!absl::ConsumeSuffix(&text, "\r\n")) {
    absl::ConsumeSuffix(&text, "\n");
  }
  if (text.empty()) {
    return absl::InvalidArgumentError("the secret is empty (give it on stdin)");
  }
  if (text.size() > kMaxFleetSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the secret is longer than ", kMaxFleetSecretBytes, " bytes"));
  }
  for (const char c : text) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(
          "the secret holds whitespace or a control character (give one secret on one line)");
    }
  }
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(data_dir, ec);
  if (!ec && dir.has_parent_path()) {
    std::filesystem::create_directories(dir.parent_path(), ec);
  }
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<adapters::storage::SqliteStorage> storage,
                         adapters::storage::OpenSqliteStorage(data_dir));
  return storage->credentials->Put(proxmox::FleetCredentialName(name), core::ToStd(text), now);
}

absl::Status DeleteFleetCredential(const std::string& data_dir, std::string_view name) {
  PULSE_RETURN_IF_ERROR(CheckName(name));
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(data_dir) / "pulse.db", ec)) {
    return absl::NotFoundError(absl::StrCat("no credential store in ", data_dir,
                                            " (pulse.db is missing; check --data-dir)"));
  }
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<adapters::storage::SqliteStorage> storage,
                         adapters::storage::OpenSqliteStorage(data_dir));
  return storage->credentials->Delete(proxmox::FleetCredentialName(name));
}

int RunFleetCredentialSet(const std::string& data_dir, const std::string& name, std::FILE* in) {
  std::string secret;
  char buffer[1024];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), in)) > 0) {
    secret.append(buffer, n);
    if (secret.size() > kMaxFleetSecretBytes + 2) {
      return Fail("set", absl::InvalidArgumentError(absl::StrCat("the secret is longer than ",
                                                                 kMaxFleetSecretBytes, " bytes")));
    }
  }
  adapters::system::SystemClock clock;
  if (absl::Status s = SetFleetCredential(data_dir, name, secret, clock.Now()); !s.ok()) {
    return Fail("set", s);
  }
  const std::string line =
      absl::StrCat("stored the secret of fleet source \"", name, "\" in ", data_dir, "\n");
  std::fwrite(line.data(), 1, line.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int RunFleetCredentialDelete(const std::string& data_dir, const std::string& name) {
  if (absl::Status s = DeleteFleetCredential(data_dir, name); !s.ok()) {
    return Fail("delete", s);
  }
  const std::string line =
      absl::StrCat("deleted the secret of fleet source \"", name, "\" from ", data_dir, "\n");
  std::fwrite(line.data(), 1, line.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace pulse::server

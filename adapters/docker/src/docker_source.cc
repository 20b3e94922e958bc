#include "pulse/adapters/docker/docker_source.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::docker {
namespace {

constexpr core::JsonLimits kSourceLimits{64 * 1024, 4};
constexpr std::size_t kMaxSocketPathBytes = 100;

absl::Status CheckEndpoint(const std::string& endpoint) {
  constexpr std::string_view kUnix = "unix://";
  if (endpoint.rfind(kUnix, 0) != 0) {
    return absl::InvalidArgumentError(
        "source.endpoint must be unix:// and an absolute socket path, as in "
        "unix:///var/run/docker.sock");
  }
  const std::string_view path = std::string_view(endpoint).substr(kUnix.size());
  const bool printable = std::all_of(path.begin(), path.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (path.empty() || path.front() != '/' || path.size() > kMaxSocketPathBytes || !printable ||
      path.find("/../") != std::string_view::npos || absl::EndsWith(core::ToAbsl(path), "/..") ||
      path.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("source.endpoint must name a socket by an absolute path of at most ",
                     kMaxSocketPathBytes, " printable bytes without spaces or \"..\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DockerFleetOptions> ParseDockerSource(std::string_view source_json,
                                                     DockerFleetOptions base) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(source_json, kSourceLimits);
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("source: not valid JSON: ", doc.status().message()));
  }
  core::JsonObjectReader reader(*doc, "source");
  PULSE_RETURN_IF_ERROR(
      reader.ExpectMembers({"name", "kind", "endpoint", "allow_actions", "sample_interval_seconds",
                            "max_staleness_ms", "action_deadline_seconds", "stop_grace_seconds"}));
  DockerFleetOptions options = std::move(base);
  const std::optional<std::string> endpoint = reader.String("endpoint", {kMaxSocketPathBytes + 7});
  if (const std::optional<bool> allow = reader.Bool("allow_actions")) {
    options.allow_actions = *allow;
  }
  // 0 turns the background sampler off (stats are then read on demand).
  if (const auto interval = reader.Int("sample_interval_seconds", 0, 3600)) {
    options.sample_interval = absl::Seconds(*interval);
  }
  if (const auto staleness = reader.Int("max_staleness_ms", 0, 60'000)) {
    options.max_staleness = absl::Milliseconds(*staleness);
  }
  if (const auto deadline = reader.Int("action_deadline_seconds", 1, 600)) {
    options.action_deadline = absl::Seconds(*deadline);
  }
  if (const auto grace = reader.Int("stop_grace_seconds", 0, 300)) {
    options.stop_grace = absl::Seconds(*grace);
  }
  PULSE_RETURN_IF_ERROR(reader.Finish());
  if (endpoint.has_value()) {
    PULSE_RETURN_IF_ERROR(CheckEndpoint(*endpoint));
    options.engine.endpoint = *endpoint;
  }
  return options;
}

}  // namespace pulse::docker

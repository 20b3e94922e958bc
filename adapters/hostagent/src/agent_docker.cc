#include "pulse/adapters/hostagent/agent_docker.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/docker/docker_source.h"
#include "pulse/adapters/hostagent/wire.h"
#include "pulse/core/model/resource_id.h"

namespace pulse::adapters::hostagent {
namespace {

// The types DockerFleet reports besides its node; with docker-engine, the types a host id may
// map back to.
constexpr std::array<std::string_view, 3> kDockerTypes = {"app-container", "compose-project",
                                                          "compose-service"};

bool IsDockerType(std::string_view type) {
  return std::find(kDockerTypes.begin(), kDockerTypes.end(), type) != kDockerTypes.end();
}

}  // namespace

std::string DockerIdToHost(std::string_view docker_id, std::string_view host) {
  const std::optional<core::CanonicalResourceId> id = core::ParseCanonicalResourceId(docker_id);
  if (!id.has_value()) {
    return "";
  }
  const std::string type = id->type == "node" ? std::string(kDockerEngineType) : id->type;
  std::string mapped = type + ":" + std::string(host) + "/" + id->local;
  return ResourceBelongsToHost(mapped, host) ? mapped : "";
}

std::optional<std::string> HostIdToDocker(std::string_view host_id, std::string_view host) {
  if (!ResourceBelongsToHost(host_id, host)) {
    return std::nullopt;
  }
  const std::optional<core::CanonicalResourceId> id = core::ParseCanonicalResourceId(host_id);
  if (!id.has_value() || (id->type != kDockerEngineType && !IsDockerType(id->type))) {
    return std::nullopt;
  }
  // ResourceBelongsToHost checked the "<host>/" prefix and that something follows it.
  const std::string_view local = std::string_view(id->local).substr(host.size() + 1);
  const std::string type = id->type == kDockerEngineType ? std::string("node") : id->type;
  std::string docker_id = type + ":" + std::string(local);
  if (!core::IsCanonicalResourceId(docker_id)) {
    return std::nullopt;
  }
  return docker_id;
}

absl::StatusOr<std::unique_ptr<AgentDocker>> AgentDocker::Create(AgentDockerOptions options) {
  const std::string& endpoint = options.endpoint;
  // The endpoint goes into a docker source document below; anything a JSON string would need
  // escaped is refused first (ParseDockerSource refuses it anyway: paths are printable).
  const bool plain = std::all_of(endpoint.begin(), endpoint.end(), [](char c) {
    return c > 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (!plain || !absl::StartsWith(endpoint, "unix://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "docker_endpoint_invalid: --docker-endpoint wants unix:///absolute/path or none, not '",
        plain ? endpoint : "(unprintable)", "'"));
  }
  docker::DockerFleetOptions base = options.fleet;
  base.allow_actions = options.allow_actions;
  base.allow_exec = options.allow_exec;
  absl::StatusOr<docker::DockerFleetOptions> parsed = docker::ParseDockerSource(
      absl::StrCat(R"({"name":"agent","kind":"docker","endpoint":")", endpoint, R"("})"), base);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("docker_endpoint_invalid: ", parsed.status().message()));
  }
  options.fleet = *std::move(parsed);
  return std::unique_ptr<AgentDocker>(new AgentDocker(std::move(options)));
}

docker::DockerFleet* AgentDocker::Fleet() {
  absl::MutexLock lock(&mu_);
  if (fleet_ == nullptr) {
    absl::StatusOr<std::unique_ptr<docker::DockerFleet>> opened =
        docker::DockerFleet::Open(options_.fleet);
    if (!opened.ok()) {
      Transition(false, absl::StrCat("the Docker daemon at ", options_.fleet.engine.endpoint,
                                     " is not answering; containers are left out of reports: ",
                                     opened.status().message()));
      return nullptr;
    }
    fleet_ = *std::move(opened);
  }
  return fleet_.get();
}

void AgentDocker::MarkDown(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  Transition(false, absl::StrCat("the Docker daemon at ", options_.fleet.engine.endpoint,
                                 " stopped answering; containers are left out of reports: ",
                                 status.message()));
}

void AgentDocker::MarkUp() {
  absl::MutexLock lock(&mu_);
  Transition(true, absl::StrCat("the Docker daemon at ", options_.fleet.engine.endpoint,
                                " answers; its containers are reported"));
}

void AgentDocker::Transition(bool up, const std::string& line) {
  if (up_.has_value() && *up_ == up) {
    return;
  }
  up_ = up;
  if (options_.log) {
    options_.log(up, line);
  }
}

}  // namespace pulse::adapters::hostagent

#include "completion_values.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "config.h"
#include "id_resolution.h"
#include "json_output.h"
#include "routes.h"

namespace pulse::cli {
namespace {

// A completion waits this long at most: a shell's Tab must not hang on a slow server.
constexpr absl::Duration kCompletionTimeout = absl::Seconds(2);

// The members `key` of the objects in the array `array_key` of `reply`.
void Collect(const rapidjson::Value& reply, std::string_view array_key, std::string_view key,
             std::vector<std::string>& out) {
  const rapidjson::Value* items = Member(reply, array_key);
  if (items == nullptr || !items->IsArray()) {
    return;
  }
  for (const rapidjson::Value& item : items->GetArray()) {
    if (item.IsObject()) {
      const std::string value = Str(item, key);
      if (!value.empty()) {
        out.push_back(value);
      }
    }
  }
}

std::vector<std::string> FromServer(const ValueRequest& request, CommandContext& ctx) {
  std::vector<std::string> out;
  switch (request.source) {
    case ValueSource::kFindingId:
      ListIds(ctx, IdKind::kFinding, out);
      return out;
    case ValueSource::kActionId:
      ListIds(ctx, IdKind::kAction, out);
      return out;
    case ValueSource::kSessionId:
      ListIds(ctx, IdKind::kSession, out);
      return out;
    case ValueSource::kResourceId:
    case ValueSource::kResourceType:
    case ValueSource::kTechnology: {
      const rapidjson::Document none(rapidjson::kObjectType);
      const absl::StatusOr<ApiCall> call = CapabilityCall("get_fleet_context", none);
      Failure failure;
      std::optional<rapidjson::Document> reply =
          call.ok() ? ctx.FetchJson(*call, failure) : std::nullopt;
      if (reply.has_value()) {
        const char* key = request.source == ValueSource::kResourceId     ? "canonicalId"
                          : request.source == ValueSource::kResourceType ? "resourceType"
                                                                         : "technology";
        Collect(*reply, "resources", key, out);
      }
      return out;
    }
    case ValueSource::kCapability: {
      if (request.positionals.empty()) {
        return out;
      }
      rapidjson::Document args(rapidjson::kObjectType);
      SetStringArg(args, "resourceId", request.positionals.front());
      const absl::StatusOr<ApiCall> call = CapabilityCall("list_resource_capabilities", args);
      Failure failure;
      std::optional<rapidjson::Document> reply =
          call.ok() ? ctx.FetchJson(*call, failure) : std::nullopt;
      if (reply.has_value()) {
        Collect(*reply, "capabilities", "name", out);
      }
      return out;
    }
    case ValueSource::kContext:
      return out;
  }
  return out;
}

}  // namespace

std::vector<std::string> FetchCompletionValues(const ValueRequest& request) {
  EndpointInputs inputs;
  if (!request.server.empty()) {
    inputs.server_flag = request.server;
  }
  if (!request.context.empty()) {
    inputs.context_flag = request.context;
  }
  inputs.config_path = ConfigPath();
  if (request.source == ValueSource::kContext) {
    Failure failure;
    std::optional<CliConfig> config = LoadConfig(inputs.config_path, failure);
    std::vector<std::string> names;
    if (config.has_value()) {
      for (const CliContext& c : config->contexts) {
        names.push_back(c.name);
      }
    }
    return names;
  }
  Failure failure;
  std::optional<Endpoint> endpoint = ResolveEndpoint(inputs, failure);
  if (!endpoint.has_value()) {
    return {};
  }
  ClientOptions options;
  options.base_url = endpoint->server;
  options.token = endpoint->token;
  options.timeout = kCompletionTimeout;
  absl::StatusOr<std::unique_ptr<PulseClient>> client = PulseClient::Open(options);
  if (!client.ok()) {
    return {};
  }
  // Nothing of this command may reach the terminal: the shell shows only stdout's candidates.
  const Console quiet(ConsoleSinks{[](std::string_view) {}, [](std::string_view) {}, nullptr},
                      ConsoleTraits{});
  CommandContext ctx(quiet, **client, options);
  std::vector<std::string> values = FromServer(request, ctx);
  // Sorted, once each (a type or technology is shared by many resources).
  std::set<std::string> unique(values.begin(), values.end());
  return {unique.begin(), unique.end()};
}

}  // namespace pulse::cli

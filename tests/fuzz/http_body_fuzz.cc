// Fuzzes the JSON request-body codecs of pulse-server: the route's closed-schema check
// (BodyValidator, compiled from the manifest or ServerRoutes() exactly as the Router does) and
// then the handler's decoder, on the body as the handler passes it (BodyWithPathParams where the
// handler uses it). Byte 0 picks the route; the rest is the body. Every decoder also sees the raw
// body, as a decoder must stand on its own. Invariants: an accepted body is a JSON object whose
// canonical text re-parses to the same canonical text, passes the validator again and decodes
// to the same value; a chat body can only lower the configured control level; an action record
// that decodes re-encodes to text that decodes to the same record.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fuzz_support.h"
#include "pulse/adapters/http/body_validator.h"
#include "pulse/adapters/http/server_routes.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/findings/finding_requests.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/model/autonomy.h"
#include "pulse/core/model/operator_state.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/policy/invocation_policy.h"

namespace {

namespace core = pulse::core;
namespace http = pulse::adapters::http;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z
constexpr std::string_view kActionId = "act_fuzz1";
constexpr std::string_view kResourceId = "node:pve1";

enum class Codec {
  kFindingId,
  kSnooze,
  kDismiss,
  kResolve,
  kPatrolScope,
  kAutonomy,
  kPlanAction,
  kDecision,
  kExecute,
  kOperatorState,
  kChat,
  kNote,
  kSuppressionRule,
  kActionRecord,
};
constexpr std::size_t kCodecCount = 14;

struct Route {
  std::unique_ptr<http::BodyValidator> validator;  // null: no schema (decoder only)
  core::AgentErrorCode code = core::AgentErrorCode::kInvalidRequest;
  http::PathParams params;
};

Route Compile(std::string_view schema, core::AgentErrorCode code, http::PathParams params) {
  Route route;
  route.code = code;
  route.params = std::move(params);
  if (!schema.empty()) {
    absl::StatusOr<std::unique_ptr<http::BodyValidator>> v = http::BodyValidator::Compile(schema);
    PULSE_FUZZ_CHECK(v.ok(), "a route's body schema does not compile");
    route.validator = *std::move(v);
  }
  return route;
}

Route CapabilityRoute(std::string_view name, http::PathParams params = {}) {
  const core::AgentCapability* capability = core::FindAgentCapability(name);
  PULSE_FUZZ_CHECK(capability != nullptr, "a manifest capability is missing");
  return Compile(core::BodySchemaJson(*capability),
                 capability->body_error_code.value_or(core::AgentErrorCode::kInvalidRequest),
                 std::move(params));
}

std::vector<Route> BuildRoutes() {
  std::vector<Route> r;
  r.push_back(CapabilityRoute("acknowledge_finding"));
  r.push_back(CapabilityRoute("snooze_finding"));
  r.push_back(CapabilityRoute("dismiss_finding"));
  r.push_back(CapabilityRoute("resolve_finding"));
  r.push_back(CapabilityRoute("run_patrol"));
  r.push_back(CapabilityRoute("set_patrol_autonomy"));
  r.push_back(CapabilityRoute("plan_action"));
  r.push_back(CapabilityRoute("decide_action", {{"actionId", std::string(kActionId)}}));
  r.push_back(CapabilityRoute("execute_action", {{"actionId", std::string(kActionId)}}));
  r.push_back(CapabilityRoute("set_operator_state", {{"resourceId", std::string(kResourceId)}}));
  const http::ServerRoute* chat = http::FindServerRoute("chat");
  PULSE_FUZZ_CHECK(chat != nullptr, "the chat route is missing");
  r.push_back(Compile(chat->spec.body_schema, chat->spec.body_error_code, {}));
  r.push_back(Compile({}, core::AgentErrorCode::kInvalidRequest, {}));  // note
  r.push_back(Compile({}, core::AgentErrorCode::kInvalidRequest, {}));  // suppression rule
  r.push_back(Compile({}, core::AgentErrorCode::kInvalidRequest, {}));  // action record
  PULSE_FUZZ_CHECK(r.size() == kCodecCount, "one route per codec");
  return r;
}

// A function-local static, destroyed at exit: RapidJSON keeps string pointers packed with flag
// bits (48-bit pointer optimisation), which LeakSanitizer cannot follow, so compiled schemas
// that are never destroyed would read as leaks.
const std::vector<Route>& Routes() {
  static const std::vector<Route> routes = BuildRoutes();
  return routes;
}

// Decodes twice (the body and its canonical form) and requires the same outcome and value.
template <class Decode>
void Same(Decode decode, std::string_view body, std::string_view canonical) {
  auto a = decode(body);
  auto b = decode(canonical);
  PULSE_FUZZ_CHECK(a.ok() == b.ok(), "the canonical body decodes differently");
  if constexpr (std::equality_comparable<typename decltype(a)::value_type>) {
    if (a.ok()) {
      PULSE_FUZZ_CHECK(*a == *b, "the canonical body decodes to another value");
    }
  }
}

// Runs the route's decoder on `body`; when `canonical` is set, compares against it.
void Decode(Codec codec, const Route& route, std::string_view body,
            std::optional<std::string_view> canonical) {
  const core::ActionActor actor{core::ActorKind::kHuman, "fuzz-user"};
  auto check = [&](auto decode) {
    if (canonical.has_value()) {
      Same(decode, body, *canonical);
    } else {
      static_cast<void>(decode(body));
    }
  };
  switch (codec) {
    case Codec::kFindingId:
      return check([](std::string_view b) { return core::ParseFindingIdRequest(b); });
    case Codec::kSnooze:
      return check([](std::string_view b) { return core::ParseSnoozeRequest(b); });
    case Codec::kDismiss:
      return check([](std::string_view b) { return core::ParseDismissRequest(b); });
    case Codec::kResolve:
      return check([](std::string_view b) { return core::ParseResolveRequest(b); });
    case Codec::kPatrolScope:
      return check([](std::string_view b) { return core::ParsePatrolScopeRequest(b); });
    case Codec::kAutonomy:
      return check([](std::string_view b) {
        absl::StatusOr<core::AutonomySettings> next =
            core::ParseAutonomyUpdate(b, core::AutonomySettings{}, "fuzz-user", true, kNow);
        if (next.ok()) {
          absl::StatusOr<core::AutonomySettings> stored =
              core::AutonomySettingsFromStorageJson(core::AutonomySettingsToStorageJson(*next));
          PULSE_FUZZ_CHECK(stored.ok() && *stored == *next, "autonomy storage round trip");
        }
        return next;
      });
    case Codec::kPlanAction:
      return check([&actor](std::string_view b) { return core::ParsePlanActionBody(b, actor); });
    case Codec::kDecision:
      return check([&route](std::string_view b) {
        return core::ParseDecisionBody(
            http::BodyWithPathParams(b, route.params, http::PathParamsInBody::kRemove));
      });
    case Codec::kExecute:
      return check([&route](std::string_view b) {
        return core::ParseExecuteBody(
            http::BodyWithPathParams(b, route.params, http::PathParamsInBody::kRemove));
      });
    case Codec::kOperatorState:
      return check([&route](std::string_view b) {
        return core::ParseOperatorStateInput(
            http::BodyWithPathParams(b, route.params, http::PathParamsInBody::kAdd), kResourceId,
            kNow, "fuzz-user");
      });
    case Codec::kChat:
      return check([](std::string_view b) -> absl::StatusOr<int> {
        absl::StatusOr<rapidjson::Document> doc = core::ParseJson(b);
        if (!doc.ok() || !doc->IsObject()) {
          return doc.status().ok() ? absl::InvalidArgumentError("not an object") : doc.status();
        }
        int effective = 0;
        for (int level = 0; level < 3; ++level) {
          core::PolicyInputs inputs;
          inputs.scopes = core::ScopeSet::All();
          inputs.configured_max = static_cast<core::ControlLevel>(level);
          inputs.profile = core::ExecutionProfile::kInteractive;
          const core::InvocationPolicy policy = core::InvocationPolicy::FromRequest(inputs, *doc);
          PULSE_FUZZ_CHECK(core::Lower(inputs.configured_max, policy.EffectiveLevel()) ==
                               policy.EffectiveLevel(),
                           "a chat body raised the control level");
          effective = effective * 3 + static_cast<int>(policy.EffectiveLevel());
        }
        return effective;
      });
    case Codec::kNote:
      return check([](std::string_view b) { return core::ParseNoteRequest(b); });
    case Codec::kSuppressionRule:
      return check([](std::string_view b) { return core::ParseSuppressionRuleRequest(b); });
    case Codec::kActionRecord:
      return check([](std::string_view b) {
        absl::StatusOr<core::ActionRecord> record = core::ParseActionRecordJson(b);
        if (record.ok()) {
          const std::string text = core::ActionRecordToJson(*record);
          absl::StatusOr<core::ActionRecord> again = core::ParseActionRecordJson(text);
          PULSE_FUZZ_CHECK(again.ok() && *again == *record, "action record round trip");
          PULSE_FUZZ_CHECK(core::ActionRecordToJson(*again) == text, "re-encoding differs");
        }
        return record;
      });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<Route>& routes = Routes();
  pulse::fuzz::Input in(data, size);
  const auto codec = static_cast<Codec>(in.Byte() % kCodecCount);
  const Route& route = routes[static_cast<std::size_t>(codec)];
  const std::string body(in.Rest());

  // A decoder must stand on its own, whatever the validator would have said.
  Decode(codec, route, body, std::nullopt);
  if (route.validator == nullptr) {
    return 0;
  }
  const std::optional<core::AgentError> refused =
      route.validator->Validate(body, route.code, route.params);
  if (refused.has_value()) {
    PULSE_FUZZ_CHECK(refused->code == route.code, "a refusal with another code");
    return 0;
  }
  // Accepted: {} when blank, else one object; its canonical text is a fixed point.
  const bool blank = body.find_first_not_of(" \t\r\n") == std::string::npos;
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(blank ? "{}" : body);
  PULSE_FUZZ_CHECK(doc.ok() && doc->IsObject(), "an accepted body is not one JSON object");
  const std::string canonical = core::CanonicalJson(*doc);
  absl::StatusOr<rapidjson::Document> again = core::ParseJson(canonical);
  PULSE_FUZZ_CHECK(again.ok() && *again == *doc, "the canonical body re-parses differently");
  PULSE_FUZZ_CHECK(core::CanonicalJson(*again) == canonical, "canonical text is not stable");
  PULSE_FUZZ_CHECK(!route.validator->Validate(canonical, route.code, route.params).has_value(),
                   "the canonical body is refused");
  Decode(codec, route, body, std::string_view(canonical));
  return 0;
}

// The agent error envelope: the one failure payload of every agent-surface route
// (HTTP, CLI --json, MCP structuredContent): {"error":"<code>","message":"...","details"?:{}}.
// Codes form a closed snake_case vocabulary declared here and nowhere else; clients branch on
// the code, never on the message. Plain values; no shared state.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::core {

// The closed vocabulary. Wire strings are listed in agent_error.cc's single table.
enum class AgentErrorCode {
  // generic request handling
  kInvalidRequest,
  kMissingScope,
  kResourceNotFound,
  // operator state
  kOperatorStateNotSet,
  kOperatorStateInvalid,
  // findings (set F)
  kInvalidFindingRequest,
  kFindingNotFound,
  kFindingActionNotAllowed,
  kPatrolUnavailable,
  // Patrol runs and autonomy (/api/ai/patrol/*)
  kInvalidAutonomyLevel,   // PUT autonomy: unknown level or a malformed body
  kInvalidPatrolScope,     // POST run: a malformed or non-strict scope body
  kPatrolScopeUnresolved,  // POST run: the scope names no existing resource
  kPatrolAlreadyRunning,   // POST run: a run of the same scope holds the slot (current_run_id)
  kPatrolRunNotFound,      // GET runs/{id}: no such run (or pruned from the last 100)
  // Autopilot acknowledgements (/api/ai/patrol/autonomy/acknowledgements)
  kInvalidAutopilotAcknowledgement,    // a malformed or non-strict body
  kAutopilotAcknowledgementForbidden,  // the caller is an agent: only a human may acknowledge
  kAutopilotAcknowledgementNotFound,   // DELETE: no such acknowledgement is recorded
  // plan (set P)
  kInvalidActionRequest,
  kMockModeEnabled,
  kActionActorUnavailable,
  kCapabilityNotFound,
  kActionExecutionUnavailable,
  kActionRefreshNotAllowed,
  // decide (set D) and execute (set E)
  kMissingId,
  kInvalidId,
  kInvalidActionDecision,
  kActionNotFound,
  kActionNotPending,
  kActionPlanExpired,
  kActionPlanIdentityMismatch,
  kActionApprovalForbidden,
  kActionStepUpUnavailable,
  kActionDecisionConflict,
  kActionSeparationRequired,
  kActionReplanRequired,
  kActionPlanDrift,
  kActionEmergencyStop,
  kActionDryRunOnly,
  kResourceRemediationLocked,
  kActionExecutorUnavailable,
  kActionExecutionAvailabilityFailed,
  kInvalidActionExecution,
  kActionNotApproved,
  kActionAlreadyExecuting,
  kActionExecutionFinal,
  kActionExecutionForbidden,
  kActionNotExecuting,
  // action listing (internal failures and bad list parameters)
  kInvalidActionListLimit,
  kInvalidActionListView,
  kInvalidActionListCursor,
  kActionListFailed,
  kActionDetailFailed,
  // the Assistant's server routes (chat, sessions, questions, models); outside the manifest
  kAssistantNotConfigured,  // no model provider is configured: chat, resume, models
  kSessionNotFound,         // no Assistant session has this id
  kSessionBusy,             // a run holds the session now
  kQuestionNotFound,        // no session is waiting for an answer to this question
  kProviderUnavailable,     // the configured model provider could not be reached or refused
  // API token management (/api/security/tokens)
  kInvalidTokenRequest,       // a malformed body, name, scope, kind or lifetime
  kTokenNotFound,             // DELETE: no live token has this id
  kTokenManagementForbidden,  // not a human token, or a token wider than the caller's scopes
  // sessions
  kSessionNotResumable,  // a Patrol (system) session: never continued, resumed or answered
  // host agents (/api/agents/*, docs/agent.md); outside the manifest
  kAgentTokenRequired,  // the route is for pulse-agent: the token's kind must be agent
  kAgentHostMismatch,   // the token belongs to another host, or the host to another live token
  // the operator console (/ and /api/console/*, docs/console.md); outside the manifest
  kHumanTokenRequired,  // console sign-in takes a token of kind human
  kConsoleNotBuilt,     // this pulse-server was built without the console's assets
  // transport: what the HTTP layer answers before (or instead of) a route's handler. They can
  // meet any call, so capabilities do not declare them (TransportErrorCodes below).
  kUnauthorized,           // no credential, or one the token store does not accept
  kRouteNotFound,          // no route has this path
  kMethodNotAllowed,       // a route has this path, but not for this method
  kRequestTooLarge,        // the body is over the server's limit
  kUriTooLong,             // the request target is over the server's limit
  kInternalError,          // a handler failed unexpectedly
  kServiceUnavailable,     // the server cannot take the request now (stream cap, auth store down)
  kUnsupportedMediaType,   // a body whose Content-Type is not application/json (415)
  kTooManyStreams,         // the token already holds its cap of concurrent streams (429)
  kRequestHeaderTooLarge,  // a header line, the field count or the whole head over a bound (431)
  kRequestTimeout,         // the request head or body did not arrive within its deadline (408)
  kCsrfRejected,  // a console-cookie request that changes state without the session's CSRF token,
                  // or from another origin (403; docs/console.md)
};

// Every code, in declaration order.
const std::vector<AgentErrorCode>& AllAgentErrorCodes();

// Wire string, e.g. "resource_not_found".
std::string_view ToString(AgentErrorCode code);
// Exact-match parse; unknown strings are nullopt.
std::optional<AgentErrorCode> ParseAgentErrorCode(std::string_view text);
// The HTTP status a route answers with for this code (400, 401, 403, 404, 405, 408, 409, 410,
// 413, 414, 415, 422, 423, 429, 431, 500, 502, 503).
int HttpStatusFor(AgentErrorCode code);

// Sets of codes a capability declares (docs/api.md), in advertised order.
const std::vector<AgentErrorCode>& FindingErrorCodes();  // set F
const std::vector<AgentErrorCode>& PlanErrorCodes();     // set P
const std::vector<AgentErrorCode>& DecideErrorCodes();   // set D
const std::vector<AgentErrorCode>& ExecuteErrorCodes();  // set E
// The cross-cutting codes any HTTP call can meet whatever its capability: invalid_request
// (malformed path, query or framing), unauthorized, missing_scope, route_not_found,
// method_not_allowed, request_too_large, uri_too_long, internal_error, service_unavailable,
// unsupported_media_type, too_many_streams, request_header_too_large, request_timeout and
// csrf_rejected.
const std::vector<AgentErrorCode>& TransportErrorCodes();

struct AgentError {
  AgentErrorCode code = AgentErrorCode::kInvalidRequest;
  std::string message;
  // String-to-string details; omitted from the JSON when empty. Ordered for stable output.
  std::map<std::string, std::string> details;

  // The envelope as compact JSON. missing_scope also carries a top-level "requiredScope"
  // (taken from details["requiredScope"]) for wire compatibility with the Pulse surface.
  std::string ToJson() const;
};

// Convenience constructors.
AgentError MakeAgentError(AgentErrorCode code, std::string message);
AgentError MissingScopeError(std::string_view required_scope);

// Decodes an envelope. Fails with InvalidArgument unless the body is a JSON object whose
// "error" is a known code and whose "message" is a non-empty string; "details", when
// present, must be an object of strings.
absl::StatusOr<AgentError> ParseAgentError(std::string_view json);

}  // namespace pulse::core

// Findings: the list and the operator lifecycle operations (acknowledge, snooze, dismiss,
// resolve, and the undo routes unsnooze and reopen). Every refusal is one of set F through
// ToFindingAgentError: a body the decoder refuses is invalid_finding_request, an unknown id
// finding_not_found, a transition the finding's state forbids finding_action_not_allowed, a store
// that fails patrol_unavailable.
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/agent/agent_query.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/findings/finding_requests.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;
using http::HttpReply;
using http::HttpRequest;

HttpReply FindingError(const absl::Status& status) {
  std::optional<core::AgentError> error = core::ToFindingAgentError(status);
  if (!error.has_value()) {
    return HttpReply::Error(core::AgentErrorCode::kPatrolUnavailable, "findings are unavailable");
  }
  if (error->code == core::AgentErrorCode::kPatrolUnavailable) {
    LogLine(absl::StrCat("the finding store failed: ", status.ToString()));
  }
  return HttpReply::Error(*error);
}

HttpReply Done(std::string_view message) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("success", true);
  w.Member("message", message);
  w.EndObject();
  return HttpReply::Json(w.Take());
}

// Decodes the body with `parse`, then applies `operation` to the request; the message of a
// success comes from `message`.
template <class Request, class Parse, class Operation, class Message>
HttpReply Lifecycle(const HttpRequest& request, Parse parse, Operation operation, Message message) {
  absl::StatusOr<Request> decoded = parse(request.body);
  if (!decoded.ok()) {
    return FindingError(decoded.status());
  }
  absl::StatusOr<core::Finding> changed = operation(*decoded);
  if (!changed.ok()) {
    return FindingError(changed.status());
  }
  return Done(message(*decoded));
}

}  // namespace

absl::Status BindFindingRoutes(http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle("list_findings", [&ctx](const HttpRequest& request) {
    absl::StatusOr<core::FindingPage> page =
        ctx.views.FindingListPage(core::ParseFindingListQuery(request.query));
    if (!page.ok()) {
      // A malformed cursor is the caller's (400 invalid_finding_request, details.cursor).
      if (std::optional<core::AgentError> error = core::AgentQueryError(page.status())) {
        return HttpReply::Error(*std::move(error));
      }
      return Unavailable("the finding list", page.status());
    }
    HttpReply reply = HttpReply::Json(std::move(page->body));
    if (page->next_cursor.has_value()) {
      reply.headers.emplace_back(std::string(core::agent_wire::kNextCursorHeader),
                                 *std::move(page->next_cursor));
    }
    return reply;
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("acknowledge_finding", [&ctx](const HttpRequest& request) {
    return Lifecycle<core::FindingIdRequest>(
        request, core::ParseFindingIdRequest,
        [&ctx](const core::FindingIdRequest& r) { return ctx.findings.Acknowledge(r.finding_id); },
        [](const core::FindingIdRequest&) { return std::string("Finding acknowledged"); });
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("snooze_finding", [&ctx](const HttpRequest& request) {
    return Lifecycle<core::SnoozeRequest>(
        request, core::ParseSnoozeRequest,
        [&ctx](const core::SnoozeRequest& r) {
          return ctx.findings.Snooze(r.finding_id, r.duration_hours, r.note);
        },
        [](const core::SnoozeRequest& r) {
          return absl::StrCat("Finding snoozed for ", r.duration_hours,
                              r.duration_hours == 1 ? " hour" : " hours");
        });
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("dismiss_finding", [&ctx](const HttpRequest& request) {
    return Lifecycle<core::DismissRequest>(
        request, core::ParseDismissRequest,
        [&ctx](const core::DismissRequest& r) {
          return ctx.findings.Dismiss(r.finding_id, r.reason, r.note);
        },
        [](const core::DismissRequest&) { return std::string("Finding dismissed"); });
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("resolve_finding", [&ctx](const HttpRequest& request) {
    return Lifecycle<core::ResolveRequest>(
        request, core::ParseResolveRequest,
        [&ctx](const core::ResolveRequest& r) {
          return ctx.findings.Resolve(r.finding_id, r.resolution_note);
        },
        [](const core::ResolveRequest&) { return std::string("Finding marked as resolved"); });
  }));
  // Server routes (the operator's undo): the body is {finding_id}, checked by the surface
  // table's schema before the handler runs.
  PULSE_RETURN_IF_ERROR(router.Handle("unsnooze_finding", [&ctx](const HttpRequest& request) {
    return Lifecycle<core::FindingIdRequest>(
        request, core::ParseFindingIdRequest,
        [&ctx](const core::FindingIdRequest& r) { return ctx.findings.Unsnooze(r.finding_id); },
        [](const core::FindingIdRequest&) { return std::string("Finding active again"); });
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("reopen_finding", [&ctx](const HttpRequest& request) {
    return Lifecycle<core::FindingIdRequest>(
        request, core::ParseFindingIdRequest,
        [&ctx](const core::FindingIdRequest& r) { return ctx.findings.Undismiss(r.finding_id); },
        [](const core::FindingIdRequest&) { return std::string("Finding reopened"); });
  }));
  return absl::OkStatus();
}

}  // namespace pulse::server

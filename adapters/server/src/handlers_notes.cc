// Operator notes (docs/patrol.md "Operator notes"): a note on a resource ("this VM is a cold
// spare") is the note of its operator state, a note on a finding is the finding's user_note
// (snooze, dismiss and resolve take one). GET /api/ai/notes lists both; PUT and DELETE
// /api/ai/notes/resources/{resourceId} write and remove a resource's note without touching
// the rest of its operator state. Patrol's passes read the notes of the resources they look at.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/operator_state.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {
namespace {

using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using core::AgentErrorCode;

// The most finding notes the list answers.
constexpr std::size_t kMaxListedFindingNotes = 500;

void WriteResourceNote(core::JsonWriter& w, const core::OperatorState& s) {
  w.StartObject();
  w.Member("resource_id", s.resource_id);
  w.Member("note", s.note);
  w.TimeMember("set_at", s.set_at);
  w.Member("set_by", s.set_by);
  w.EndObject();
}

HttpReply ListNotes(ServerContext& ctx) {
  absl::StatusOr<std::vector<core::OperatorState>> resources = ctx.operator_state.WithNotes();
  if (!resources.ok()) {
    return Unavailable("the operator state store", resources.status());
  }
  core::FindingQuery every;
  every.include_inactive = true;
  absl::StatusOr<std::vector<core::Finding>> findings = ctx.findings.List(every);
  if (!findings.ok()) {
    return Unavailable("the findings", findings.status());
  }
  core::JsonWriter w;
  w.StartObject();
  w.Key("resource_notes");
  w.StartArray();
  for (const core::OperatorState& s : *resources) {
    WriteResourceNote(w, s);
  }
  w.EndArray();
  w.Key("finding_notes");
  w.StartArray();
  std::size_t listed = 0;
  for (const core::Finding& f : *findings) {
    if (f.user_note.empty() || listed == kMaxListedFindingNotes) {
      continue;
    }
    ++listed;
    w.StartObject();
    w.Member("finding_id", f.id);
    w.Member("resource_id", f.resource_id);
    w.Member("title", f.title);
    w.Member("note", f.user_note);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return HttpReply::Json(w.Take());
}

// The note of the PUT body: { note: non-empty string } (the schema refused anything else).
absl::StatusOr<std::string> DecodeNote(const std::string& body) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body);
  if (!doc.ok() || !doc->IsObject() || doc->MemberCount() != 1) {
    return absl::InvalidArgumentError("the body is { note: string }");
  }
  const std::optional<std::string_view> note = core::GetString(*doc, "note");
  if (!note.has_value() || note->empty()) {
    return absl::InvalidArgumentError("note must be a non-empty string");
  }
  return std::string(*note);
}

HttpReply SetResourceNote(ServerContext& ctx, const HttpRequest& request) {
  const std::string& id = PathParam(request, "resourceId");
  absl::StatusOr<std::string> note = DecodeNote(request.body);
  if (!note.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(note.status().message()));
  }
  absl::StatusOr<core::FleetResource> resource = ctx.fleet.GetResource(id);
  if (absl::IsNotFound(resource.status()) || absl::IsInvalidArgument(resource.status())) {
    return HttpReply::Error(AgentErrorCode::kResourceNotFound, "Resource not found");
  }
  if (!resource.ok()) {
    return Unavailable("the fleet", resource.status());
  }
  absl::StatusOr<core::OperatorState> state = ctx.operator_state.Get(id);
  if (absl::IsNotFound(state.status())) {
    core::OperatorState fresh;
    fresh.resource_id = id;
    state = std::move(fresh);
  }
  if (!state.ok()) {
    return Unavailable("the operator state store", state.status());
  }
  state->note = *std::move(note);
  state->set_at = ctx.clock.Now();
  state->set_by = ActorFor(request).id;
  // Too long, not clean UTF-8: ValidateOperatorState's rules (nothing is stored).
  if (absl::Status valid = core::ValidateOperatorState(*state); !valid.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(valid.message()));
  }
  const absl::Status stored = ctx.operator_state.Set(*state);
  if (absl::IsInvalidArgument(stored)) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(stored.message()));
  }
  if (!stored.ok()) {
    return Unavailable("the operator state store", stored);
  }
  core::JsonWriter w;
  WriteResourceNote(w, *state);
  return HttpReply::Json(w.Take());
}

HttpReply DeleteResourceNote(ServerContext& ctx, const HttpRequest& request) {
  const std::string& id = PathParam(request, "resourceId");
  absl::StatusOr<core::OperatorState> state = ctx.operator_state.Get(id);
  if (absl::IsNotFound(state.status()) || (state.ok() && state->note.empty())) {
    return HttpReply::Json(R"({"deleted":false})");
  }
  if (!state.ok()) {
    return Unavailable("the operator state store", state.status());
  }
  state->note.clear();
  state->set_at = ctx.clock.Now();
  state->set_by = ActorFor(request).id;
  if (absl::Status stored = ctx.operator_state.Set(*state); !stored.ok()) {
    return Unavailable("the operator state store", stored);
  }
  return HttpReply::Json(R"({"deleted":true})");
}

}  // namespace

absl::Status BindNoteRoutes(adapters::http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(
      router.Handle("list_notes", [&ctx](const HttpRequest&) { return ListNotes(ctx); }));
  PULSE_RETURN_IF_ERROR(router.Handle("set_resource_note", [&ctx](const HttpRequest& request) {
    return SetResourceNote(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("delete_resource_note", [&ctx](const HttpRequest& request) {
    return DeleteResourceNote(ctx, request);
  }));
  return absl::OkStatus();
}

}  // namespace pulse::server

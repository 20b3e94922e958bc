// The Assistant: chat, resume after an approval, answers to a question, abort, the session
// routes and the model list. A run streams `data: {"type":...,"data":...}` frames from a
// worker of the bounded run pool (ChatRuns); the authority it runs with is built from the caller's
// token scopes and the server's configured control level, which a chat body may only lower. Without
// a configured provider the run routes answer 503 assistant_not_configured and everything else
// keeps working.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/agent/agent_query.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/loop/loop_assembly.h"
#include "pulse/core/model/session_record.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/tools/tool_names.h"
#include "server_context.h"
#include "session_json.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;
using core::AgentErrorCode;
using http::HttpReply;
using http::HttpRequest;

constexpr std::size_t kDefaultSessionListLimit = 100;

// A run body: what the loop is asked to do for one ChatRun, streaming to its sink.
using RunBody = std::function<absl::StatusOr<core::RunOutcome>(ChatRun&, core::EventSink&)>;

HttpReply NotConfigured() {
  return HttpReply::Error(AgentErrorCode::kAssistantNotConfigured,
                          "the Assistant is not configured: start pulse-server with --provider "
                          "(and --model or --provider-base-url where the provider needs them)");
}

HttpReply SessionNotFound(std::string_view id) {
  core::AgentError error =
      core::MakeAgentError(AgentErrorCode::kSessionNotFound, "No session has this id");
  error.details["session_id"] = std::string(id);
  return HttpReply::Error(error);
}

// Who may do what with a session. A chat session belongs to the token that created it: its
// owner reads and runs it (continue, resume, answer, abort, delete); an admin (a `*` token)
// may read, abort and delete it but not run it; to anyone else it does not exist
// (session_not_found, never a 403 that would reveal it). A Patrol session is a system session:
// any ai:chat token may read it, an admin may delete it, and nobody runs it
// (session_not_resumable). docs/security.md "Consent and session ownership".
enum class SessionUse { kRead, kRun, kManage };  // manage: abort, delete

bool IsAdmin(const HttpRequest& request) { return request.principal.scopes.HasWildcard(); }

core::SessionOwner OwnerOf(const HttpRequest& request) {
  return core::SessionOwner{request.principal.token_id, request.principal.token_name};
}

bool OwnedByCaller(const core::SessionRecord& session, const HttpRequest& request) {
  return session.owner.owned() && session.owner.token_id == request.principal.token_id;
}

// The reply refusing `use` of `session` to the caller, or nullopt when it is allowed.
std::optional<HttpReply> RefuseUse(const core::SessionRecord& session, const HttpRequest& request,
                                   SessionUse use) {
  if (session.kind == core::SessionKind::kPatrol) {
    if (use == SessionUse::kRead || (use == SessionUse::kManage && IsAdmin(request))) {
      return std::nullopt;
    }
    if (use == SessionUse::kRun) {
      return HttpReply::Error(AgentErrorCode::kSessionNotResumable,
                              "a Patrol session is a system session: it cannot be continued, "
                              "resumed or answered");
    }
    return SessionNotFound(session.id);
  }
  if (OwnedByCaller(session, request) || (use != SessionUse::kRun && IsAdmin(request))) {
    return std::nullopt;
  }
  return SessionNotFound(session.id);
}

// Reads session `id` for `use` by the caller: the record, or in `refusal` the reply to send
// instead (session_not_found when it does not exist or is not the caller's to see).
struct SessionLookup {
  std::optional<HttpReply> refusal;
  std::optional<core::SessionRecord> record;  // unset with no refusal: `allow_missing` and absent
};

SessionLookup LookUp(ServerContext& ctx, const HttpRequest& request, const std::string& id,
                     SessionUse use, bool allow_missing = false) {
  absl::StatusOr<core::SessionRecord> session = ctx.sessions.Get(id);
  if (session.status().code() == absl::StatusCode::kNotFound && allow_missing) {
    return {};
  }
  if (session.status().code() == absl::StatusCode::kNotFound ||
      session.status().code() == absl::StatusCode::kInvalidArgument) {
    return {SessionNotFound(id), std::nullopt};
  }
  if (!session.ok()) {
    return {Unavailable("the session store", session.status()), std::nullopt};
  }
  if (std::optional<HttpReply> refused = RefuseUse(*session, request, use)) {
    return {std::move(refused), std::nullopt};
  }
  return {std::nullopt, *std::move(session)};
}

// The authority of a run: the caller's scopes under the configured maximum level, or under the
// level the session's last chat ran at when continuing one (`continued_session`), which is never
// higher.
core::PolicyInputs InputsFor(const ServerContext& ctx, const HttpRequest& request,
                             std::string_view continued_session = {}) {
  core::PolicyInputs inputs;
  inputs.scopes = request.principal.scopes;
  inputs.configured_max = ctx.config.control_level;
  if (!continued_session.empty()) {
    if (std::optional<core::ControlLevel> chat = ctx.levels.Get(continued_session)) {
      inputs.configured_max = core::Lower(ctx.config.control_level, *chat);
    }
  }
  inputs.profile = core::FlavourProfile(core::LoopFlavour::kChat);
  return inputs;
}

// The request body as a JSON object ({} when empty); it passed the route's schema.
rapidjson::Document BodyObject(const HttpRequest& request) {
  absl::StatusOr<rapidjson::Document> body = core::ParseJson(request.body);
  if (body.ok() && body->IsObject()) {
    return *std::move(body);
  }
  rapidjson::Document empty;
  empty.SetObject();
  return empty;
}

http::SseOptions ChatStreamOptions() {
  http::SseOptions options;
  options.heartbeat = absl::Seconds(5);
  options.heartbeat_comment = "heartbeat";
  options.max_queued_frames = 1024;
  options.overflow = http::SseOverflow::kCancel;  // a transcript with holes would mislead
  return options;
}

// Starts `body` as a run streaming to a new chat stream; the stream is the reply. `baseline`:
// the tokens a resumed run's counters already hold.
HttpReply StartRun(ServerContext& ctx, std::string session_id, RunBody body,
                   TokenBaseline baseline = {}) {
  std::shared_ptr<http::SseStream> stream = http::SseStream::Create(ChatStreamOptions());
  const absl::Status started = ctx.runs.Start(
      stream, std::move(session_id),
      [&ctx, body = std::move(body), baseline](ChatRun& run) {
        ChatEventSink sink(run, ctx.metrics, baseline);
        absl::StatusOr<core::RunOutcome> outcome = body(run, sink);
        if (!outcome.ok() && (outcome.status().code() == absl::StatusCode::kUnavailable ||
                              outcome.status().code() == absl::StatusCode::kInternal)) {
          LogLine(
              absl::StrCat("an Assistant run could not proceed: ", outcome.status().ToString()));
        }
        if (!sink.saw_done()) {
          sink.EmitEngineFailure("engine_error", "the run ended without a result");
        }
      },
      [&ctx, baseline](ChatRun& run) {
        ChatEventSink sink(run, ctx.metrics, baseline);
        sink.EmitCancelledBeforeStart();
      });
  if (started.code() == absl::StatusCode::kResourceExhausted) {
    // The run queue is full (docs/server.md "Assistant runs"): like a full stream budget.
    ctx.metrics.RunRefused();
    core::AgentError error =
        core::MakeAgentError(AgentErrorCode::kServiceUnavailable, std::string(started.message()));
    error.details["budget"] = "run_queue";
    error.details["limit"] = absl::StrCat(ctx.runs.options().queue);
    error.details["workers"] = absl::StrCat(ctx.runs.options().workers);
    HttpReply reply = HttpReply::Error(error);
    reply.headers.emplace_back("Retry-After", "1");
    return reply;
  }
  if (!started.ok()) {
    return HttpReply::Error(AgentErrorCode::kServiceUnavailable,
                            absl::StrCat("cannot start a run now: ", started.message()));
  }
  return HttpReply::EventStream(std::move(stream));
}

// Starts a new turn of the loop (a chat message or an answer) on `session_id`, streamed; the
// control level the run settled on is remembered for the session's later resumes.
// The run holds `engine` to its end: a settings change meanwhile reaches the next run only.
HttpReply StartLoopRun(ServerContext& ctx, std::shared_ptr<AiEngine> engine, std::string session_id,
                       core::RunRequest run) {
  SessionLevels& levels = ctx.levels;
  return StartRun(
      ctx, std::move(session_id),
      [engine = std::move(engine), &levels, run](ChatRun& chat, core::EventSink& sink) mutable {
        run.cancelled = chat.cancel_flag();
        absl::StatusOr<core::RunOutcome> outcome = engine->chat->loop().Run(run, sink);
        if (outcome.ok()) {  // a refused run (session busy) set nothing
          levels.Remember(chat.session_id(), run.policy.EffectiveLevel());
        }
        return outcome;
      });
}

HttpReply Chat(ServerContext& ctx, const HttpRequest& request) {
  std::shared_ptr<AiEngine> engine = ctx.ai.Current();
  if (engine == nullptr) {
    return NotConfigured();
  }
  absl::StatusOr<rapidjson::Document> body = core::ParseJson(request.body);
  if (!body.ok() || !body->IsObject()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, "the body must be a JSON object");
  }
  core::RunRequest run{std::string(core::GetString(*body, "session_id").value_or("")),
                       std::string(core::GetString(*body, "message").value_or("")),
                       core::InvocationPolicy::FromRequest(InputsFor(ctx, request), *body), nullptr,
                       OwnerOf(request)};
  const std::string session_id = run.session_id;
  if (!session_id.empty() && core::ValidateSessionId(session_id).ok()) {
    // Continuing a session is running it: only its owner may (a new id starts a new session).
    SessionLookup found =
        LookUp(ctx, request, session_id, SessionUse::kRun, /*allow_missing=*/true);
    if (found.refusal.has_value()) {
      return *std::move(found.refusal);
    }
  }
  return StartLoopRun(ctx, std::move(engine), session_id, std::move(run));
}

HttpReply Resume(ServerContext& ctx, const HttpRequest& request) {
  std::shared_ptr<AiEngine> engine = ctx.ai.Current();
  if (engine == nullptr) {
    return NotConfigured();
  }
  const std::string& id = PathParam(request, "sessionId");
  SessionLookup found = LookUp(ctx, request, id, SessionUse::kRun);
  if (found.refusal.has_value()) {
    return *std::move(found.refusal);
  }
  const std::optional<core::SessionRecord>& session = found.record;
  core::ResumeRequest resume{
      id, core::InvocationPolicy::FromRequest(InputsFor(ctx, request, id), BodyObject(request)),
      ActorFor(request), nullptr, OwnerOf(request)};
  TokenBaseline baseline;
  if (session->suspended.has_value()) {
    baseline.input_tokens = session->suspended->counters.input_tokens;
    baseline.output_tokens = session->suspended->counters.output_tokens;
  }
  return StartRun(
      ctx, id,
      [engine = std::move(engine), resume](ChatRun& chat, core::EventSink& sink) mutable {
        resume.cancelled = chat.cancel_flag();
        return engine->chat->loop().Resume(resume, sink);
      },
      baseline);
}

// The caller's session waiting for an answer to `question_id`: one of its own chat sessions
// awaiting input whose last pulse_question result carries that id. NotFound when none is
// (another token's question is not found either).
absl::StatusOr<std::string> SessionAwaiting(core::SessionStore& sessions,
                                            std::string_view question_id,
                                            const std::string& owner_token_id) {
  core::SessionListQuery query;
  query.limit = core::kMaxSessionListLimit;
  query.kind = core::SessionKind::kChat;
  query.owner_token_id = owner_token_id;
  PULSE_ASSIGN_OR_RETURN(std::vector<core::SessionSummary> listed, sessions.List(query));
  const std::string needle = absl::StrCat(R"("question_id":")", std::string(question_id), R"(")");
  for (const core::SessionSummary& summary : listed) {
    if (summary.status != core::SessionStatus::kAwaitingInput) {
      continue;
    }
    absl::StatusOr<core::SessionRecord> record = sessions.Get(summary.id);
    if (!record.ok() || record->owner.token_id != owner_token_id) {
      continue;  // deleted meanwhile
    }
    for (auto it = record->transcript.rbegin(); it != record->transcript.rend(); ++it) {
      if (it->role == core::MessageRole::kTool && it->tool_name == core::kToolPulseQuestion) {
        if (it->content.find(needle) != std::string::npos) {
          return record->id;
        }
        break;  // only the latest question is open
      }
    }
  }
  return absl::NotFoundError("no session is waiting for this question");
}

HttpReply Answer(ServerContext& ctx, const HttpRequest& request) {
  std::shared_ptr<AiEngine> engine = ctx.ai.Current();
  if (engine == nullptr) {
    return NotConfigured();
  }
  const std::string& question_id = PathParam(request, "questionId");
  absl::StatusOr<rapidjson::Document> body = core::ParseJson(request.body);
  const rapidjson::Value* answers =
      body.ok() && body->IsObject() ? core::GetMember(*body, "answers") : nullptr;
  if (answers == nullptr || !answers->IsArray()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, "answers must be an array");
  }
  std::vector<std::string> lines;
  for (const rapidjson::Value& answer : answers->GetArray()) {
    const std::string_view id = core::GetString(answer, "id").value_or("");
    const std::string_view value = core::GetString(answer, "value").value_or("");
    lines.push_back(answers->Size() == 1 ? std::string(value)
                                         : absl::StrCat(std::string(id), ": ", std::string(value)));
  }
  absl::StatusOr<std::string> session =
      SessionAwaiting(ctx.sessions, question_id, request.principal.token_id);
  if (session.status().code() == absl::StatusCode::kNotFound) {
    core::AgentError error = core::MakeAgentError(
        AgentErrorCode::kQuestionNotFound, "No session is waiting for an answer to this question");
    error.details["question_id"] = question_id;
    return HttpReply::Error(error);
  }
  if (!session.ok()) {
    return Unavailable("the session store", session.status());
  }
  core::RunRequest run{
      *session, absl::StrJoin(lines, "\n"),
      core::InvocationPolicy::FromRequest(InputsFor(ctx, request, *session), *body), nullptr,
      OwnerOf(request)};
  return StartLoopRun(ctx, std::move(engine), *session, std::move(run));
}

HttpReply Abort(ServerContext& ctx, const HttpRequest& request) {
  const std::string& id = PathParam(request, "sessionId");
  // Checked first: a run is stopped only for its owner (or an admin).
  SessionLookup found = LookUp(ctx, request, id, SessionUse::kManage);
  if (found.refusal.has_value()) {
    return *std::move(found.refusal);
  }
  const bool aborted = ctx.runs.Abort(id);
  core::JsonWriter w;
  w.StartObject();
  w.Member("session_id", id);
  w.Member("aborted", aborted);
  w.EndObject();
  return HttpReply::Json(w.Take());
}

HttpReply ListSessions(ServerContext& ctx, const HttpRequest& request) {
  std::size_t limit = kDefaultSessionListLimit;
  if (std::optional<std::string_view> text = request.Query("limit")) {
    std::size_t parsed = 0;
    bool ok = !text->empty() && text->size() <= 4;
    for (char c : *text) {
      ok = ok && c >= '0' && c <= '9';
      parsed = parsed * 10 + static_cast<std::size_t>(c - '0');
    }
    if (!ok || parsed == 0 || parsed > core::kMaxSessionListLimit) {
      return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                              "limit must be an integer between 1 and 1000");
    }
    limit = parsed;
  }
  // ?kind=chat (the default): the caller's own chat sessions; ?kind=patrol: Patrol's system
  // sessions.
  core::SessionListQuery query;
  query.limit = limit;
  query.kind = core::SessionKind::kChat;
  if (std::optional<std::string_view> kind = request.Query("kind")) {
    query.kind = core::ParseSessionKind(*kind);
    if (!query.kind.has_value()) {
      return HttpReply::Error(AgentErrorCode::kInvalidRequest, "kind must be chat or patrol");
    }
  }
  if (query.kind == core::SessionKind::kChat) {
    query.owner_token_id = request.principal.token_id;
  }
  // ?cursor=: the X-Next-Cursor of the previous page (keyset: an index range from there on).
  if (std::optional<std::string_view> cursor = request.Query("cursor")) {
    absl::StatusOr<core::SessionPagePosition> after = core::DecodeSessionCursor(*cursor);
    if (!after.ok()) {
      std::optional<core::AgentError> error = core::AgentQueryError(after.status());
      return HttpReply::Error(error.value_or(core::MakeAgentError(
          AgentErrorCode::kInvalidRequest, std::string(after.status().message()))));
    }
    query.after = *std::move(after);
  }
  // One more than shown says whether a next page exists; at the store's maximum a one-row read
  // after the page says it.
  query.limit = std::min(limit + 1, core::kMaxSessionListLimit);
  absl::StatusOr<std::vector<core::SessionSummary>> listed = ctx.sessions.List(query);
  if (!listed.ok()) {
    return Unavailable("the session store", listed.status());
  }
  bool more = listed->size() > limit;
  if (more) {
    listed->resize(limit);
  } else if (listed->size() == limit && limit == core::kMaxSessionListLimit) {
    core::SessionListQuery probe = query;
    probe.limit = 1;
    probe.after = core::SessionPagePosition{listed->back().updated_at, listed->back().id};
    absl::StatusOr<std::vector<core::SessionSummary>> next = ctx.sessions.List(probe);
    if (!next.ok()) {
      return Unavailable("the session store", next.status());
    }
    more = !next->empty();
  }
  HttpReply reply = HttpReply::Json(SessionListJson(*listed));
  if (more) {
    reply.headers.emplace_back(
        std::string(core::agent_wire::kNextCursorHeader),
        core::EncodeSessionCursor({listed->back().updated_at, listed->back().id}));
  }
  return reply;
}

// Reads one session for the GET routes and renders it with `render`.
HttpReply WithSession(ServerContext& ctx, const HttpRequest& request,
                      std::string (*render)(const core::SessionRecord&)) {
  const std::string& id = PathParam(request, "sessionId");
  SessionLookup found = LookUp(ctx, request, id, SessionUse::kRead);
  if (found.refusal.has_value()) {
    return *std::move(found.refusal);
  }
  return HttpReply::Json(render(*found.record));
}

HttpReply DeleteSession(ServerContext& ctx, const HttpRequest& request) {
  const std::string& id = PathParam(request, "sessionId");
  SessionLookup found = LookUp(ctx, request, id, SessionUse::kManage);
  if (found.refusal.has_value()) {
    return *std::move(found.refusal);
  }
  const std::optional<core::SessionRecord>& session = found.record;
  if (ctx.runs.IsRunning(id) || session->status == core::SessionStatus::kRunning) {
    return HttpReply::Error(AgentErrorCode::kSessionBusy,
                            "a run holds the session; abort it first");
  }
  const absl::Status deleted = ctx.sessions.Delete(id);
  if (deleted.code() == absl::StatusCode::kNotFound) {
    return SessionNotFound(id);
  }
  if (!deleted.ok()) {
    return Unavailable("the session store", deleted);
  }
  ctx.levels.Forget(id);
  return HttpReply::Json(R"({"success":true})");
}

HttpReply ListModels(ServerContext& ctx) {
  const std::shared_ptr<AiEngine> engine = ctx.ai.Current();
  if (engine == nullptr) {
    return NotConfigured();
  }
  const adapters::providers::ProviderConfig& provider = engine->config;
  absl::StatusOr<std::vector<adapters::providers::ModelInfo>> models =
      adapters::providers::ListModels(provider);
  if (!models.ok()) {
    // Provider messages name neither the key nor the endpoint (provider_factory.h).
    return HttpReply::Error(
        AgentErrorCode::kProviderUnavailable,
        absl::StrCat("the model list could not be read: ", std::string(models.status().message())));
  }
  // The same resolution the server started with (it succeeded then; it is pure).
  absl::StatusOr<adapters::providers::ResolvedProvider> resolved =
      adapters::providers::ResolveListing(provider);
  if (!resolved.ok()) {
    return Unavailable("the provider configuration", resolved.status());
  }
  core::JsonWriter w;
  w.StartObject();
  w.Member("provider", provider.provider);
  w.Member("model", provider.model);
  // Whether this endpoint sees unredacted context, and why (endpoint_locality.h).
  w.Member("destination",
           std::string(adapters::providers::ToString(resolved->destination.locality)));
  w.Member("destination_reason", resolved->destination.reason);
  w.Key("models");
  w.StartArray();
  for (const adapters::providers::ModelInfo& model : *models) {
    w.StartObject();
    w.Member("id", model.id);
    w.MemberIfNotEmpty("display_name", model.display_name);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return HttpReply::Json(w.Take());
}

}  // namespace

absl::Status BindAssistantRoutes(http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(
      router.Handle("chat", [&ctx](const HttpRequest& request) { return Chat(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "resume_session", [&ctx](const HttpRequest& request) { return Resume(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "answer_question", [&ctx](const HttpRequest& request) { return Answer(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "abort_session", [&ctx](const HttpRequest& request) { return Abort(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "list_sessions", [&ctx](const HttpRequest& request) { return ListSessions(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle("get_session", [&ctx](const HttpRequest& request) {
    return WithSession(ctx, request, SessionDetailJson);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("get_session_messages", [&ctx](const HttpRequest& request) {
    return WithSession(ctx, request, SessionMessagesJson);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("delete_session", [&ctx](const HttpRequest& request) {
    return DeleteSession(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(
      router.Handle("list_models", [&ctx](const HttpRequest&) { return ListModels(ctx); }));
  return absl::OkStatus();
}

}  // namespace pulse::server

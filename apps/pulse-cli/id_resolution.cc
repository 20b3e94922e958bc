#include "id_resolution.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "failure.h"
#include "json_output.h"
#include "routes.h"
#include "text_safety.h"

namespace pulse::cli {
namespace {

constexpr std::size_t kMaxCandidates = 10;

struct KindInfo {
  const char* noun;
  const char* not_found_code;
  const char* list_command;
};

KindInfo Info(IdKind kind) {
  switch (kind) {
    case IdKind::kFinding:
      return {"finding", "finding_not_found", "pulse-cli findings --all"};
    case IdKind::kAction:
      return {"action", "action_not_found", "pulse-cli actions list [--settled]"};
    case IdKind::kSession:
      return {"session", "session_not_found", "pulse-cli sessions list"};
  }
  return {"id", "not_found", "pulse-cli help"};
}

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isxdigit(c); });
}

// Ids whose shape is already complete need no listing: act_ and 32 hex digits, 16 hex digits
// for a finding. Session ids are chosen freely, so they are always looked up.
bool LooksComplete(IdKind kind, std::string_view id) {
  switch (kind) {
    case IdKind::kAction:
      return id.size() == 36 && id.substr(0, 4) == "act_" && IsHex(id.substr(4));
    case IdKind::kFinding:
      return id.size() == 16 && IsHex(id);
    case IdKind::kSession:
      return false;
  }
  return false;
}

// The ids of one list reply: an array, or the array under `key`, of objects with "id".
void CollectIds(const rapidjson::Value& reply, std::string_view key,
                std::vector<std::string>& out) {
  const rapidjson::Value* items = reply.IsArray() ? &reply : Member(reply, key);
  if (items == nullptr || !items->IsArray()) {
    return;
  }
  for (const rapidjson::Value& item : items->GetArray()) {
    const std::string id = Str(item, "id");
    if (!id.empty()) {
      out.push_back(id);
    }
  }
}

}  // namespace

IdMatch MatchId(std::string_view given, const std::vector<std::string>& ids) {
  IdMatch match;
  if (std::find(ids.begin(), ids.end(), given) != ids.end()) {
    match.outcome = IdMatch::Outcome::kExact;
    match.id = std::string(given);
    return match;
  }
  std::vector<std::string> found;
  for (const std::string& id : ids) {
    if (id.size() > given.size() && std::string_view(id).substr(0, given.size()) == given &&
        std::find(found.begin(), found.end(), id) == found.end()) {
      found.push_back(id);
    }
  }
  if (found.empty()) {
    return match;  // kNone
  }
  if (given.size() < kMinIdPrefix) {
    match.outcome = IdMatch::Outcome::kTooShort;
    return match;
  }
  if (found.size() == 1) {
    match.outcome = IdMatch::Outcome::kUnique;
    match.id = found.front();
    return match;
  }
  match.outcome = IdMatch::Outcome::kAmbiguous;
  found.resize(std::min(found.size(), kMaxCandidates));
  match.candidates = std::move(found);
  return match;
}

bool ListIds(CommandContext& ctx, IdKind kind, std::vector<std::string>& ids) {
  std::vector<absl::StatusOr<ApiCall>> calls;
  std::string key;
  switch (kind) {
    case IdKind::kFinding: {
      rapidjson::Document query(rapidjson::kObjectType);
      SetStringArg(query, "include_resolved", "1");
      SetStringArg(query, "include_hidden", "1");
      SetIntArg(query, "limit", 500);
      calls.push_back(CapabilityCall("list_findings", query));
      key = "items";
      break;
    }
    case IdKind::kAction:
      for (const char* view : {"pending", "settled"}) {
        calls.push_back(RouteCall("list_actions", {}, {{"view", view}, {"limit", "500"}}));
      }
      key = "actions";
      break;
    case IdKind::kSession:
      calls.push_back(RouteCall("list_sessions", {}, {}));
      key = "sessions";
      break;
  }
  for (const absl::StatusOr<ApiCall>& call : calls) {
    Failure failure;
    std::optional<rapidjson::Document> reply =
        call.ok() ? ctx.FetchJson(*call, failure) : std::nullopt;
    if (!reply.has_value()) {
      return false;
    }
    CollectIds(*reply, key, ids);
  }
  return true;
}

std::optional<int> ResolveId(CommandContext& ctx, IdKind kind, std::string& id) {
  if (LooksComplete(kind, id)) {
    return std::nullopt;
  }
  std::vector<std::string> ids;
  if (!ListIds(ctx, kind, ids)) {
    // The list is a convenience (a token without its scope, an older server): the command
    // then runs with the id as typed, and the server answers for it.
    return std::nullopt;
  }
  const KindInfo info = Info(kind);
  const IdMatch match = MatchId(id, ids);
  switch (match.outcome) {
    case IdMatch::Outcome::kExact:
    case IdMatch::Outcome::kUnique:
      id = match.id;
      return std::nullopt;
    case IdMatch::Outcome::kNone: {
      // Not in the lists (which are bounded): findings and actions go to the server as typed,
      // which answers for them. A session is looked up, since the chat route would start a new
      // one under a mistyped id.
      if (kind != IdKind::kSession) {
        return std::nullopt;
      }
      const absl::StatusOr<ApiCall> exact = RouteCall("get_session", {{"sessionId", id}});
      Failure failure;
      if (exact.ok() && ctx.FetchJson(*exact, failure).has_value()) {
        return std::nullopt;
      }
      return ctx.Fail(LocalFailure(ExitCode::kRefused, info.not_found_code,
                                   std::string("no ") + info.noun + " " + SafeCell(id, 128) +
                                       " (list them with " + info.list_command + ")"));
    }
    case IdMatch::Outcome::kTooShort:
      return ctx.Fail(LocalFailure(ExitCode::kUsage, kCodeUsage,
                                   std::string(info.noun) + " id prefix " + SafeCell(id, 128) +
                                       " is too short: give at least 4 characters"));
    case IdMatch::Outcome::kAmbiguous: {
      std::vector<std::string> shown;
      for (const std::string& c : match.candidates) {
        shown.push_back(SafeCell(c, 128));
      }
      return ctx.Fail(LocalFailure(ExitCode::kUsage, kCodeUsage,
                                   std::string(info.noun) + " id prefix " + SafeCell(id, 128) +
                                       " is ambiguous: " + absl::StrJoin(shown, ", ")));
    }
  }
  return std::nullopt;
}

}  // namespace pulse::cli

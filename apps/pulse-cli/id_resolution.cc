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

bool ListIds(CommandContext& ctx, IdKind kind, std::vector<std::string>& ids, int max_pages,
             bool* complete) {
  // One list's page after `cursor` ("" for the first).
  const auto page_call = [kind](int list, const std::string& cursor) -> absl::StatusOr<ApiCall> {
    switch (kind) {
      case IdKind::kFinding: {
        rapidjson::Document query(rapidjson::kObjectType);
        SetStringArg(query, "include_resolved", "1");
        SetStringArg(query, "include_hidden", "1");
        SetIntArg(query, "limit", 500);
        if (!cursor.empty()) {
          SetStringArg(query, "cursor", cursor);
        }
        return CapabilityCall("list_findings", query);
      }
      case IdKind::kAction: {
        std::vector<std::pair<std::string, std::string>> query = {
            {"view", list == 0 ? "pending" : "settled"}, {"limit", "500"}};
        if (!cursor.empty()) {
          query.emplace_back("cursor", cursor);
        }
        return RouteCall("list_actions", {}, query);
      }
      case IdKind::kSession: {
        std::vector<std::pair<std::string, std::string>> query = {{"limit", "500"}};
        if (!cursor.empty()) {
          query.emplace_back("cursor", cursor);
        }
        return RouteCall("list_sessions", {}, query);
      }
    }
    return absl::InternalError("unknown id kind");
  };
  const int lists = kind == IdKind::kAction ? 2 : 1;
  const char* key = kind == IdKind::kFinding  ? "items"
                    : kind == IdKind::kAction ? "actions"
                                              : "sessions";
  bool whole = true;
  for (int list = 0; list < lists; ++list) {
    std::string cursor;
    for (int page = 0;; ++page) {
      if (page == max_pages) {
        whole = false;  // more pages follow than this caller reads
        break;
      }
      const absl::StatusOr<ApiCall> call = page_call(list, cursor);
      Failure failure;
      std::string next;
      std::optional<rapidjson::Document> reply =
          call.ok() ? ctx.FetchJson(*call, failure, &next) : std::nullopt;
      if (!reply.has_value()) {
        return false;
      }
      CollectIds(*reply, key, ids);
      if (next.empty()) {
        break;
      }
      cursor = std::move(next);
    }
  }
  if (complete != nullptr) {
    *complete = whole;
  }
  return true;
}

std::optional<int> ResolveId(CommandContext& ctx, IdKind kind, std::string& id) {
  if (LooksComplete(kind, id)) {
    return std::nullopt;
  }
  std::vector<std::string> ids;
  bool complete = true;
  if (!ListIds(ctx, kind, ids, kMaxIdPages, &complete)) {
    // The list is a convenience (a token without its scope, an older server): the command
    // then runs with the id as typed, and the server answers for it.
    return std::nullopt;
  }
  const KindInfo info = Info(kind);
  const IdMatch match = MatchId(id, ids);
  switch (match.outcome) {
    case IdMatch::Outcome::kExact:
      id = match.id;
      return std::nullopt;
    case IdMatch::Outcome::kUnique:
      if (!complete) {
        // One listed id starts so, but the lists were cut: an id beyond them may too, and
        // acting on the wrong one is worse than asking for the whole id.
        return ctx.Fail(
            LocalFailure(ExitCode::kUsage, kCodeUsage,
                         std::string(info.noun) + " id prefix " + SafeCell(id, 128) + " matches " +
                             SafeCell(match.id, 128) + " among the first " +
                             std::to_string(ids.size()) + " " + info.noun +
                             "s listed, but more exist and another may match too: give the "
                             "whole id"));
      }
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

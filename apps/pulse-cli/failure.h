// How pulse-cli ends: its exit codes, the failures that lead to them, and how a failure is
// reported. The rule (also in `pulse-cli --help` and docs/cli.md):
//   0 ok; 1 the operation was refused or failed (the server's stable error code is printed);
//   2 usage; 3 the server could not be reached, or the connection broke mid-reply;
//   4 authentication: HTTP 401 (no token, or one the server does not accept) or 403
//     missing_scope (the token lacks the route's scope) — both are fixed with another token;
//     every other refusal, the governance 403s included (action_approval_forbidden,
//     action_separation_required, ...), is 1; 130 interrupted (Ctrl-C).
// A failure is printed on stderr as "pulse-cli: <code>: <message>"; with --json the error
// envelope {"error":"<code>","message":...} is also the one document on stdout. Codes the CLI
// itself assigns are listed below; every other code is the server's. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "console.h"

namespace pulse::cli {

enum class ExitCode : int {
  kOk = 0,
  kRefused = 1,
  kUsage = 2,
  kUnreachable = 3,
  kAuth = 4,
  kInterrupted = 130,
};

// Client-side codes.
inline constexpr std::string_view kCodeServerUnreachable = "server_unreachable";  // exit 3
inline constexpr std::string_view kCodeStreamIncomplete = "stream_incomplete";    // exit 3
inline constexpr std::string_view kCodeInvalidResponse = "invalid_response";      // exit 1
inline constexpr std::string_view kCodeResponseTooLarge = "response_too_large";   // exit 1
inline constexpr std::string_view kCodeNotConfirmed = "not_confirmed";            // exit 1
inline constexpr std::string_view kCodeInterrupted = "interrupted";               // exit 130
inline constexpr std::string_view kCodeUsage = "usage";                           // exit 2
inline constexpr std::string_view kCodePatrolRunFailed = "patrol_run_failed";     // exit 1
inline constexpr std::string_view kCodeNotificationNotDelivered =
    "notification_not_delivered";                                                // exit 1
inline constexpr std::string_view kCodePatrolRunPending = "patrol_run_pending";  // exit 1
// Server codes the exit-code rule looks at.
inline constexpr std::string_view kCodeUnauthorized = "unauthorized";
inline constexpr std::string_view kCodeMissingScope = "missing_scope";

struct Failure {
  ExitCode exit = ExitCode::kRefused;
  std::string code;
  std::string message;
  int http_status = 0;  // 0 when no reply arrived
  // The server's envelope (as output JSON) when it sent one; otherwise the CLI builds one.
  std::string envelope_json;
  std::string hint;  // one extra line for a human ("" for none)
};

// A request that got no usable reply: the client's status (Unavailable, DeadlineExceeded,
// ResourceExhausted, Cancelled) mapped to 3, 1 or 130.
Failure TransportFailure(const absl::Status& status, std::string_view server);

// A reply the command cannot use as a success: a non-2xx status (the agent envelope when the
// body is one), mapped by the exit-code rule. `token_set` adds a hint to a 401.
Failure ReplyFailure(int http_status, std::string_view body, bool token_set);

// A reply that arrived but does not have the shape the command needs (exit 1).
Failure InvalidResponse(std::string message);

// A failure of the CLI's own making (not_confirmed, usage, ...).
Failure LocalFailure(ExitCode exit, std::string_view code, std::string message);

// Prints `failure` (stderr; also stdout in --json mode) and returns its exit code.
int Report(const Console& console, const Failure& failure);

// The failure's envelope as output JSON.
std::string EnvelopeJson(const Failure& failure);

}  // namespace pulse::cli

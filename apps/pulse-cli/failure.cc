#include "failure.h"

#include <utility>

#include "json_output.h"
#include "pulse/core/json/json_writer.h"
#include "text_safety.h"

namespace pulse::cli {

Failure LocalFailure(ExitCode exit, std::string_view code, std::string message) {
  Failure f;
  f.exit = exit;
  f.code = std::string(code);
  f.message = std::move(message);
  return f;
}

Failure TransportFailure(const absl::Status& status, std::string_view server) {
  const std::string detail(status.message());
  switch (status.code()) {
    case absl::StatusCode::kCancelled:
      return LocalFailure(ExitCode::kInterrupted, kCodeInterrupted, "interrupted");
    case absl::StatusCode::kResourceExhausted:
      return LocalFailure(ExitCode::kRefused, kCodeResponseTooLarge,
                          "the server's reply was too large: " + detail);
    default: {
      Failure f =
          LocalFailure(ExitCode::kUnreachable, kCodeServerUnreachable,
                       "cannot reach pulse-server at " + std::string(server) + ": " + detail);
      f.hint = "is pulse-server running there? (--server URL, default http://127.0.0.1:7655)";
      return f;
    }
  }
}

Failure InvalidResponse(std::string message) {
  return LocalFailure(ExitCode::kRefused, kCodeInvalidResponse, std::move(message));
}

Failure ReplyFailure(int http_status, std::string_view body, bool token_set) {
  Failure f;
  f.http_status = http_status;
  absl::StatusOr<rapidjson::Document> doc = ParseReplyJson(body);
  const bool envelope = doc.ok() && doc->IsObject() && !Str(*doc, "error").empty();
  if (envelope) {
    f.code = Str(*doc, "error");
    f.message = Str(*doc, "message");
    f.envelope_json = OutputJson(*doc);
  } else {
    f.code = kCodeInvalidResponse;
    f.message =
        "the server answered HTTP " + std::to_string(http_status) + " without an error envelope";
  }
  if (http_status == 401 || (http_status == 403 && (!envelope || f.code == kCodeMissingScope))) {
    f.exit = ExitCode::kAuth;
  } else {
    f.exit = ExitCode::kRefused;
  }
  if (http_status == 401 && !token_set) {
    f.hint =
        "set PULSE_API_TOKEN to an API token (pulse-server token create --name NAME "
        "--scopes ...)";
  } else if (f.code == kCodeMissingScope && doc.ok()) {
    const std::string scope = Str(*doc, "requiredScope");
    if (!scope.empty()) {
      f.hint = "this needs a token with the " + scope + " scope";
    }
  }
  return f;
}

std::string EnvelopeJson(const Failure& failure) {
  if (!failure.envelope_json.empty()) {
    return failure.envelope_json;
  }
  core::JsonWriter w;
  w.StartObject();
  w.Member("error", failure.code);
  w.Member("message", failure.message);
  w.EndObject();
  absl::StatusOr<rapidjson::Document> doc = ParseReplyJson(w.Take());
  return doc.ok() ? OutputJson(*doc) : std::string("{}");
}

int Report(const Console& console, const Failure& failure) {
  if (console.json()) {
    console.Out(EnvelopeJson(failure) + "\n");
  }
  std::string line = "pulse-cli: " + console.PaintErr(Style::kRed, SafeCell(failure.code, 80)) +
                     ": " + SafeCell(failure.message, 1000);
  if (failure.http_status != 0) {
    line += " (HTTP " + std::to_string(failure.http_status) + ")";
  }
  console.Err(line + "\n");
  if (!failure.hint.empty()) {
    console.Err(console.PaintErr(Style::kDim, "hint: " + failure.hint) + "\n");
  }
  return static_cast<int>(failure.exit);
}

}  // namespace pulse::cli

#include <utility>

#include "commands.h"
#include "json_output.h"

namespace pulse::cli {

absl::StatusOr<std::unique_ptr<PulseClient>> CommandContext::NewClient(
    absl::Duration timeout) const {
  ClientOptions options = options_;
  options.timeout = timeout;
  return PulseClient::Open(std::move(options));
}

std::optional<rapidjson::Document> CommandContext::FetchJson(const ApiCall& call, Failure& failure,
                                                             std::string* next_cursor) {
  absl::StatusOr<HttpResult> reply = client_.Send(call.method, call.target, call.body);
  if (!reply.ok()) {
    failure = TransportFailure(reply.status(), options_.base_url);
    return std::nullopt;
  }
  if (reply->status < 200 || reply->status > 299) {
    failure = ReplyFailure(reply->status, reply->body, client_.has_token());
    return std::nullopt;
  }
  absl::StatusOr<rapidjson::Document> doc = ParseReplyJson(reply->body);
  if (!doc.ok()) {
    failure = InvalidResponse(call.method + " " + call.target + " answered HTTP " +
                              std::to_string(reply->status) + " with a body that is not JSON");
    return std::nullopt;
  }
  if (next_cursor != nullptr) {
    *next_cursor = reply->next_cursor;
  }
  return *std::move(doc);
}

void SetStringArg(rapidjson::Document& args, std::string_view key, std::string_view value) {
  auto& a = args.GetAllocator();
  args.AddMember(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), a),
                 rapidjson::Value(value.data(), static_cast<rapidjson::SizeType>(value.size()), a),
                 a);
}

void SetIntArg(rapidjson::Document& args, std::string_view key, int value) {
  auto& a = args.GetAllocator();
  args.AddMember(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), a),
                 rapidjson::Value(value), a);
}

void SetBoolArg(rapidjson::Document& args, std::string_view key, bool value) {
  auto& a = args.GetAllocator();
  args.AddMember(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), a),
                 rapidjson::Value(value), a);
}

int CommandContext::PrintJson(const rapidjson::Value& value) const {
  console_.Out(OutputJson(value) + "\n");
  return 0;
}

int CommandContext::BadCall(const absl::Status& status) const {
  return Report(console_,
                LocalFailure(ExitCode::kUsage, kCodeUsage, std::string(status.message())));
}

}  // namespace pulse::cli

// notify test CHANNEL: the server route test_notification_channel (docs/notifications.md),
// which sends one test notification to a configured channel now and answers how the receiver
// took it. Exit 0 when it was delivered; 1 (notification_not_delivered) when the receiver
// refused it or could not be reached, the server's answer still shown.
#include <map>
#include <string>

#include "commands.h"
#include "text_safety.h"

namespace pulse::cli {
namespace {

std::string StringOf(const rapidjson::Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsString() ? std::string(v[key].GetString())
                                                               : std::string();
}

}  // namespace

int CmdNotifyTest(CommandContext& ctx, const NotifyTestArgs& args) {
  const absl::StatusOr<ApiCall> call =
      RouteCall("test_notification_channel", {{"channel", args.channel}}, {}, std::string("{}"));
  if (!call.ok()) {
    return ctx.BadCall(call.status());
  }
  Failure failure;
  std::optional<rapidjson::Document> reply = ctx.FetchJson(*call, failure);
  if (!reply.has_value()) {
    return ctx.Fail(failure);
  }
  const bool delivered = reply->HasMember("delivered") && (*reply)["delivered"].IsBool() &&
                         (*reply)["delivered"].GetBool();
  const int status = reply->HasMember("http_status") && (*reply)["http_status"].IsInt()
                         ? (*reply)["http_status"].GetInt()
                         : 0;
  if (ctx.console().json()) {
    ctx.PrintJson(*reply);
  } else {
    const Console& out = ctx.console();
    const std::string channel = SafeText(args.channel, false);
    if (delivered) {
      out.Out(out.PaintOut(Style::kGreen, "delivered") + " a test notification to " + channel +
              (StringOf(*reply, "kind") == "email" ? " (SMTP " : " (HTTP ") +
              std::to_string(status) + ", idempotency key " +
              SafeText(StringOf(*reply, "idempotency_key"), false) + ")\n");
    } else {
      out.Out(out.PaintOut(Style::kRed, "not delivered") + " to " + channel + ": " +
              SafeText(StringOf(*reply, "error"), false) + "\n");
    }
  }
  if (!delivered) {
    ctx.console().Err("pulse-cli: " + std::string(kCodeNotificationNotDelivered) +
                      ": the channel's receiver did not accept the test notification\n");
    return static_cast<int>(ExitCode::kRefused);
  }
  return 0;
}

}  // namespace pulse::cli

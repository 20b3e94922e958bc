// Notification channels (GET/PUT /api/settings/notifications, POST .../{channel}/test;
// docs/notifications.md). Like the AI settings they need settings:write (the HTTP layer checks
// it) and a human token: a channel decides where findings about the fleet are sent.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "notification_sender.h"
#include "pulse/adapters/http_client/smtp_client.h"
#include "pulse/adapters/http_client/url.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_schema.h"
#include "server_context.h"

namespace pulse::server {
namespace {

using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using adapters::storage::NotificationChannelWrite;
using adapters::storage::StoredNotificationChannel;
using core::AgentErrorCode;

// Dead rows GET lists (the newest).
constexpr std::size_t kListedDeadLetters = 20;

std::optional<HttpReply> RefuseNonHuman(const HttpRequest& request) {
  const core::ActionActor actor = ActorFor(request);
  if (actor.kind == core::ActorKind::kHuman && request.principal.authenticated) {
    return std::nullopt;
  }
  return HttpReply::Error(AgentErrorCode::kHumanTokenRequired,
                          absl::StrCat("only a human token may read or change the notification "
                                       "channels; this caller acts as ",
                                       std::string(core::ToString(actor.kind))));
}

// A member given twice would leave which one counts to the parser: refused.
absl::Status CheckUniqueMembers(const rapidjson::Value& object, absl::string_view what) {
  std::set<std::string_view> seen;
  for (const auto& member : object.GetObject()) {
    if (!seen.insert(core::StringViewOf(member.name)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", core::QuoteForMessage(core::StringViewOf(member.name)),
                       " is given more than once"));
    }
  }
  return absl::OkStatus();
}

// "HH:MM" as minutes after midnight.
absl::StatusOr<int> ParseClock(std::string_view text, absl::string_view what) {
  int hours = 0;
  int minutes = 0;
  if (text.size() != 5 || text[2] != ':' ||
      !absl::SimpleAtoi(core::ToAbsl(text.substr(0, 2)), &hours) ||
      !absl::SimpleAtoi(core::ToAbsl(text.substr(3, 2)), &minutes) || hours < 0 || hours > 23 ||
      minutes < 0 || minutes > 59 || text[0] == '+' || text[3] == '+' || text[0] == '-' ||
      text[3] == '-') {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a time HH:MM (00:00 to 23:59)"));
  }
  return hours * 60 + minutes;
}

std::string Text(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* v = core::GetMember(object, name);
  return v != nullptr && v->IsString() ? std::string(core::StringViewOf(*v)) : std::string();
}

// One channel of the PUT body (the route's schema has checked types, enums and lengths).
absl::StatusOr<NotificationChannelWrite> DecodeChannel(
    const rapidjson::Value& in, const std::vector<StoredNotificationChannel>& stored) {
  NotificationChannelWrite out;
  core::NotificationChannel& c = out.channel;
  c.name = Text(in, "name");
  const std::string where = absl::StrCat("channel ", core::QuoteForMessage(c.name));
  PULSE_RETURN_IF_ERROR(CheckUniqueMembers(in, where));
  if (absl::Status s = core::ValidateChannelName(c.name); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
  }
  const std::optional<core::NotificationChannelKind> kind =
      core::ParseNotificationChannelKind(Text(in, "kind"));
  if (!kind.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": unknown kind"));
  }
  c.kind = *kind;
  const bool email = c.kind == core::NotificationChannelKind::kEmail;
  if (const rapidjson::Value* url = core::GetMember(in, "url"); url != nullptr) {
    out.url = std::string(core::StringViewOf(*url));
    const absl::Status parsed = email ? http_client::ParseSmtpUrl(*out.url, "url").status()
                                      : http_client::ParseUrl(*out.url, "url").status();
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", parsed.message()));
    }
  }
  if (const rapidjson::Value* addressing = core::GetMember(in, "email"); addressing != nullptr) {
    if (!email) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": email addressing is for a channel of kind email"));
    }
    PULSE_RETURN_IF_ERROR(CheckUniqueMembers(*addressing, absl::StrCat(where, " email")));
    core::EmailAddressing a;
    a.from = Text(*addressing, "from");
    for (const rapidjson::Value& to : core::GetMember(*addressing, "to")->GetArray()) {
      a.to.emplace_back(core::StringViewOf(to));
    }
    a.username = Text(*addressing, "username");
    if (absl::Status s = core::ValidateEmailAddressing(a); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
    }
    c.email = std::move(a);
  } else if (email) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": an email channel needs its addressing: email {from, to}"));
  }
  if (const rapidjson::Value* secret = core::GetMember(in, "secret"); secret != nullptr) {
    if (secret->IsNull()) {
      out.secret.emplace(std::nullopt);
    } else {
      out.secret.emplace(std::string(core::StringViewOf(*secret)));
    }
  }
  if (const rapidjson::Value* enabled = core::GetMember(in, "enabled"); enabled != nullptr) {
    c.enabled = enabled->GetBool();
  }
  if (const rapidjson::Value* floor = core::GetMember(in, "min_severity"); floor != nullptr) {
    c.min_severity = core::ParseSeverity(core::StringViewOf(*floor)).value_or(c.min_severity);
  }
  if (const rapidjson::Value* events = core::GetMember(in, "events"); events != nullptr) {
    for (const rapidjson::Value& e : events->GetArray()) {
      const std::optional<core::NotificationEventKind> k =
          core::ParseNotificationEventKind(core::StringViewOf(e));
      if (!k.has_value() || *k == core::NotificationEventKind::kTest) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": unknown event kind"));
      }
      if (std::find(c.events.begin(), c.events.end(), *k) != c.events.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": event ", core::ToAbsl((core::ToString(*k))), " is listed twice"));
      }
      c.events.push_back(*k);
    }
  }
  if (const rapidjson::Value* quiet = core::GetMember(in, "quiet_hours");
      quiet != nullptr && !quiet->IsNull()) {
    PULSE_RETURN_IF_ERROR(CheckUniqueMembers(*quiet, absl::StrCat(where, " quiet_hours")));
    core::QuietHours q;
    PULSE_ASSIGN_OR_RETURN(q.start_minute, ParseClock(Text(*quiet, "start"),
                                                      absl::StrCat(where, " quiet_hours.start")));
    PULSE_ASSIGN_OR_RETURN(
        q.end_minute, ParseClock(Text(*quiet, "end"), absl::StrCat(where, " quiet_hours.end")));
    if (q.start_minute == q.end_minute) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": quiet_hours.start and end must differ"));
    }
    if (core::GetMember(*quiet, "time_zone") != nullptr) {
      q.time_zone = Text(*quiet, "time_zone");
    }
    absl::TimeZone zone;
    if (!absl::LoadTimeZone(q.time_zone, &zone)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": quiet_hours.time_zone ", core::QuoteForMessage(q.time_zone),
                       " is not a known time zone (an IANA name such as Europe/Berlin, or UTC)"));
    }
    c.quiet_hours = std::move(q);
  }
  if (const rapidjson::Value* rate = core::GetMember(in, "rate_per_minute"); rate != nullptr) {
    c.rate_per_minute = rate->GetInt();
  }
  // Gotify refuses a message without an application token: one must be given or kept.
  if (c.kind == core::NotificationChannelKind::kGotify) {
    bool kept = false;
    for (const StoredNotificationChannel& s : stored) {
      kept = kept || (s.channel.name == c.name && s.channel.kind == c.kind && s.secret_set);
    }
    const bool given = out.secret.has_value() && out.secret->has_value();
    if (!given && !(kept && !out.secret.has_value())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": a gotify channel needs its application token as secret"));
    }
  }
  // An email channel's secret is its SMTP password: it goes with a user name, both or neither.
  if (email) {
    bool kept = false;
    for (const StoredNotificationChannel& s : stored) {
      kept = kept || (s.channel.name == c.name && s.channel.kind == c.kind && s.secret_set);
    }
    const bool has_password = out.secret.has_value() ? out.secret->has_value() : kept;
    if (c.email->username.empty() && has_password) {
      return absl::InvalidArgumentError(
          absl::StrCat(where,
                       ": an email channel's secret is its SMTP password; give email.username with "
                       "it, or secret null"));
    }
    if (!c.email->username.empty() && !has_password) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": email.username needs the SMTP password as the channel's secret"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<NotificationChannelWrite>> DecodeSettings(
    const std::string& body, const std::vector<StoredNotificationChannel>& stored) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body);
  if (!doc.ok() || !doc->IsObject()) {
    return absl::InvalidArgumentError("the body must be a JSON object");
  }
  PULSE_RETURN_IF_ERROR(CheckUniqueMembers(*doc, "the body"));
  const rapidjson::Value* channels = core::GetMember(*doc, "channels");
  if (channels == nullptr || !channels->IsArray()) {
    return absl::InvalidArgumentError("channels must be an array");
  }
  std::vector<NotificationChannelWrite> out;
  std::set<std::string> names;
  for (const rapidjson::Value& c : std::as_const(*channels).GetArray()) {
    if (!c.IsObject()) {
      return absl::InvalidArgumentError("each channel must be an object");
    }
    PULSE_ASSIGN_OR_RETURN(NotificationChannelWrite w, DecodeChannel(c, stored));
    if (!names.insert(w.channel.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("channel ", core::QuoteForMessage(w.channel.name), " is named twice"));
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::string ClockText(int minute) { return absl::StrFormat("%02d:%02d", minute / 60, minute % 60); }

void WriteChannel(core::JsonWriter& w, const StoredNotificationChannel& s) {
  const core::NotificationChannel& c = s.channel;
  w.StartObject();
  w.Member("name", c.name);
  w.Member("kind", core::ToString(c.kind));
  w.MemberIfNotEmpty("url", s.url);
  w.Member("url_set", s.url_set);
  w.Member("secret_set", s.secret_set);
  w.Member("enabled", c.enabled);
  w.Member("min_severity", core::ToString(c.min_severity));
  w.Key("events");
  w.StartArray();
  for (const core::NotificationEventKind k :
       c.events.empty() ? core::SubscribableEventKinds() : c.events) {
    w.String(core::ToString(k));
  }
  w.EndArray();
  if (c.quiet_hours.has_value()) {
    w.Key("quiet_hours");
    w.StartObject();
    w.Member("start", ClockText(c.quiet_hours->start_minute));
    w.Member("end", ClockText(c.quiet_hours->end_minute));
    w.Member("time_zone", c.quiet_hours->time_zone);
    w.EndObject();
  }
  w.Member("rate_per_minute", c.rate_per_minute);
  if (c.email.has_value()) {
    w.Key("email");
    w.StartObject();
    w.Member("from", c.email->from);
    w.Key("to");
    w.StartArray();
    for (const std::string& to : c.email->to) {
      w.String(to);
    }
    w.EndArray();
    w.MemberIfNotEmpty("username", c.email->username);
    w.EndObject();
  }
  w.TimeMember("updated_at", s.updated_at);
  w.Member("updated_by", s.updated_by);
  w.EndObject();
}

HttpReply SettingsReply(ServerContext& ctx) {
  absl::StatusOr<std::vector<StoredNotificationChannel>> channels =
      ctx.notification_channels.List();
  if (!channels.ok()) {
    return Unavailable("the notification channels", channels.status());
  }
  absl::StatusOr<core::OutboxCounts> counts = ctx.notifications.Counts();
  if (!counts.ok()) {
    return Unavailable("the notification outbox", counts.status());
  }
  absl::StatusOr<std::vector<core::OutboxEntry>> dead =
      ctx.notifications.List(core::OutboxState::kDead, kListedDeadLetters);
  if (!dead.ok()) {
    return Unavailable("the notification outbox", dead.status());
  }
  core::JsonWriter w;
  w.StartObject();
  w.Key("channels");
  w.StartArray();
  for (const StoredNotificationChannel& c : *channels) {
    WriteChannel(w, c);
  }
  w.EndArray();
  w.Key("outbox");
  w.StartObject();
  w.Member("pending", counts->pending);
  w.Member("delivered", counts->delivered);
  w.Member("dead", counts->dead);
  w.Key("dead_letters");
  w.StartArray();
  for (const core::OutboxEntry& e : *dead) {
    w.StartObject();
    w.Member("channel", e.channel);
    w.Member("event", core::ToString(e.event.kind));
    w.Member("event_key", e.event.key);
    w.Member("attempts", e.attempts);
    w.Member("last_error", e.last_error);
    w.Member("idempotency_key", e.idempotency_key);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return HttpReply::Json(w.Take());
}

HttpReply GetSettings(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *std::move(refused);
  }
  return SettingsReply(ctx);
}

HttpReply UpdateSettings(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *std::move(refused);
  }
  absl::StatusOr<std::vector<StoredNotificationChannel>> stored = ctx.notification_channels.List();
  if (!stored.ok()) {
    return Unavailable("the notification channels", stored.status());
  }
  absl::StatusOr<std::vector<NotificationChannelWrite>> writes =
      DecodeSettings(request.body, *stored);
  if (!writes.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            std::string(writes.status().message()));
  }
  const core::ActionActor actor = ActorFor(request);
  // Audited before anything is stored: a change the audit cannot record is not made.
  core::AuditEntry entry;
  entry.at = ctx.clock.Now();
  entry.category = "settings";
  entry.event = "notification_settings_changed";
  entry.subject_id = "notifications";
  entry.actor_kind = std::string(core::ToString(actor.kind));
  entry.actor_id = actor.id;
  std::vector<std::string> names;
  for (const NotificationChannelWrite& w : *writes) {
    names.push_back(
        absl::StrCat(w.channel.name, " (", core::ToAbsl((core::ToString(w.channel.kind))), ")"));
  }
  entry.message = absl::StrCat("the notification channels were set to: ",
                               names.empty() ? "none" : absl::StrJoin(names, ", "));
  if (absl::Status appended = ctx.audit.Append(entry); !appended.ok()) {
    return Unavailable("the audit log", appended);
  }
  absl::Status replaced = ctx.notification_channels.Replace(
      *writes, entry.at, actor.name.empty() ? actor.id : actor.name);
  if (absl::IsInvalidArgument(replaced)) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(replaced.message()));
  }
  if (!replaced.ok()) {
    return Unavailable("the notification channels", replaced);
  }
  LogLine(
      absl::StrCat("the notification channels were changed by ", actor.id, ": ", entry.message));
  return SettingsReply(ctx);
}

HttpReply TestChannel(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *std::move(refused);
  }
  const std::string& name = PathParam(request, "channel");
  absl::StatusOr<adapters::storage::NotificationTarget> target =
      ctx.notification_channels.Target(name);
  if (absl::IsNotFound(target.status())) {
    return HttpReply::Error(
        AgentErrorCode::kInvalidRequest,
        absl::StrCat("no notification channel is named ", core::QuoteForMessage(name)));
  }
  if (!target.ok()) {
    return Unavailable("the notification channel", target.status());
  }
  const absl::Time now = ctx.clock.Now();
  core::OutboxEntry entry;
  entry.channel = name;
  entry.event.kind = core::NotificationEventKind::kTest;
  entry.event.key = absl::StrCat("test:", absl::ToUnixNanos(now));
  entry.event.severity = core::Severity::kInfo;
  entry.event.title = "Pulse test notification";
  entry.event.message = absl::StrCat("A test of channel ", name, ", sent by ", ActorFor(request).id,
                                     ". Notifications reach this channel.");
  entry.event.occurred_at = now;
  entry.idempotency_key = core::NotificationIdempotencyKey(name, entry.event.key);
  entry.payload_json = core::NotificationPayloadJson(name, entry.idempotency_key, entry.event);
  const DeliveryOutcome outcome = ctx.notification_sender.Deliver(*target, entry);
  core::JsonWriter w;
  w.StartObject();
  w.Member("channel", name);
  w.Member("kind", core::ToString(target->channel.kind));
  w.Member("delivered", outcome.delivered);
  w.Member("http_status", outcome.http_status);
  w.MemberIfNotEmpty("error", outcome.error);
  w.Member("idempotency_key", entry.idempotency_key);
  w.EndObject();
  return HttpReply::Json(w.Take());
}

}  // namespace

absl::Status BindNotificationRoutes(adapters::http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle(
      "get_notification_settings", [&ctx](const HttpRequest& r) { return GetSettings(ctx, r); }));
  PULSE_RETURN_IF_ERROR(router.Handle("update_notification_settings", [&ctx](const HttpRequest& r) {
    return UpdateSettings(ctx, r);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "test_notification_channel", [&ctx](const HttpRequest& r) { return TestChannel(ctx, r); }));
  return absl::OkStatus();
}

}  // namespace pulse::server

#include "notification_sender.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "notification_formats.h"
#include "pulse/adapters/http_client/http_client.h"
#include "pulse/adapters/http_client/smtp_client.h"
#include "server_context.h"

namespace pulse::server {
namespace {

namespace hc = http_client;

// Rows taken per look at the outbox.
constexpr std::size_t kBatch = 64;
// A permanently failing answer's body is kept this long in last_error (the receiver's words).
constexpr std::size_t kMaxErrorBodyBytes = 200;

bool InWindow(int minute, int start, int end) {
  return start < end ? (minute >= start && minute < end) : (minute >= start || minute < end);
}

std::string Printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, kMaxErrorBodyBytes)) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : ' ');
  }
  return out;
}

}  // namespace

std::optional<absl::Time> QuietUntil(const core::NotificationChannel& channel, absl::Time now) {
  if (!channel.quiet_hours.has_value()) {
    return std::nullopt;
  }
  const core::QuietHours& q = *channel.quiet_hours;
  absl::TimeZone zone = absl::UTCTimeZone();
  if (!absl::LoadTimeZone(q.time_zone, &zone)) {
    zone = absl::UTCTimeZone();
  }
  const absl::CivilMinute local = absl::ToCivilMinute(now, zone);
  const int minute = local.hour() * 60 + local.minute();
  if (!InWindow(minute, q.start_minute, q.end_minute)) {
    return std::nullopt;
  }
  const absl::CivilDay today = absl::CivilDay(local);
  absl::CivilMinute end = absl::CivilMinute(today) + q.end_minute;
  if (end <= local) {
    end += 24 * 60;
  }
  return absl::FromCivil(end, zone);
}

NotificationSender::NotificationSender(
    core::NotificationOutbox& outbox, const adapters::storage::SqliteNotificationChannels& channels,
    const core::Clock& clock, NotificationSenderOptions options)
    : outbox_(outbox), channels_(channels), clock_(clock), options_(std::move(options)) {}

NotificationSender::~NotificationSender() { Stop(); }

void NotificationSender::Start() {
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { Run(); });
  }
}

void NotificationSender::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    wake_.Signal();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

void NotificationSender::Wake() {
  absl::MutexLock lock(&mu_);
  woken_ = true;
  wake_.Signal();
}

DeliveryOutcome NotificationSender::DeliverEmail(
    const adapters::storage::NotificationTarget& target, const core::OutboxEntry& entry) const {
  DeliveryOutcome out;
  absl::StatusOr<hc::SmtpUrl> server = hc::ParseSmtpUrl(target.url, "the channel's url");
  if (!server.ok() || !target.channel.email.has_value()) {
    out.permanent = true;
    out.error = server.ok() ? "the channel has no email addressing"
                            : std::string(server.status().message());
    return out;
  }
  hc::SmtpOptions options;
  options.server = *std::move(server);
  options.username = target.channel.email->username;
  options.password = target.secret;
  options.ca_file = options_.ca_file;
  options.connect_timeout = std::min(options_.timeout, absl::Seconds(10));
  options.total_timeout = options_.timeout;
  hc::MailMessage message;
  message.from = target.channel.email->from;
  message.to = target.channel.email->to;
  message.data = FormatEmail(target, entry);
  const hc::SmtpOutcome sent = hc::SendMail(options, message);
  out.delivered = sent.sent;
  out.permanent = sent.permanent;
  out.http_status = sent.reply_code;
  out.error = sent.error;
  return out;
}

DeliveryOutcome NotificationSender::Deliver(const adapters::storage::NotificationTarget& target,
                                            const core::OutboxEntry& entry) const {
  if (target.channel.kind == core::NotificationChannelKind::kEmail) {
    return DeliverEmail(target, entry);
  }
  const NotificationRequest request = FormatNotification(target, entry);
  hc::ClientOptions options;
  options.ca_file = options_.ca_file;
  options.timeouts.connect = std::min(options_.timeout, absl::Seconds(10));
  options.timeouts.response_header = options_.timeout;
  options.timeouts.idle = options_.timeout;
  options.timeouts.total = options_.timeout;
  options.max_body_bytes = 64 * 1024;
  options.user_agent = "pulse-notifications";
  DeliveryOutcome out;
  absl::StatusOr<std::unique_ptr<hc::HttpClient>> client =
      hc::HttpClient::Open(request.url, options, "the channel's url");
  if (!client.ok()) {
    out.permanent = true;
    out.error = std::string(client.status().message());
    return out;
  }
  hc::Request send;
  send.method = "POST";
  // The whole path is the target (the base's prefix is the URL's path).
  send.target =
      (*client)->options().base.path_prefix.empty() ? "/" : (*client)->options().base.path_prefix;
  hc::ClientOptions reopened = (*client)->options();
  reopened.base.path_prefix.clear();
  client = hc::HttpClient::Open(std::move(reopened));
  if (!client.ok()) {
    out.permanent = true;
    out.error = std::string(client.status().message());
    return out;
  }
  send.headers = request.headers;
  send.body = request.body;
  absl::StatusOr<hc::Response> response = (*client)->Send(send);
  if (!response.ok()) {
    out.error = std::string(response.status().message());
    return out;
  }
  out.http_status = response->head.status;
  if (out.http_status >= 200 && out.http_status < 300) {
    out.delivered = true;
    return out;
  }
  out.error =
      absl::StrCat("the receiver answered ", out.http_status, ": ", Printable(response->body));
  out.permanent = out.http_status < 500 && out.http_status != 408 && out.http_status != 429;
  if (std::optional<std::string> after = response->head.Header("Retry-After")) {
    int seconds = 0;
    if (absl::SimpleAtoi(*after, &seconds) && seconds > 0) {
      out.retry_after = absl::Seconds(std::min(seconds, 3600));
    }
  }
  return out;
}

void NotificationSender::Handle(const core::OutboxEntry& entry, absl::Time now) {
  absl::StatusOr<adapters::storage::NotificationTarget> target = channels_.Target(entry.channel);
  if (absl::IsNotFound(target.status())) {
    // The channel was removed: nobody is left to tell.
    outbox_.MarkFailed(entry.id, "the channel was removed", std::nullopt)
        .IgnoreError();  // a row another writer changed needs nothing more
    return;
  }
  if (!target.ok()) {
    const std::optional<absl::Duration> delay =
        core::RetryDelay(options_.retry, entry.attempts + 1, absl::Uniform(bitgen_, 0.0, 1.0));
    outbox_
        .MarkFailed(entry.id, std::string(target.status().message()),
                    delay.has_value() ? std::optional<absl::Time>(now + *delay) : std::nullopt)
        .IgnoreError();  // retried from the outbox on the next look
    return;
  }
  if (std::optional<absl::Time> until = QuietUntil(target->channel, now)) {
    outbox_.Defer(entry.id, *until).IgnoreError();  // the row stays pending either way
    return;
  }
  std::deque<absl::Time>& sent = sent_[entry.channel];
  while (!sent.empty() && sent.front() <= now - absl::Minutes(1)) {
    sent.pop_front();
  }
  if (sent.size() >= static_cast<std::size_t>(std::max(1, target->channel.rate_per_minute))) {
    outbox_.Defer(entry.id, sent.front() + absl::Minutes(1)).IgnoreError();  // stays pending
    return;
  }
  sent.push_back(now);
  const DeliveryOutcome outcome = Deliver(*target, entry);
  const absl::Time after = clock_.Now();
  absl::Status marked;
  if (outcome.delivered) {
    marked = outbox_.MarkDelivered(entry.id, after);
  } else {
    std::optional<absl::Duration> delay = outcome.permanent
                                              ? std::nullopt
                                              : core::RetryDelay(options_.retry, entry.attempts + 1,
                                                                 absl::Uniform(bitgen_, 0.0, 1.0));
    if (delay.has_value() && outcome.retry_after.has_value()) {
      delay = std::max(*delay, *outcome.retry_after);
    }
    marked = outbox_.MarkFailed(
        entry.id, outcome.error,
        delay.has_value() ? std::optional<absl::Time>(after + *delay) : std::nullopt);
    if (!delay.has_value()) {
      LogLine(absl::StrCat("notification ", entry.idempotency_key, " to channel ", entry.channel,
                           " is dead after ", entry.attempts + 1, " attempts: ", outcome.error));
    }
  }
  if (!marked.ok()) {
    LogLine(absl::StrCat("notification ", entry.idempotency_key,
                         " could not be marked: ", marked.message()));
  }
}

void NotificationSender::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) {
        return;
      }
      woken_ = false;
    }
    const absl::Time now = clock_.Now();
    if (now - last_prune_ >= options_.prune_interval) {
      // A failed prune is tried again next interval: what it would delete is only old.
      absl::StatusOr<std::int64_t> pruned =
          outbox_.Prune(now - options_.keep_delivered, now - options_.keep_dead);
      last_prune_ = now;
      if (!pruned.ok()) {
        LogLine(
            absl::StrCat("the notification outbox cannot be pruned: ", pruned.status().message()));
      }
    }
    absl::StatusOr<std::vector<core::OutboxEntry>> due = outbox_.Due(now, kBatch);
    if (!due.ok()) {
      LogLine(absl::StrCat("the notification outbox cannot be read: ", due.status().message()));
    } else {
      for (const core::OutboxEntry& entry : *due) {
        {
          absl::MutexLock lock(&mu_);
          if (stop_) {
            return;
          }
        }
        Handle(entry, clock_.Now());
      }
      if (due->size() == kBatch) {
        continue;  // more are due
      }
    }
    absl::Duration wait = options_.poll;
    if (absl::StatusOr<std::optional<absl::Time>> next = outbox_.NextDue();
        next.ok() && next->has_value()) {
      wait = std::clamp(**next - clock_.Now(), absl::ZeroDuration(), options_.poll);
    }
    absl::MutexLock lock(&mu_);
    if (!stop_ && !woken_) {
      wake_.WaitWithTimeout(&mu_, wait);
    }
  }
}

}  // namespace pulse::server

#include "pulse/adapters/hostagent/agent_runtime.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/time/clock.h"
#include "fmt/format.h"
#include "pulse/adapters/hostagent/agent_report.h"
#include "pulse/adapters/http_client/http_client.h"
#include "pulse/adapters/http_client/sse_parser.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"

namespace pulse::adapters::hostagent {
namespace {

constexpr std::size_t kMaxErrorBodyBytes = 4096;
// Posting a result is retried this often: the command's effect already happened, and the
// server wants its account.
constexpr int kResultAttempts = 3;
constexpr absl::Duration kPoll = absl::Milliseconds(50);
// One event's data: a command is at most a message; headroom for the field names.
constexpr std::size_t kMaxEventBytes = kMaxMessageBytes + 1024;

http_client::Headers AuthHeaders(const std::string& token, std::string_view accept) {
  return {{"Authorization", "Bearer " + token}, {"Accept", std::string(accept)}};
}

}  // namespace

absl::Duration ReconnectBackoff::Next() {
  const absl::Duration base = next_;
  next_ = std::min(next_ * 2, max_);
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  return base * jitter(random_);
}

absl::Status RefusalStatus(int http_status, std::string_view body) {
  std::string code = "unknown";
  std::string message;
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body, {kMaxErrorBodyBytes, 8});
  if (doc.ok() && doc->IsObject()) {
    code = core::BoundedCleanText(core::GetString(*doc, "error").value_or("unknown"), 64);
    message = core::BoundedCleanText(core::GetString(*doc, "message").value_or(""), 256);
  }
  const std::string text = fmt::format("the server answered HTTP {} ({}{}{})", http_status, code,
                                       message.empty() ? "" : ": ", message);
  if (http_status == 401) {
    return absl::UnauthenticatedError(text);
  }
  if (http_status == 403) {
    return absl::PermissionDeniedError(text);
  }
  if (http_status == 400) {
    return absl::InvalidArgumentError(text);
  }
  return absl::UnavailableError(text);
}

AgentRuntime::AgentRuntime(AgentRuntimeOptions options, agents::LocalHostFleet& fleet,
                           AgentExecutor& executor, const core::Clock& clock,
                           std::unique_ptr<http_client::HttpClient> requests,
                           std::unique_ptr<http_client::HttpClient> stream)
    : options_(std::move(options)),
      fleet_(fleet),
      executor_(executor),
      clock_(clock),
      requests_(std::move(requests)),
      stream_(std::move(stream)) {}

AgentRuntime::~AgentRuntime() = default;

absl::StatusOr<std::unique_ptr<AgentRuntime>> AgentRuntime::Open(AgentRuntimeOptions options,
                                                                 agents::LocalHostFleet& fleet,
                                                                 AgentExecutor& executor,
                                                                 const core::Clock& clock) {
  if (options.token.empty()) {
    return absl::InvalidArgumentError("the agent token is empty");
  }
  if (options.interval < absl::Seconds(kMinReportIntervalSeconds) ||
      options.interval > absl::Seconds(kMaxReportIntervalSeconds)) {
    return absl::InvalidArgumentError(fmt::format("--interval must be between {} s and {} s",
                                                  kMinReportIntervalSeconds,
                                                  kMaxReportIntervalSeconds));
  }
  http_client::ClientOptions common;
  common.ca_file = options.ca_file;
  common.pinned_sha256 = options.pin_sha256;
  common.max_body_bytes = kMaxMessageBytes;
  common.user_agent = "pulse-agent/" + options.agent_version;
  http_client::ClientOptions request_options = common;
  request_options.timeouts.total = options.request_timeout;
  request_options.timeouts.response_header = options.request_timeout;
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> requests =
      http_client::HttpClient::Open(options.server_url, request_options, "--server");
  if (!requests.ok()) {
    return requests.status();
  }
  http_client::ClientOptions stream_options = common;
  stream_options.max_body_bytes = 0;  // the stream never ends by size; each event is bounded
  stream_options.timeouts.response_header = options.request_timeout;
  stream_options.timeouts.idle = options.stream_idle_timeout;
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> stream =
      http_client::HttpClient::Open(options.server_url, stream_options, "--server");
  if (!stream.ok()) {
    return stream.status();
  }
  return std::unique_ptr<AgentRuntime>(new AgentRuntime(std::move(options), fleet, executor, clock,
                                                        *std::move(requests), *std::move(stream)));
}

void AgentRuntime::Log(AgentLogLevel level, std::string_view line) const {
  if (options_.log) {
    options_.log(level, line);
  }
}

void AgentRuntime::Halt(absl::Status fatal) {
  if (!fatal.ok()) {
    absl::MutexLock lock(&mu_);
    if (fatal_.ok()) {
      fatal_ = std::move(fatal);
    }
  }
  halt_.store(true);
}

void AgentRuntime::SleepUnlessHalted(absl::Duration d) const {
  const absl::Time until = absl::Now() + d;
  while (!halted()) {
    const absl::Duration left = until - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return;
    }
    absl::SleepFor(std::min(left, kPoll));
  }
}

absl::StatusOr<std::string> AgentRuntime::Post(std::string_view path, const std::string& body,
                                               const std::atomic<bool>* cancelled) {
  http_client::Request request;
  request.method = "POST";
  request.target = std::string(path);
  request.headers = AuthHeaders(options_.token, "application/json");
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = body;
  absl::StatusOr<http_client::Response> response = requests_->Send(request, cancelled);
  if (!response.ok()) {
    return absl::UnavailableError(
        fmt::format("{} failed: {}", path, std::string(response.status().message())));
  }
  if (response->head.status != 200) {
    return RefusalStatus(response->head.status, response->body);
  }
  return std::move(response->body);
}

absl::Status AgentRuntime::PostReport(std::string_view in_reply_to) {
  return PostReport(in_reply_to, nullptr);
}

absl::Status AgentRuntime::PostReport(std::string_view in_reply_to,
                                      const std::atomic<bool>* cancelled) {
  ReportContext context;
  context.agent_version = options_.agent_version;
  context.interval_seconds = static_cast<int>(absl::ToInt64Seconds(options_.interval));
  context.in_reply_to = std::string(in_reply_to);
  context.now = clock_.Now();
  absl::StatusOr<Report> report = BuildHostReport(fleet_, executor_, context);
  if (!report.ok()) {
    return absl::UnavailableError(
        fmt::format("the host cannot be probed: {}", std::string(report.status().message())));
  }
  absl::StatusOr<std::string> answer = Post(kReportPath, EncodeReport(*report), cancelled);
  if (!answer.ok()) {
    return answer.status();
  }
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(*answer, {kMaxErrorBodyBytes, 8});
  if (!doc.ok() || !doc->IsObject() || core::GetBool(*doc, "accepted") != true) {
    return absl::UnavailableError("the server did not accept the report");
  }
  Log(AgentLogLevel::kDebug,
      fmt::format("report accepted: {} resources{}", report->resources.size(),
                  in_reply_to.empty() ? "" : fmt::format(" (in reply to {})", in_reply_to)));
  return absl::OkStatus();
}

absl::Status AgentRuntime::PostResult(const Result& result) {
  const std::string body = EncodeResult(result);
  absl::Status last;
  for (int attempt = 0; attempt < kResultAttempts; ++attempt) {
    // Never cancelled: on a graceful stop the result of the command that ran is still posted.
    absl::StatusOr<std::string> answer = Post(kResultsPath, body, nullptr);
    if (answer.ok()) {
      absl::StatusOr<rapidjson::Document> doc = core::ParseJson(*answer, {kMaxErrorBodyBytes, 8});
      if (doc.ok() && doc->IsObject() && core::GetBool(*doc, "accepted") == false) {
        // A late answer after a reconnect: the server had settled the command already.
        Log(AgentLogLevel::kInfo,
            fmt::format("the server no longer waits for {}", result.command_id));
      }
      return absl::OkStatus();
    }
    last = answer.status();
    if (absl::IsUnauthenticated(last) || absl::IsPermissionDenied(last) ||
        absl::IsInvalidArgument(last)) {
      return last;
    }
    absl::SleepFor(absl::Seconds(1));
  }
  return last;
}

void AgentRuntime::Enqueue(Command command) {
  absl::MutexLock lock(&mu_);
  if (pending_ids_.count(command.command_id) != 0) {
    return;  // sent again after a reconnect while still queued or running
  }
  if (queue_.size() >= options_.max_queued_commands) {
    Log(AgentLogLevel::kWarning,
        fmt::format("too many queued commands: {} dropped (the server sends it again)",
                    command.command_id));
    return;
  }
  pending_ids_.insert(command.command_id);
  queue_.push_back(std::move(command));
}

void AgentRuntime::OnEvent(std::string_view event, std::string_view data, bool& saw_hello,
                           bool& broken) {
  if (event == "hello") {
    absl::StatusOr<Hello> hello = DecodeHello(data);
    if (!hello.ok() || hello->host != executor_.host()) {
      Log(AgentLogLevel::kWarning,
          hello.ok()
              ? fmt::format("the server greeted host {}, not {}", hello->host, executor_.host())
              : fmt::format("malformed hello: {}", std::string(hello.status().message())));
      broken = true;
      return;
    }
    saw_hello = true;
    streams_opened_.fetch_add(1);
    Log(AgentLogLevel::kInfo, fmt::format("connected as {} (server {})", hello->host,
                                          core::BoundedCleanText(hello->server_version, 64)));
    return;
  }
  if (event != "command") {
    return;  // unknown events are for later protocol versions
  }
  if (!saw_hello) {
    Log(AgentLogLevel::kWarning, "a command came before the hello; reconnecting");
    broken = true;
    return;
  }
  absl::StatusOr<Command> command = DecodeCommand(data);
  if (!command.ok()) {
    // Without a decodable command there is no id to answer; the server's deadline settles it.
    Log(AgentLogLevel::kWarning,
        fmt::format("malformed command ignored: {}", std::string(command.status().message())));
    return;
  }
  Enqueue(*std::move(command));
}

absl::Status AgentRuntime::StreamOnce() {
  http_client::Request request;
  request.target = fmt::format("{}?host={}&agent_version={}", kCommandsPath, executor_.host(),
                               options_.agent_version);
  request.headers = AuthHeaders(options_.token, "text/event-stream");
  http_client::SseParser parser(kMaxEventBytes);
  int status = 0;
  std::string error_body;
  bool saw_hello = false;
  bool broken = false;
  absl::StatusOr<http_client::StreamEnd> end = stream_->Stream(
      request,
      [&](const http_client::ResponseHead& head) {
        status = head.status;
        return true;
      },
      [&](std::string_view bytes) {
        if (status != 200) {
          error_body.append(bytes.substr(0, kMaxErrorBodyBytes - error_body.size()));
          return error_body.size() < kMaxErrorBodyBytes;
        }
        const bool fed = parser.Feed(bytes, [&](const http_client::SseEvent& e) {
          if (!broken) {
            OnEvent(e.event, e.data, saw_hello, broken);
          }
        });
        if (!fed) {
          Log(AgentLogLevel::kWarning, "an event on the command stream exceeded its bound");
        }
        return fed && !broken;
      },
      &halt_);
  if (status != 0 && status != 200) {
    return RefusalStatus(status, error_body);
  }
  if (!end.ok()) {
    return absl::UnavailableError(
        fmt::format("the command stream failed: {}", std::string(end.status().message())));
  }
  return absl::UnavailableError(broken ? "the command stream broke the protocol"
                                       : "the server ended the command stream");
}

void AgentRuntime::ReporterLoop() {
  absl::Time next = absl::InfinitePast();
  while (!halted()) {
    if (absl::Now() >= next) {
      // A periodic report is abandoned when the agent stops; the next start sends one.
      absl::Status posted = PostReport("", &halt_);
      if (absl::IsUnauthenticated(posted) || absl::IsPermissionDenied(posted)) {
        Halt(posted);
        return;
      }
      if (!posted.ok()) {
        Log(AgentLogLevel::kWarning,
            fmt::format("report not delivered: {}", std::string(posted.message())));
      }
      next = absl::Now() + options_.interval;
    }
    absl::SleepFor(kPoll);
  }
}

void AgentRuntime::WorkerLoop() {
  for (;;) {
    Command command;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !queue_.empty() || halt_.load();
      };
      // halt_ is set without the mutex (the reporter, a signal), so wait in short slices.
      while (!ready()) {
        mu_.AwaitWithTimeout(absl::Condition(&ready), kPoll);
      }
      if (halt_.load()) {
        return;  // queued commands stay with the server, which sends them again
      }
      command = std::move(queue_.front());
      queue_.pop_front();
    }
    absl::Status answered;
    if (command.kind == CommandKind::kReport) {
      answered = PostReport(command.command_id);
    } else {
      const Result result = executor_.Execute(command);
      Log(AgentLogLevel::kInfo,
          fmt::format("{} {} {}: {}{}", ToString(command.kind), command.command_id,
                      core::ToString(result.status), result.reason_code,
                      result.replayed ? " (replayed)" : ""));
      answered = PostResult(result);
    }
    {
      absl::MutexLock lock(&mu_);
      pending_ids_.erase(command.command_id);
    }
    if (absl::IsUnauthenticated(answered) || absl::IsPermissionDenied(answered)) {
      Halt(answered);
      return;
    }
    if (!answered.ok()) {
      Log(AgentLogLevel::kWarning,
          fmt::format("the answer to {} was not delivered: {}", command.command_id,
                      std::string(answered.message())));
    }
  }
}

absl::Status AgentRuntime::Run(const std::atomic<bool>& stop) {
  halt_.store(false);
  {
    absl::MutexLock lock(&mu_);
    fatal_ = absl::OkStatus();
    queue_.clear();
    pending_ids_.clear();
  }
  // The stop flag (set by a signal handler) becomes halt_, which every wait and the stream
  // poll, within kPoll however busy the other threads are.
  std::thread watcher([this, &stop] {
    while (!halted()) {
      if (stop.load()) {
        Halt();
        return;
      }
      absl::SleepFor(kPoll);
    }
  });
  std::thread reporter([this] { ReporterLoop(); });
  std::thread worker([this] { WorkerLoop(); });
  ReconnectBackoff backoff(options_.backoff_initial, options_.backoff_max, std::random_device{}());
  while (!halted()) {
    const absl::Time opened = absl::Now();
    absl::Status ended = StreamOnce();
    if (absl::IsUnauthenticated(ended) || absl::IsPermissionDenied(ended)) {
      Halt(ended);
      break;
    }
    if (halted()) {
      break;
    }
    if (absl::Now() - opened >= options_.backoff_reset_after) {
      backoff.Reset();
    }
    const absl::Duration delay = backoff.Next();
    Log(AgentLogLevel::kWarning,
        fmt::format("{}; dialling again in {}", std::string(ended.message()),
                    absl::FormatDuration(absl::Trunc(delay, absl::Milliseconds(1)))));
    SleepUnlessHalted(delay);
  }
  // The worker finishes the command it is running (and posts its result) before it sees halt.
  worker.join();
  reporter.join();
  watcher.join();
  absl::MutexLock lock(&mu_);
  return fatal_;
}

}  // namespace pulse::adapters::hostagent

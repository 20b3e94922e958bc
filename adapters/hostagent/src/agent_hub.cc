#include "pulse/adapters/hostagent/agent_hub.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::hostagent {
namespace {

class SystemClock final : public core::Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

absl::Status Mismatch(std::string_view detail) {
  return absl::PermissionDeniedError(absl::StrCat("agent_host_mismatch: ", core::ToAbsl(detail)));
}

constexpr std::size_t kMaxAnsweredAttempts = 1000;

}  // namespace

std::string_view ToString(HostState state) {
  switch (state) {
    case HostState::kConnected:
      return "connected";
    case HostState::kDisconnected:
      return "disconnected";
    case HostState::kStale:
      return "stale";
    case HostState::kPending:
      return "pending";
  }
  return "pending";
}

struct AgentHub::Waiting {
  Command command;
  bool answered = false;
  Result result;
};

struct AgentHub::HostEntry {
  std::string host;
  std::string token_id;
  std::string agent_version;
  std::optional<absl::Time> last_report_at;   // durable
  std::optional<absl::Time> last_seen;        // this process
  std::optional<absl::Time> fresh_report_at;  // the last report this process accepted
  std::uint64_t report_seq = 0;
  int interval_seconds = 30;
  std::shared_ptr<const Report> report;
  std::shared_ptr<CommandSink> sink;
  std::optional<absl::Time> connected_since;
  std::vector<std::shared_ptr<Waiting>> waiting;
  // "<resource id>#<metric>"
  std::map<std::string, std::deque<core::FleetMetricPoint>, std::less<>> metrics;
};

AgentHub::AgentHub(core::HostAgentStore& store, AgentHubOptions options)
    : store_(store),
      options_(std::move(options)),
      owned_clock_(options_.clock == nullptr ? std::make_unique<SystemClock>() : nullptr),
      clock_(options_.clock == nullptr ? owned_clock_.get() : options_.clock),
      stale_after_(options_.stale_after) {}

AgentHub::~AgentHub() = default;

absl::StatusOr<std::unique_ptr<AgentHub>> AgentHub::Open(core::HostAgentStore& store,
                                                         AgentHubOptions options) {
  absl::StatusOr<std::vector<core::HostAgentRecord>> records = store.List();
  if (!records.ok()) {
    return records.status();
  }
  std::unique_ptr<AgentHub> hub(new AgentHub(store, std::move(options)));
  absl::MutexLock lock(&hub->mu_);
  for (core::HostAgentRecord& record : *records) {
    auto entry = std::make_unique<HostEntry>();
    entry->host = record.host;
    entry->token_id = record.token_id;
    entry->agent_version = record.agent_version;
    entry->last_report_at = record.last_report_at;
    entry->report_seq = record.report_seq;
    if (!record.last_report.empty()) {
      // The shape is known from before the restart; its statuses are not (the host is stale
      // until it reports again).
      if (absl::StatusOr<Report> report = DecodeReport(record.last_report);
          report.ok() && report->host == record.host) {
        entry->interval_seconds = report->interval_seconds;
        entry->report = std::make_shared<const Report>(*std::move(report));
      }
    }
    hub->host_by_token_.emplace(record.token_id, record.host);
    hub->hosts_.emplace(record.host, std::move(entry));
  }
  return hub;
}

absl::Time AgentHub::Now() const { return clock_->Now(); }

std::string AgentHub::NewCommandId() {
  return fmt::format("cmd_{:016x}", absl::Uniform<std::uint64_t>(bitgen_));
}

absl::Duration AgentHub::StaleWindow(const HostEntry& entry) const {
  if (stale_after_ > absl::ZeroDuration()) {
    return stale_after_;
  }
  return absl::Seconds(3 * entry.interval_seconds + 10);
}

absl::Status AgentHub::Authorize(std::string_view token_id, std::string_view host,
                                 const TokenLiveness& token_live) {
  if (!IsAgentHostName(host)) {
    return absl::InvalidArgumentError("host must be 1..64 bytes of [A-Za-z0-9._-]");
  }
  {
    absl::MutexLock lock(&mu_);
    if (const auto it = host_by_token_.find(token_id); it != host_by_token_.end()) {
      if (it->second == host) {
        return absl::OkStatus();
      }
      return Mismatch(fmt::format("this token belongs to host {}, not {}", it->second, host));
    }
    if (hosts_.find(host) == hosts_.end() && hosts_.size() >= options_.max_hosts) {
      return absl::ResourceExhaustedError(
          fmt::format("the server already knows {} hosts", options_.max_hosts));
    }
  }
  // The store is the authority (a token may have been bound by `pulse-server token create
  // --host` since this process started); the memory above is its cache.
  const absl::Time now = Now();
  absl::StatusOr<core::HostAgentRecord> bound = store_.Bind(host, token_id, now);
  if (!bound.ok() && absl::IsFailedPrecondition(bound.status())) {
    if (absl::StatusOr<core::HostAgentRecord> mine = store_.FindByToken(token_id);
        mine.ok() && mine->host != host) {
      return Mismatch(fmt::format("this token belongs to host {}, not {}", mine->host, host));
    }
    absl::StatusOr<core::HostAgentRecord> holder = store_.Get(host);
    if (!holder.ok()) {
      return holder.status();
    }
    if (holder->token_id != token_id) {
      if (token_live && token_live(holder->token_id)) {
        return Mismatch(
            fmt::format("host {} is bound to another agent token ({}); revoke it to "
                        "move the host to this one",
                        host, holder->token_id));
      }
      bound = store_.Bind(host, token_id, now, holder->token_id);
    }
  }
  if (!bound.ok()) {
    if (absl::IsFailedPrecondition(bound.status())) {
      return Mismatch(core::ToStd(bound.status().message()));
    }
    return bound.status();
  }
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = hosts_.try_emplace(std::string(host));
  if (inserted) {
    it->second = std::make_unique<HostEntry>();
    it->second->host = std::string(host);
  }
  HostEntry& entry = *it->second;
  if (!entry.token_id.empty() && entry.token_id != bound->token_id) {
    host_by_token_.erase(entry.token_id);
    // The old token's stream must not keep receiving this host's commands.
    if (entry.sink != nullptr) {
      entry.sink->End();
      entry.sink.reset();
      entry.connected_since.reset();
    }
  }
  entry.token_id = bound->token_id;
  host_by_token_[bound->token_id] = std::string(host);
  return absl::OkStatus();
}

absl::StatusOr<ReportAck> AgentHub::AcceptReport(std::string_view token_id, Report report,
                                                 std::string_view raw_json) {
  const absl::Time now = Now();
  absl::StatusOr<std::uint64_t> seq =
      store_.SaveReport(report.host, token_id, report.agent_version, raw_json, now);
  if (!seq.ok()) {
    if (absl::IsFailedPrecondition(seq.status())) {
      return Mismatch(core::ToStd(seq.status().message()));
    }
    return seq.status();
  }
  absl::MutexLock lock(&mu_);
  auto it = hosts_.find(report.host);
  if (it == hosts_.end()) {
    auto entry = std::make_unique<HostEntry>();
    entry->host = report.host;
    entry->token_id = std::string(token_id);
    it = hosts_.emplace(report.host, std::move(entry)).first;
    host_by_token_[std::string(token_id)] = report.host;
  }
  HostEntry& entry = *it->second;
  entry.agent_version = report.agent_version;
  entry.last_report_at = now;
  entry.last_seen = now;
  entry.fresh_report_at = now;
  entry.report_seq = *seq;
  entry.interval_seconds = report.interval_seconds;
  for (const ReportMetric& m : report.metrics) {
    std::deque<core::FleetMetricPoint>& points =
        entry.metrics[absl::StrCat(m.resource_id, "#", m.metric)];
    points.push_back({now, m.value});
    while (points.size() > options_.max_metric_points) {
      points.pop_front();
    }
  }
  const std::string in_reply_to = report.in_reply_to;
  entry.report = std::make_shared<const Report>(std::move(report));
  if (!in_reply_to.empty()) {
    for (const std::shared_ptr<Waiting>& w : entry.waiting) {
      if (w->command.command_id == in_reply_to && w->command.kind == CommandKind::kReport) {
        w->answered = true;
        w->result.status = core::ExecutionStatus::kSucceeded;
      }
    }
  }
  return ReportAck{*seq, entry.interval_seconds};
}

void AgentHub::SendCommand(HostEntry& entry, const Command& command) {
  if (entry.sink == nullptr) {
    return;
  }
  if (!entry.sink->Send("command", EncodeCommand(command))) {
    DropClosedSink(entry);
  }
}

void AgentHub::DropClosedSink(HostEntry& entry) {
  if (entry.sink != nullptr && !entry.sink->open()) {
    entry.sink.reset();
    entry.connected_since.reset();
  }
}

void AgentHub::Attach(std::string_view host, std::shared_ptr<CommandSink> sink) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = hosts_.try_emplace(std::string(host));
  if (inserted) {
    it->second = std::make_unique<HostEntry>();
    it->second->host = std::string(host);
  }
  HostEntry& entry = *it->second;
  if (entry.sink != nullptr && entry.sink != sink) {
    entry.sink->End();
  }
  const absl::Time now = Now();
  entry.sink = std::move(sink);
  entry.connected_since = now;
  entry.last_seen = now;
  entry.sink->Send("hello",
                   EncodeHello({entry.host, options_.heartbeat_seconds, options_.server_version}));
  // Everything unanswered goes again: the agent answers a dispatch it already ran from its
  // state file, and a report or exec is harmless to repeat.
  for (const std::shared_ptr<Waiting>& w : entry.waiting) {
    if (!w->answered) {
      SendCommand(entry, w->command);
    }
  }
}

bool AgentHub::AcceptResult(std::string_view host, const Result& result) {
  absl::MutexLock lock(&mu_);
  const auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    return false;
  }
  HostEntry& entry = *it->second;
  entry.last_seen = Now();
  for (const std::shared_ptr<Waiting>& w : entry.waiting) {
    const Command& c = w->command;
    if (c.command_id != result.command_id || w->answered) {
      continue;
    }
    // The answer must be to this very command: its kind and, for a dispatch, its action and
    // attempt (an agent answering with another attempt's ids is not believed).
    if (c.kind != result.kind ||
        (c.kind == CommandKind::kDispatch &&
         (c.action_id != result.action_id || c.attempt_id != result.attempt_id))) {
      return false;
    }
    w->answered = true;
    w->result = result;
    if (c.kind == CommandKind::kDispatch) {
      if (answered_attempts_.emplace(c.attempt_id, result).second) {
        answered_order_.push_back(c.attempt_id);
        while (answered_order_.size() > kMaxAnsweredAttempts) {
          answered_attempts_.erase(answered_order_.front());
          answered_order_.pop_front();
        }
      }
    }
    return true;
  }
  return false;
}

HostView AgentHub::ViewOf(const HostEntry& entry, absl::Time now) const {
  HostView v;
  v.host = entry.host;
  v.token_id = entry.token_id;
  v.agent_version = entry.agent_version;
  v.connected = entry.sink != nullptr && entry.sink->open();
  v.fresh = entry.fresh_report_at.has_value() && now - *entry.fresh_report_at <= StaleWindow(entry);
  v.last_seen = entry.last_seen;
  v.last_report_at = entry.last_report_at;
  v.connected_since = v.connected ? entry.connected_since : std::nullopt;
  v.report_seq = entry.report_seq;
  v.report = entry.report;
  if (entry.report == nullptr && entry.report_seq == 0) {
    v.state = HostState::kPending;
  } else if (!v.fresh) {
    v.state = HostState::kStale;
  } else {
    v.state = v.connected ? HostState::kConnected : HostState::kDisconnected;
  }
  return v;
}

void AgentHub::RefreshBindings() {
  {
    absl::MutexLock lock(&mu_);
    const absl::Time real_now = absl::Now();
    if (real_now - bindings_read_at_ < absl::Seconds(2)) {
      return;
    }
    bindings_read_at_ = real_now;
  }
  absl::StatusOr<std::vector<core::HostAgentRecord>> records = store_.ListBindings();
  if (!records.ok()) {
    return;  // the memory stays as it is; the next listing tries again
  }
  absl::MutexLock lock(&mu_);
  for (core::HostAgentRecord& record : *records) {
    auto [it, inserted] = hosts_.try_emplace(record.host);
    if (inserted) {
      it->second = std::make_unique<HostEntry>();
      it->second->host = record.host;
      it->second->agent_version = record.agent_version;
      it->second->last_report_at = record.last_report_at;
      it->second->report_seq = record.report_seq;
    }
    HostEntry& entry = *it->second;
    if (entry.token_id != record.token_id) {
      host_by_token_.erase(entry.token_id);
      entry.token_id = record.token_id;
    }
    host_by_token_[record.token_id] = record.host;
  }
}

std::vector<HostView> AgentHub::Hosts() {
  RefreshBindings();
  const absl::Time now = Now();
  absl::MutexLock lock(&mu_);
  std::vector<HostView> out;
  out.reserve(hosts_.size());
  for (auto& [host, entry] : hosts_) {
    DropClosedSink(*entry);
    out.push_back(ViewOf(*entry, now));
  }
  return out;
}

bool AgentHub::HasHosts() {
  RefreshBindings();
  absl::MutexLock lock(&mu_);
  return !hosts_.empty();
}

std::optional<HostView> AgentHub::Host(std::string_view host) {
  const absl::Time now = Now();
  absl::MutexLock lock(&mu_);
  const auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    return std::nullopt;
  }
  DropClosedSink(*it->second);
  return ViewOf(*it->second, now);
}

std::optional<std::string> AgentHub::HostOf(std::string_view resource_id) {
  const std::size_t colon = resource_id.find(':');
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view local = resource_id.substr(colon + 1);
  if (resource_id.substr(0, colon) != "node") {
    const std::size_t slash = local.find('/');
    if (slash == std::string_view::npos) {
      return std::nullopt;
    }
    local = local.substr(0, slash);
  }
  if (!ResourceBelongsToHost(resource_id, local)) {
    return std::nullopt;
  }
  absl::MutexLock lock(&mu_);
  if (hosts_.find(local) == hosts_.end()) {
    return std::nullopt;
  }
  return std::string(local);
}

absl::StatusOr<Result> AgentHub::RunCommand(std::string_view host, Command command) {
  if (command.kind == CommandKind::kReport) {
    return absl::InvalidArgumentError("a report command is sent with RequestReport");
  }
  absl::MutexLock lock(&mu_);
  const auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    return absl::NotFoundError(fmt::format("no agent is known for host {}", host));
  }
  HostEntry& entry = *it->second;
  std::shared_ptr<Waiting> w;
  if (command.kind == CommandKind::kDispatch) {
    if (const auto done = answered_attempts_.find(command.attempt_id);
        done != answered_attempts_.end()) {
      return done->second;
    }
    for (const std::shared_ptr<Waiting>& other : entry.waiting) {
      if (other->command.kind == CommandKind::kDispatch &&
          other->command.attempt_id == command.attempt_id) {
        w = other;  // join the first call's wait
      }
    }
  }
  if (w == nullptr) {
    DropClosedSink(entry);
    if (entry.sink == nullptr) {
      return absl::FailedPreconditionError(
          fmt::format("the agent of host {} is not connected", host));
    }
    if (entry.waiting.size() >= options_.max_queued_per_host) {
      return absl::ResourceExhaustedError(
          fmt::format("{} commands already wait for host {}", entry.waiting.size(), host));
    }
    const absl::Time now = Now();
    command.command_id = NewCommandId();
    command.issued_at = now;
    command.deadline = now + (command.kind == CommandKind::kDispatch ? options_.dispatch_timeout
                                                                     : options_.exec_timeout);
    w = std::make_shared<Waiting>();
    w->command = std::move(command);
    entry.waiting.push_back(w);
    SendCommand(entry, w->command);
  }
  const absl::Time real_deadline = absl::Now() + (w->command.deadline - Now());
  const bool answered =
      mu_.AwaitWithDeadline(absl::Condition(
                                +[](Waiting* waiting) { return waiting->answered; }, w.get()),
                            real_deadline);
  auto& queue = entry.waiting;
  queue.erase(std::remove(queue.begin(), queue.end(), w), queue.end());
  if (!answered) {
    return absl::DeadlineExceededError(
        fmt::format("no answer from the agent of host {} before the deadline", host));
  }
  return w->result;
}

absl::StatusOr<std::shared_ptr<const Report>> AgentHub::RequestReport(std::string_view host) {
  absl::MutexLock lock(&mu_);
  const auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    return absl::NotFoundError(fmt::format("no agent is known for host {}", host));
  }
  HostEntry& entry = *it->second;
  DropClosedSink(entry);
  if (entry.sink == nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("the agent of host {} is not connected", host));
  }
  const absl::Time now = Now();
  auto w = std::make_shared<Waiting>();
  w->command.command_id = NewCommandId();
  w->command.kind = CommandKind::kReport;
  w->command.issued_at = now;
  w->command.deadline = now + options_.report_timeout;
  entry.waiting.push_back(w);
  SendCommand(entry, w->command);
  const bool answered =
      mu_.AwaitWithDeadline(absl::Condition(
                                +[](Waiting* waiting) { return waiting->answered; }, w.get()),
                            absl::Now() + options_.report_timeout);
  auto& queue = entry.waiting;
  queue.erase(std::remove(queue.begin(), queue.end(), w), queue.end());
  if (!answered) {
    return absl::DeadlineExceededError(
        fmt::format("the agent of host {} sent no report in time", host));
  }
  return entry.report;
}

std::vector<core::FleetMetricPoint> AgentHub::MetricPoints(std::string_view resource_id,
                                                           std::string_view metric) {
  const std::optional<std::string> host = HostOf(resource_id);
  if (!host.has_value()) {
    return {};
  }
  absl::MutexLock lock(&mu_);
  const HostEntry& entry = *hosts_.find(*host)->second;
  const auto it =
      entry.metrics.find(absl::StrCat(core::ToAbsl(resource_id), "#", core::ToAbsl(metric)));
  if (it == entry.metrics.end()) {
    return {};
  }
  return {it->second.begin(), it->second.end()};
}

absl::Duration AgentHub::StaleWindowFor(int interval_seconds) {
  absl::MutexLock lock(&mu_);
  HostEntry probe;
  probe.interval_seconds = interval_seconds;
  return StaleWindow(probe);
}

void AgentHub::SetStaleAfter(absl::Duration stale_after) {
  absl::MutexLock lock(&mu_);
  stale_after_ = stale_after;
}

std::size_t AgentHub::waiting_count() {
  absl::MutexLock lock(&mu_);
  std::size_t n = 0;
  for (const auto& [host, entry] : hosts_) {
    n += entry->waiting.size();
  }
  return n;
}

}  // namespace pulse::adapters::hostagent

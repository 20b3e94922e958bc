#include "pulse/adapters/server/patrol_stream.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/finding_types.h"
#include "pulse/core/string_view.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;

// A finding change is published once; this many recent ones are remembered to tell a
// heartbeat write (which carries the last lifecycle event again) from a new event.
constexpr std::size_t kRecentChanges = 4096;
// A write whose newest lifecycle event is older than this is not a change (the event was
// published when it was appended, or before this process started).
constexpr absl::Duration kChangeWindow = absl::Seconds(60);

// Writes `key: text`, cut to `max` bytes at a UTF-8 boundary; true when it was cut.
bool BoundedMember(core::JsonWriter& w, std::string_view key, std::string_view text,
                   std::size_t max) {
  if (text.size() <= max) {
    w.Member(key, text);
    return false;
  }
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;  // never split a UTF-8 sequence
  }
  w.Member(key, text.substr(0, cut));
  return true;
}

std::string_view StringOr(const rapidjson::Value& object, std::string_view key) {
  return core::GetString(object, key).value_or(std::string_view());
}

}  // namespace

PatrolStreamHub::PatrolStreamHub(const core::Clock& clock, PatrolStreamOptions options)
    : clock_(clock), options_(options) {}

template <typename Fill>
void PatrolStreamHub::Publish(std::string_view type, std::string_view run_id, Fill fill) {
  const absl::Time at = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (closed_) {
    return;
  }
  const std::uint64_t seq = next_seq_++;
  core::JsonWriter w;
  w.StartObject();
  w.Member("type", type);
  w.Member("seq", seq);
  w.Member("ts_ms", absl::ToUnixMillis(at));
  w.MemberIfNotEmpty("run_id", run_id);
  fill(w);
  w.EndObject();
  const std::string json = w.Take();
  Buffered entry{seq, http::FormatSseRecord(seq, json), json.size()};
  std::erase_if(subscribers_, [&](const Subscriber& s) {
    std::shared_ptr<http::SseStream> stream = s.stream.lock();
    if (stream == nullptr || stream->finished() || stream->cancelled()) {
      return true;
    }
    // A full queue cuts the subscriber off (SseOverflow::kCancel): it resumes from its id.
    return !stream->SendFrame(entry.frame);
  });
  buffer_bytes_ += entry.json_bytes;
  buffer_.push_back(std::move(entry));
  while (buffer_.size() > 1 &&
         (buffer_.size() > options_.replay_events || buffer_bytes_ > options_.replay_bytes)) {
    buffer_bytes_ -= buffer_.front().json_bytes;
    buffer_.pop_front();
  }
}

std::string PatrolStreamHub::SnapshotJson(std::string_view reason) const {
  const std::uint64_t end = next_seq_ - 1;
  const std::uint64_t start = buffer_.empty() ? next_seq_ : buffer_.front().seq;
  core::JsonWriter w;
  w.StartObject();
  w.Member("type", kPatrolEventSnapshot);
  w.Member("seq", end);
  w.Member("ts_ms", absl::ToUnixMillis(clock_.Now()));
  w.MemberIfNotEmpty("resync_reason", reason);
  w.Member("buffer_start_seq", start);
  w.Member("buffer_end_seq", end);
  w.Key("running");
  w.StartArray();
  for (const auto& [id, run] : running_) {
    w.StartObject();
    w.Member("run_id", id);
    w.Member("trigger", run.trigger);
    w.TimeMember("started_at", run.started_at);
    w.MemberIfNotEmpty("phase", run.phase);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::shared_ptr<http::SseStream> PatrolStreamHub::Subscribe(
    std::optional<std::uint64_t> last_event_id) {
  http::SseOptions options;
  options.heartbeat = options_.heartbeat;
  options.max_queued_frames = options_.subscriber_buffer;
  options.overflow = http::SseOverflow::kCancel;
  const core::Clock& clock = clock_;
  options.heartbeat_frame = [&clock] {
    return http::FormatSseComment(absl::StrCat("ping ", absl::ToUnixSeconds(clock.Now())));
  };
  std::shared_ptr<http::SseStream> stream = http::SseStream::Create(std::move(options));
  absl::MutexLock lock(&mu_);
  if (closed_) {
    return nullptr;
  }
  std::erase_if(subscribers_, [](const Subscriber& s) {
    std::shared_ptr<http::SseStream> live = s.stream.lock();
    return live == nullptr || live->finished() || live->cancelled();
  });
  // Everything below is queued under the lock, so no event can slip between the replay (or
  // the snapshot) and the live events.
  std::string first = http::FormatSseComment("connected");
  const std::uint64_t end = next_seq_ - 1;
  const std::uint64_t start = buffer_.empty() ? next_seq_ : buffer_.front().seq;
  const bool resumable =
      last_event_id.has_value() && *last_event_id <= end && *last_event_id + 1 >= start;
  if (resumable) {
    for (const Buffered& b : buffer_) {
      if (b.seq > *last_event_id) {
        first += b.frame;
      }
    }
  } else {
    const std::string_view reason =
        last_event_id.has_value() ? kResyncStaleLastEventId : kResyncLateJoiner;
    // Its id is the newest seq, so a client that reconnects after it resumes from there.
    first += http::FormatSseRecord(end, SnapshotJson(reason));
  }
  stream->SendFrame(std::move(first));
  subscribers_.push_back(Subscriber{stream});
  return stream;
}

void PatrolStreamHub::OnRunStored(const core::PatrolRunRecord& record) {
  if (record.status == core::PatrolRunStatus::kRunning) {
    {
      absl::MutexLock lock(&mu_);
      if (running_.count(record.id) > 0) {
        return;  // stored again while running: not a new start
      }
      running_[record.id] =
          RunningRun{std::string(core::ToString(record.trigger)), record.started_at, ""};
    }
    Publish(kPatrolEventStart, record.id, [&](core::JsonWriter& w) {
      w.Member("trigger", core::ToString(record.trigger));
      w.TimeMember("started_at", record.started_at);
      w.Key("scope_resource_ids");
      w.StringArray(record.scope.resource_ids);
      w.Key("scope_resource_types");
      w.StringArray(record.scope.resource_types);
    });
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    running_.erase(record.id);
  }
  Publish(kPatrolEventComplete, record.id, [&](core::JsonWriter& w) {
    w.Member("status", core::ToString(record.status));
    w.Member("trigger", core::ToString(record.trigger));
    w.TimeMember("started_at", record.started_at);
    w.TimeMemberIfSet("completed_at", record.completed_at);
    w.Member("resources_checked", record.resources_checked);
    w.Member("new_findings", static_cast<std::int64_t>(record.new_finding_ids.size()));
    w.Member("resolved_findings", static_cast<std::int64_t>(record.resolved_finding_ids.size()));
    w.MemberIfNotEmpty("findings_summary", record.findings_summary);
    w.MemberIfNotEmpty("error_summary", record.error_summary);
  });
}

void PatrolStreamHub::OnPhase(std::string_view run_id, std::string_view phase) {
  {
    absl::MutexLock lock(&mu_);
    auto it = running_.find(std::string(run_id));
    if (it != running_.end()) {
      it->second.phase = std::string(phase);
    }
  }
  Publish(kPatrolEventPhase, run_id, [&](core::JsonWriter& w) { w.Member("phase", phase); });
}

void PatrolStreamHub::OnModelEvent(std::string_view run_id, const core::LoopEvent& event) {
  std::string_view type;
  switch (event.type) {
    case core::LoopEventType::kContent:
      type = kPatrolEventContent;
      break;
    case core::LoopEventType::kToolStart:
      type = kPatrolEventToolStart;
      break;
    case core::LoopEventType::kToolEnd:
      type = kPatrolEventToolEnd;
      break;
    case core::LoopEventType::kError:
      type = kPatrolEventError;
      break;
    default:
      return;  // session, workflow_state, progress, done: the run's own events say it
  }
  absl::StatusOr<rapidjson::Document> data = core::ParseJson(event.data_json);
  if (!data.ok() || !data->IsObject()) {
    return;  // the loop writes objects; nothing else is worth a subscriber's time
  }
  const rapidjson::Value& d = *data;
  const std::size_t max = options_.max_text_bytes;
  Publish(type, run_id, [&](core::JsonWriter& w) {
    bool cut = false;
    switch (event.type) {
      case core::LoopEventType::kContent:
        cut = BoundedMember(w, "content", StringOr(d, "text"), max);
        break;
      case core::LoopEventType::kToolStart:
        w.Member("tool_id", StringOr(d, "id"));
        w.Member("tool_name", StringOr(d, "name"));
        cut = BoundedMember(w, "tool_input", StringOr(d, "input"), max);
        break;
      case core::LoopEventType::kToolEnd:
        w.Member("tool_id", StringOr(d, "id"));
        w.Member("tool_name", StringOr(d, "name"));
        cut = BoundedMember(w, "tool_output", StringOr(d, "output"), max);
        w.Member("tool_success", core::GetBool(d, "success").value_or(false));
        break;
      default:
        w.MemberIfNotEmpty("code", StringOr(d, "code"));
        w.MemberIfNotEmpty("reason", StringOr(d, "reason"));
        cut = BoundedMember(w, "content", StringOr(d, "message"), max);
        break;
    }
    if (cut) {
      w.Member("content_truncated", true);
    }
  });
}

void PatrolStreamHub::OnFindingWritten(const core::Finding& finding, bool created) {
  if (finding.lifecycle.empty()) {
    return;
  }
  const core::LifecycleEvent& last = finding.lifecycle.back();
  if (!created && last.at < clock_.Now() - kChangeWindow) {
    return;  // a write that appended nothing recent: a heartbeat (decided without the lock, so
             // a reconciliation of many findings does not contend with the subscribers)
  }
  {
    absl::MutexLock lock(&mu_);
    std::string key = absl::StrCat(finding.id, "|", absl::ToUnixNanos(last.at), "|",
                                   core::ToAbsl(core::ToString(last.type)));
    if (!recent_set_.insert(key).second) {
      return;  // published already: this write repeats it
    }
    recent_changes_.push_back(std::move(key));
    if (recent_changes_.size() > kRecentChanges) {
      recent_set_.erase(recent_changes_.front());
      recent_changes_.pop_front();
    }
  }
  const bool active = core::IsActive(finding, clock_.Now());
  Publish(kPatrolEventFinding, "", [&](core::JsonWriter& w) {
    w.Member("finding_id", finding.id);
    w.Member("change", core::ToString(last.type));
    w.Member("resource_id", finding.resource_id);
    w.MemberIfNotEmpty("resource_name", finding.resource_name);
    w.Member("severity", core::ToString(finding.severity));
    w.Member("category", core::ToString(finding.category));
    w.Member("title", finding.title);
    w.Member("active", active);
  });
}

void PatrolStreamHub::Close() {
  std::vector<Subscriber> subscribers;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    subscribers.swap(subscribers_);
  }
  for (const Subscriber& s : subscribers) {
    if (std::shared_ptr<http::SseStream> stream = s.stream.lock()) {
      stream->Close();
    }
  }
}

std::size_t PatrolStreamHub::subscribers() const {
  absl::MutexLock lock(&mu_);
  return static_cast<std::size_t>(
      std::count_if(subscribers_.begin(), subscribers_.end(), [](const Subscriber& s) {
        std::shared_ptr<http::SseStream> stream = s.stream.lock();
        return stream != nullptr && !stream->finished() && !stream->cancelled();
      }));
}

std::uint64_t PatrolStreamHub::last_seq() const {
  absl::MutexLock lock(&mu_);
  return next_seq_ - 1;
}

}  // namespace pulse::server

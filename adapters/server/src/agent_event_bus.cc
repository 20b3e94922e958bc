#include "pulse/adapters/server/agent_event_bus.h"

#include <algorithm>
#include <utility>

#include "pulse/core/json/json_writer.h"

namespace pulse::server {

namespace http = adapters::http;

AgentEventBus::AgentEventBus(const core::Clock& clock, AgentEventBusOptions options)
    : clock_(clock), options_(std::move(options)) {}

std::string AgentEventBus::EventJson(std::string_view kind, std::uint64_t id, absl::Time at,
                                     std::string_view payload_json) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("kind", kind);
  w.Member("id", id);
  w.TimeMember("at", at);
  if (!payload_json.empty()) {
    w.Key("payload");
    w.RawValue(payload_json);
  }
  w.EndObject();
  return w.Take();
}

std::shared_ptr<http::SseStream> AgentEventBus::Subscribe(bool redact_commands) {
  http::SseOptions options;
  options.heartbeat = options_.heartbeat;
  options.max_queued_frames = options_.subscriber_buffer;
  options.overflow = http::SseOverflow::kDropNewest;
  const core::Clock& clock = clock_;
  options.heartbeat_frame = [&clock] {
    return http::FormatSseEvent(kEventHeartbeat, EventJson(kEventHeartbeat, 0, clock.Now(), ""))
        .value_or(http::FormatSseComment("heartbeat"));
  };
  std::shared_ptr<http::SseStream> stream = http::SseStream::Create(std::move(options));
  absl::MutexLock lock(&mu_);
  if (closed_) {
    return nullptr;
  }
  // Subscribers that left are pruned here too, so a quiet bus does not collect them.
  std::erase_if(subscribers_, [](const Subscriber& s) {
    std::shared_ptr<http::SseStream> live = s.stream.lock();
    return live == nullptr || live->finished() || live->cancelled();
  });
  // Queued under the lock, so no published event can overtake it.
  stream->SendEvent(kEventStreamConnected, EventJson(kEventStreamConnected, 0, clock_.Now(), ""));
  subscribers_.push_back(Subscriber{stream, redact_commands});
  return stream;
}

std::uint64_t AgentEventBus::Publish(std::string_view kind, std::string_view payload_json,
                                     std::string_view redacted_payload_json) {
  const absl::Time at = clock_.Now();
  absl::MutexLock lock(&mu_);
  // The id is taken under the lock, so every subscriber sees ids in increasing order.
  const std::uint64_t id = next_id_.fetch_add(1);
  const std::string full = EventJson(kind, id, at, payload_json);
  const std::string redacted =
      payload_json == redacted_payload_json ? full : EventJson(kind, id, at, redacted_payload_json);
  std::erase_if(subscribers_, [&](const Subscriber& s) {
    std::shared_ptr<http::SseStream> stream = s.stream.lock();
    if (stream == nullptr || stream->finished() || stream->cancelled()) {
      return true;
    }
    // A full queue drops this event for this subscriber only (kDropNewest).
    stream->SendEvent(kind, s.redact_commands ? redacted : full, id);
    return false;
  });
  if (options_.on_publish) {
    options_.on_publish(kind);
  }
  return id;
}

void AgentEventBus::Close() {
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

std::size_t AgentEventBus::subscribers() const {
  absl::MutexLock lock(&mu_);
  return static_cast<std::size_t>(
      std::count_if(subscribers_.begin(), subscribers_.end(), [](const Subscriber& s) {
        std::shared_ptr<http::SseStream> stream = s.stream.lock();
        return stream != nullptr && !stream->finished() && !stream->cancelled();
      }));
}

}  // namespace pulse::server

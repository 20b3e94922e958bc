// AgentEventBus: the in-process broadcaster behind GET /api/agent/events (docs/server.md "Events,
// metrics, health"). Publishers (the store observers of event_publisher.h) hand it an event; every
// subscriber stream gets it as `event: <kind>\nid: <seq>\ndata: <AgentEvent>\n\n`, where AgentEvent
// is {kind, id, at, payload}. A subscriber's first frame is stream.connected (id 0, no id line), a
// heartbeat frame follows every 15 s of silence, and a slow subscriber's queue holds 64 frames:
// beyond that its events are dropped (SseOverflow::kDropNewest), never the publisher blocked. Ids
// are monotonic per bus. Payloads come in two forms, so a subscriber without ai:execute never sees
// a command (commandRedacted instead). Thread-safe: Publish and Subscribe from any thread; never
// blocks on a subscriber. Borrows the clock, which must outlive the bus and every stream it made.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/core/ports/clock.h"

namespace pulse::server {

// Event kinds (docs/server.md "Events, metrics, health").
inline constexpr std::string_view kEventStreamConnected = "stream.connected";
inline constexpr std::string_view kEventHeartbeat = "heartbeat";
inline constexpr std::string_view kEventFindingCreated = "finding.created";
inline constexpr std::string_view kEventApprovalPending = "approval.pending";
inline constexpr std::string_view kEventActionCompleted = "action.completed";

struct AgentEventBusOptions {
  absl::Duration heartbeat = absl::Seconds(15);
  std::size_t subscriber_buffer = 64;
  // Called with the kind of every published event (metrics); may be empty.
  std::function<void(std::string_view kind)> on_publish;
};

class AgentEventBus {
 public:
  explicit AgentEventBus(const core::Clock& clock, AgentEventBusOptions options = {});
  AgentEventBus(const AgentEventBus&) = delete;
  AgentEventBus& operator=(const AgentEventBus&) = delete;

  // A new subscriber stream with stream.connected queued. `redact_commands`: the subscriber
  // lacks ai:execute and gets the redacted payloads. nullptr once Close() was called.
  std::shared_ptr<adapters::http::SseStream> Subscribe(bool redact_commands);

  // Sends one event to every live subscriber. `payload_json` and `redacted_payload_json` are
  // JSON objects (the same text when there is nothing to redact). Returns the event's id.
  std::uint64_t Publish(std::string_view kind, std::string_view payload_json,
                        std::string_view redacted_payload_json);

  // Ends every subscriber stream cleanly and refuses new subscribers (server shutdown).
  void Close();

  std::size_t subscribers() const;
  // Events published so far.
  std::uint64_t published() const { return next_id_.load() - 1; }

  // {kind, id, at, payload?} as the data of one frame.
  static std::string EventJson(std::string_view kind, std::uint64_t id, absl::Time at,
                               std::string_view payload_json);

 private:
  struct Subscriber {
    std::weak_ptr<adapters::http::SseStream> stream;
    bool redact_commands = false;
  };

  const core::Clock& clock_;
  const AgentEventBusOptions options_;
  std::atomic<std::uint64_t> next_id_{1};
  mutable absl::Mutex mu_;
  std::vector<Subscriber> subscribers_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pulse::server

// PatrolStreamHub: the broadcaster behind GET /api/ai/patrol/stream (docs/patrol.md "The Patrol
// stream"). It hears a run start and end (the stored run records, through an observed
// PatrolRunStore), the phases and Watch-pass events of a run (core::PatrolObserver) and every
// finding change (a write that appended a lifecycle event, through an observed FindingStore),
// numbers each event (seq, monotonic per process), keeps the newest in a bounded replay buffer
// and queues it on every subscriber as `id: <seq>\ndata: <PatrolStreamEvent>\n\n`.
// A subscriber gets `: connected` first and `: ping <unix seconds>` after every 15 s of silence.
// With a Last-Event-ID still in the buffer it gets the events after it; otherwise (no id, an id
// that fell out of the buffer or that this process never issued) a `snapshot` event: the runs in
// progress and the buffer's bounds, with resync_reason late_joiner or stale_last_event_id.
// A subscriber too slow to take its queue is cut off (it resumes with its Last-Event-ID), so no
// stream ever has a hole it does not know about.
// Thread-safe: every method from any thread; never blocks on a subscriber. Borrows the clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/patrol_observer.h"

namespace pulse::server {

// Event types (docs/patrol.md).
inline constexpr std::string_view kPatrolEventSnapshot = "snapshot";
inline constexpr std::string_view kPatrolEventStart = "start";
inline constexpr std::string_view kPatrolEventPhase = "phase";
inline constexpr std::string_view kPatrolEventContent = "content";
inline constexpr std::string_view kPatrolEventToolStart = "tool_start";
inline constexpr std::string_view kPatrolEventToolEnd = "tool_end";
inline constexpr std::string_view kPatrolEventError = "error";
inline constexpr std::string_view kPatrolEventComplete = "complete";
inline constexpr std::string_view kPatrolEventFinding = "finding";
// Why a subscriber got a snapshot instead of a replay.
inline constexpr std::string_view kResyncLateJoiner = "late_joiner";
inline constexpr std::string_view kResyncStaleLastEventId = "stale_last_event_id";

struct PatrolStreamOptions {
  absl::Duration heartbeat = absl::Seconds(15);
  // The replay buffer: at most this many events and this many bytes of event JSON.
  std::size_t replay_events = 1024;
  std::size_t replay_bytes = 512 * 1024;
  // Frames one subscriber may have queued; one more cuts it off. A replay is one frame.
  std::size_t subscriber_buffer = 512;
  // tool_input, tool_output, content and error text longer than this are cut
  // (content_truncated:true).
  std::size_t max_text_bytes = 2048;
};

class PatrolStreamHub final : public core::PatrolObserver {
 public:
  explicit PatrolStreamHub(const core::Clock& clock, PatrolStreamOptions options = {});
  PatrolStreamHub(const PatrolStreamHub&) = delete;
  PatrolStreamHub& operator=(const PatrolStreamHub&) = delete;

  // A new subscriber stream, its first frames queued (see above). `last_event_id`: the
  // client's Last-Event-ID, nullopt when it sent none. nullptr once Close() was called.
  std::shared_ptr<adapters::http::SseStream> Subscribe(std::optional<std::uint64_t> last_event_id);

  // A run record was stored: status running is a `start`, any other a `complete`.
  void OnRunStored(const core::PatrolRunRecord& record);
  // A finding was written; `created` when it is new. Published as a `finding` event when the
  // write appended a lifecycle event (a re-detection heartbeat appends none).
  void OnFindingWritten(const core::Finding& finding, bool created);

  // core::PatrolObserver
  void OnPhase(std::string_view run_id, std::string_view phase) override;
  void OnModelEvent(std::string_view run_id, const core::LoopEvent& event) override;

  // Ends every subscriber stream cleanly and refuses new subscribers (server shutdown).
  void Close();

  std::size_t subscribers() const;
  // The seq of the newest event (0 before the first).
  std::uint64_t last_seq() const;

 private:
  struct Subscriber {
    std::weak_ptr<adapters::http::SseStream> stream;
  };
  struct Buffered {
    std::uint64_t seq = 0;
    std::string frame;  // FormatSseRecord(seq, json)
    std::size_t json_bytes = 0;
  };
  struct RunningRun {
    std::string trigger;
    absl::Time started_at;
    std::string phase;
  };
  // Writes the common head of an event ({type, seq, ts_ms, run_id?}) through `fill`, then
  // buffers and fans it out; all under mu_ so seq order is queue order on every subscriber.
  template <typename Fill>
  void Publish(std::string_view type, std::string_view run_id, Fill fill) ABSL_LOCKS_EXCLUDED(mu_);
  std::string SnapshotJson(std::string_view reason) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const core::Clock& clock_;
  const PatrolStreamOptions options_;
  mutable absl::Mutex mu_;
  std::uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  std::deque<Buffered> buffer_ ABSL_GUARDED_BY(mu_);
  std::size_t buffer_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Subscriber> subscribers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, RunningRun> running_ ABSL_GUARDED_BY(mu_);
  // Lifecycle events already published ("<finding id>|<at>|<type>"), newest last, bounded: a
  // heartbeat write carries the last one again and must not repeat it.
  std::deque<std::string> recent_changes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> recent_set_ ABSL_GUARDED_BY(mu_);  // the same keys
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pulse::server

// SseStream: one server-sent-event stream between a producer (the chat loop's event sink, the
// agent event broadcaster) and the HTTP connection that writes it. The producer queues frames
// and never blocks. A connection either waits on a condition variable for frames or the next
// heartbeat (Next, one thread per stream), or is event-driven: it registers a wake-up callback
// (SetWakeup), drains with the non-blocking TryNext when woken and writes heartbeats from its
// own timer (HeartbeatFrame); an idle stream costs no CPU either way. When the client goes away (a
// write fails), the server stops, or a slow client overflows the queue, the stream is cancelled:
// Send returns false, cancelled() turns true and the shared cancel flag is raised, so the producer
// is released. Thread-safe; shared by producer and server through std::shared_ptr.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pulse::adapters::http {

// What a full queue does with one more frame.
enum class SseOverflow {
  kDropNewest,  // drop the frame and count it (agent events: a slow subscriber misses some)
  kCancel,      // cancel the stream (chat: a transcript with holes would mislead)
};

struct SseOptions {
  // A comment frame is written when nothing else was for this long; it keeps proxies from
  // timing the stream out and is how a vanished client is noticed on an idle stream.
  absl::Duration heartbeat = absl::Seconds(15);
  std::string heartbeat_comment = "heartbeat";  // written as ": heartbeat\n\n"
  // When set, called on the connection thread for each heartbeat instead, returning the whole
  // frame (e.g. FormatSseEvent("heartbeat", ...) for the agent event stream).
  std::function<std::string()> heartbeat_frame;
  std::size_t max_queued_frames = 256;
  SseOverflow overflow = SseOverflow::kCancel;
};

// Frame text. Data with line breaks becomes one "data:" line per line (CR, LF and CRLF all
// break a line), as the SSE grammar requires.
std::string FormatSseData(std::string_view data);
// "event: <name>\n" + optional "id: <id>\n" + the data lines. The name must be 1..64 bytes
// of [A-Za-z0-9._-]; nullopt otherwise.
std::optional<std::string> FormatSseEvent(std::string_view event, std::string_view data,
                                          std::optional<std::uint64_t> id = std::nullopt);
// ": <text>\n\n"; line breaks in `text` become spaces.
std::string FormatSseComment(std::string_view text);
// "id: <id>\n" + the data lines: an unnamed event a client can resume after (Last-Event-ID).
std::string FormatSseRecord(std::uint64_t id, std::string_view data);

class SseStream {
 public:
  static std::shared_ptr<SseStream> Create(SseOptions options = {});

  SseStream(const SseStream&) = delete;
  SseStream& operator=(const SseStream&) = delete;

  // ---- producer side (any thread; never blocks) ----

  // Queues "data: <data>\n\n". False when the stream no longer accepts frames (closed or
  // cancelled) or the frame was dropped by SseOverflow::kDropNewest.
  bool Send(std::string_view data);
  // Queues a named event (FormatSseEvent). Also false for an invalid event name.
  bool SendEvent(std::string_view event, std::string_view data,
                 std::optional<std::uint64_t> id = std::nullopt);
  // Queues frames already formatted (FormatSse*; several may be one string, which counts as
  // one queued frame). False as for Send.
  bool SendFrame(std::string frame);
  // No more frames: the stream ends once the queued ones are written.
  void Close();

  // True once the client went away, the server stopped, or the queue overflowed with
  // SseOverflow::kCancel. A producer stops working for the stream then.
  bool cancelled() const;
  // The same fact as a flag a long-running producer can poll (e.g. LlmRequest::cancelled).
  std::shared_ptr<const std::atomic<bool>> cancel_flag() const { return cancel_flag_; }
  // Waits until cancelled() or the timeout; returns cancelled().
  bool WaitForCancel(absl::Duration timeout);
  // True once the connection is done with the stream (ended cleanly or cancelled).
  bool finished() const;
  // Frames dropped by SseOverflow::kDropNewest.
  std::uint64_t dropped() const;

  // ---- connection side (the server) ----

  enum class Pull {
    kWrite,  // `out` holds frames or a heartbeat to write
    kEnd,    // closed (or the server is stopping) and drained: finish the response cleanly
    kAbort,  // cancelled: drop the connection
  };
  // Waits for queued frames, the end, a cancellation or the heartbeat deadline, whichever
  // comes first; never longer than the heartbeat interval.
  Pull Next(std::string& out);

  // ---- event-driven connection side (an event loop; never blocks) ----

  // `wake` is called after every change the connection must act on — frames queued, Close,
  // Abort, Shutdown, MarkFinished — on the thread that made it and never while the stream's
  // lock is held (so it may call TryNext). It should only schedule work (post to the
  // connection's executor). Called once at once when something is already pending. Replaces
  // the previous callback; an empty one stops the calls (a call already under way may still
  // finish after SetWakeup returns).
  void SetWakeup(std::function<void()> wake) ABSL_LOCKS_EXCLUDED(mu_);
  // What Next would return without waiting: every queued frame (kWrite), kEnd once closed or
  // stopping and drained, kAbort once cancelled by Abort or overflow; nullopt when there is
  // nothing to do yet (the connection waits for the wake-up or its heartbeat timer).
  std::optional<Pull> TryNext(std::string& out) ABSL_LOCKS_EXCLUDED(mu_);
  // The heartbeat frame to write (SseOptions::heartbeat_frame or the comment) and its interval.
  std::string HeartbeatFrame() const;
  absl::Duration heartbeat_interval() const { return options_.heartbeat; }
  // The client is gone (a write failed) or the stream could not be served: cancel.
  void Abort();
  // The server is stopping: cancel the producer, but let the connection write what is queued
  // and end the response cleanly.
  void Shutdown();
  // The connection released the stream; `clean` is false when it ended by an error. A stream
  // its producer had not closed counts as cancelled either way, so the producer lets go.
  void MarkFinished(bool clean);

 private:
  explicit SseStream(SseOptions options);
  bool Enqueue(std::string frame) ABSL_LOCKS_EXCLUDED(mu_);
  // Signals waiters and calls the wake-up callback; call without mu_ held.
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<Pull> PendingLocked(std::string& out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RaiseCancel() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SseOptions options_;
  const std::shared_ptr<std::atomic<bool>> cancel_flag_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<std::string> frames_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;    // producer said no more
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;  // server shutdown: drain, then end
  bool aborted_ ABSL_GUARDED_BY(mu_) = false;   // drop the connection
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // the connection is done with the stream
  std::uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<const std::function<void()>> wake_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::adapters::http

// ChatRuns: the Assistant runs in flight (chat, resume, question answers). Each run works on a
// thread of its own, never on the HTTP worker that accepted it, and streams its events to an
// SSE stream through ChatEventSink. A run is cancelled (RunRequest::cancelled, checked by the
// loop and by the provider transport) when its client goes away (the stream's cancellation is
// propagated by a watcher every kCancelPollInterval), when POST /api/ai/sessions/{id}/abort
// names its session, or when the server shuts down; the loop then ends it with `error` and
// `done`. Shutdown refuses new runs, cancels the rest and waits for them.
// Thread-safe. The destructor shuts down (unbounded wait) and joins every thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/adapters/server/server_metrics.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/ports/event_sink.h"

namespace pulse::server {

inline constexpr absl::Duration kCancelPollInterval = absl::Milliseconds(100);

// One run in flight.
class ChatRun {
 public:
  explicit ChatRun(std::shared_ptr<adapters::http::SseStream> stream, std::string session_id)
      : stream_(std::move(stream)), session_id_(std::move(session_id)) {}

  const std::shared_ptr<std::atomic<bool>>& cancel_flag() const { return cancel_; }
  adapters::http::SseStream& stream() const { return *stream_; }
  void Cancel() { cancel_->store(true, std::memory_order_release); }
  bool cancelled() const { return cancel_->load(std::memory_order_acquire); }

  std::string session_id() const;
  // The session the run turned out to work on (a new chat learns it from `session`).
  void set_session_id(std::string id);

 private:
  friend class ChatRuns;

  const std::shared_ptr<adapters::http::SseStream> stream_;
  const std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  mutable absl::Mutex mu_;
  std::string session_id_ ABSL_GUARDED_BY(mu_);
  // Both guarded by ChatRuns::mu_ (which the annotations cannot name from here).
  std::thread thread_;
  bool done_ = false;
};

class ChatRuns {
 public:
  ChatRuns();
  ~ChatRuns();
  ChatRuns(const ChatRuns&) = delete;
  ChatRuns& operator=(const ChatRuns&) = delete;

  // Runs `body` on a new thread for a run streaming to `stream`, known as `session_id` ("" for
  // a chat that has no session yet). The stream is closed when `body` returns. False, with
  // nothing started, once Shutdown began or when no thread can be started.
  bool Start(std::shared_ptr<adapters::http::SseStream> stream, std::string session_id,
             std::function<void(ChatRun&)> body);

  // Cancels the run working on `session_id` in this process. False when there is none.
  bool Abort(std::string_view session_id);
  bool IsRunning(std::string_view session_id) const;
  std::size_t active() const;

  // Refuses new runs, cancels every run and waits up to `grace` for all of them to end.
  // True when they all ended (their threads are joined); false when some are still running.
  bool Shutdown(absl::Duration grace);

 private:
  void Watch() ABSL_LOCKS_EXCLUDED(mu_);
  void ReapLocked(std::vector<std::thread>& finished) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::vector<std::shared_ptr<ChatRun>> runs_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;  // no new runs
  bool stop_watcher_ ABSL_GUARDED_BY(mu_) = false;
  std::thread watcher_;
};

// The EventSink of one run: frames each event as `data: {"type":...,"data":...}` on the run's
// stream, follows the metrics, and learns the session id from `session`. A stream that is gone
// drops the frames (the transcript is persisted independently).
class ChatEventSink final : public core::EventSink {
 public:
  ChatEventSink(ChatRun& run, ServerMetrics& metrics, TokenBaseline baseline = {})
      : run_(run), metrics_(metrics, baseline) {}

  void Emit(const core::LoopEvent& event) override;

  // True once `done` went out (the loop always ends with it).
  bool saw_done() const { return saw_done_; }
  // Emits `error` {code, reason, message} and `done` {outcome: failed} itself: for a run the
  // engine could not even start streaming (never after saw_done()).
  void EmitEngineFailure(std::string_view reason, std::string_view message);

 private:
  ChatRun& run_;
  RunMetrics metrics_;
  bool saw_done_ = false;
};

}  // namespace pulse::server
